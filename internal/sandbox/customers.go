package sandbox

import (
	"net/http"
	"strings"
)

// defaultCurrency is the currency of a record that names none (SPEC "Conventions").
const defaultCurrency = "GHS"

// customerStatuses are the states of a customer (SPEC "States and transitions › Customer").
var customerStatuses = []string{"ACTIVE", "INACTIVE", "BLOCKED"}

// customer is a customer record as the wire shows it (SPEC "Customer").
type customer struct {
	ID          string         `json:"id"`
	ExternalID  *string        `json:"externalId"`
	Email       string         `json:"email"`
	Name        string         `json:"name"`
	Phone       *string        `json:"phone"`
	Description *string        `json:"description"`
	Metadata    map[string]any `json:"metadata"`
	Status      string         `json:"status"`
	Currency    string         `json:"currency"`
	CreatedAt   timestamp      `json:"createdAt"`
	UpdatedAt   timestamp      `json:"updatedAt"`

	emailKey string // lower-cased email: uniqueness and the list filter ignore case
}

// customerSummary is a customer as a list shows it.
type customerSummary struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	Phone     *string   `json:"phone"`
	Status    string    `json:"status"`
	CreatedAt timestamp `json:"createdAt"`
}

func (c *customer) summary() customerSummary {
	return customerSummary{ID: c.ID, Email: c.Email, Name: c.Name, Phone: c.Phone, Status: c.Status, CreatedAt: c.CreatedAt}
}

// customerStore is the customers of the one business the sandbox serves.
type customerStore struct {
	table   table[customer]
	byEmail map[string]string // emailKey -> id; an email is unique per business
}

func customerRoutes(s *Server) []route {
	return []route{
		{pattern: "POST /v1/customers", auth: authBilling, scope: ScopeCustomersWrite, handler: s.createCustomer},
		{pattern: "GET /v1/customers", auth: authBilling, scope: ScopeCustomersRead, handler: s.listCustomers},
		{pattern: "GET /v1/customers/{id}", auth: authBilling, scope: ScopeCustomersRead, handler: s.getCustomer},
		{pattern: "PATCH /v1/customers/{id}", auth: authBilling, scope: ScopeCustomersWrite, handler: s.updateCustomer},
	}
}

func (s *Server) createCustomer(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("email", "name")
	email, _ := f.email("email")
	name, _ := f.optionalString("name")
	c := &customer{Email: email, Name: name, emailKey: strings.ToLower(email), Status: "ACTIVE", Currency: defaultCurrency}
	nullableField(f, "externalId", f.optionalString).applyTo(&c.ExternalID)
	nullableField(f, "phone", f.phone).applyTo(&c.Phone)
	nullableField(f, "description", f.optionalString).applyTo(&c.Description)
	if currency, ok := f.currency("currency"); ok {
		c.Currency = currency
	}
	c.Metadata, _ = f.metadata("metadata")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	created, err := s.insertCustomer(c)
	writeResult(w, http.StatusCreated, created, err)
}

func (s *Server) insertCustomer(c *customer) (customer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.customers.byEmail[c.emailKey]; taken {
		return customer{}, conflictError("a customer with email %s already exists", c.Email)
	}
	c.ID = newID("cust_")
	c.CreatedAt = timestamp{s.Now()}
	c.UpdatedAt = c.CreatedAt
	if s.customers.byEmail == nil {
		s.customers.byEmail = make(map[string]string)
	}
	s.customers.byEmail[c.emailKey] = c.ID
	s.customers.table.insert(c.ID, c)
	return *c, nil
}

func (s *Server) getCustomer(w http.ResponseWriter, r *http.Request) {
	c, err := s.withCustomer(r.PathValue("id"), nil)
	writeResult(w, http.StatusOK, c, err)
}

func (s *Server) updateCustomer(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	name, hasName := f.nonEmptyString("name")
	phone := nullableField(f, "phone", f.phone)
	description := nullableField(f, "description", f.optionalString)
	status, hasStatus := f.enum("status", customerStatuses...)
	metadata, hasMetadata := f.metadata("metadata")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	updated, err := s.withCustomer(r.PathValue("id"), func(c *customer) {
		if hasName {
			c.Name = name
		}
		phone.applyTo(&c.Phone)
		description.applyTo(&c.Description)
		if hasStatus {
			c.Status = status
		}
		if hasMetadata {
			c.Metadata = metadata // replaced wholesale, or cleared by null
		}
		c.UpdatedAt = timestamp{s.Now()}
	})
	writeResult(w, http.StatusOK, updated, err)
}

// withCustomer runs change (when not nil) on the customer id under the lock
// and returns a copy of the result.
func (s *Server) withCustomer(id string, change func(*customer)) (customer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.customers.table.get(id)
	if !ok {
		return customer{}, notFoundError("customer", id)
	}
	if change != nil {
		change(c)
	}
	return *c, nil
}

func (s *Server) listCustomers(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	pq, err := parsePageQuery(q)
	if err != nil {
		writeError(w, err)
		return
	}
	status, err := queryEnum(q, "status", customerStatuses...)
	if err != nil {
		writeError(w, err)
		return
	}
	emailPart := strings.ToLower(q.Get("email"))
	keep := func(c *customer) bool {
		return (status == "" || c.Status == status) && strings.Contains(c.emailKey, emailPart)
	}
	s.mu.Lock()
	p, err := listPage(&s.customers.table, pq, keep, (*customer).summary)
	s.mu.Unlock()
	writeResult(w, http.StatusOK, p, err)
}
