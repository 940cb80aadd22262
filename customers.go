package billing

import (
	"context"
	"iter"
	"time"
)

// CustomersService registers customers and keeps their details.
type CustomersService service

// CustomerStatus is the standing of a customer.
type CustomerStatus string

// The customer statuses. A new customer is ACTIVE; Update can set any of them.
const (
	CustomerStatusActive   CustomerStatus = "ACTIVE"
	CustomerStatusInactive CustomerStatus = "INACTIVE"
	CustomerStatusBlocked  CustomerStatus = "BLOCKED"
)

var customerStatuses = []CustomerStatus{CustomerStatusActive, CustomerStatusInactive, CustomerStatusBlocked}

// Customer is a customer record.
type Customer struct {
	ID          string         `json:"id"`
	ExternalID  string         `json:"externalId,omitempty"`
	Email       string         `json:"email"`
	Name        string         `json:"name"`
	Phone       string         `json:"phone,omitempty"`
	Description string         `json:"description,omitempty"`
	Metadata    Metadata       `json:"metadata,omitempty"`
	Status      CustomerStatus `json:"status"`
	Currency    string         `json:"currency,omitempty"`
	CreatedAt   time.Time      `json:"createdAt,omitzero"`
	UpdatedAt   time.Time      `json:"updatedAt,omitzero"`
}

// CustomerSummary is a customer as lists return it.
type CustomerSummary struct {
	ID        string         `json:"id"`
	Email     string         `json:"email"`
	Name      string         `json:"name"`
	Phone     string         `json:"phone,omitempty"`
	Status    CustomerStatus `json:"status"`
	CreatedAt time.Time      `json:"createdAt,omitzero"`
}

// CustomerCreateParams registers a customer. Email and Name are required; the email must
// be unique within the business.
type CustomerCreateParams struct {
	Email string `json:"email"`
	Name  string `json:"name"`
	// Phone in international form; it is normalised ("+233 24 123 4567" is sent as
	// "+233241234567").
	Phone       string   `json:"phone,omitempty"`
	ExternalID  string   `json:"externalId,omitempty"`
	Description string   `json:"description,omitempty"`
	Currency    string   `json:"currency,omitempty"`
	Metadata    Metadata `json:"metadata,omitzero"`
}

func (p *CustomerCreateParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return firstError(
		required("email", p.Email),
		emailShape("email", p.Email),
		required("name", p.Name),
		currencyCode("currency", p.Currency),
		p.Metadata.validate("metadata"),
	)
}

// CustomerUpdateParams changes a customer. Every field is optional: a zero field is left
// as it is. Phone and Description take Null to clear them. Metadata, when given, replaces
// the stored metadata wholesale (an empty non-nil map clears it).
type CustomerUpdateParams struct {
	Name        string           `json:"name,omitempty"`
	Phone       Nullable[string] `json:"phone,omitzero"`
	Description Nullable[string] `json:"description,omitzero"`
	Status      CustomerStatus   `json:"status,omitempty"`
	Metadata    Metadata         `json:"metadata,omitzero"`
}

func (p *CustomerUpdateParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	var phone error
	if v, ok := p.Phone.Get(); ok && v == "" {
		phone = invalid("phone", "must not be empty: use Null to clear the phone")
	}
	return firstError(
		notBlank("name", p.Name),
		phone,
		oneOf("status", p.Status, customerStatuses...),
		p.Metadata.validate("metadata"),
	)
}

// CustomerListParams filters a customer list.
type CustomerListParams struct {
	ListParams
	// Email matches customers whose email contains it, ignoring case.
	Email string `url:"email,omitempty"`
	// Status keeps customers in that status.
	Status CustomerStatus `url:"status,omitempty"`
}

func (p *CustomerListParams) validate() error {
	return firstError(p.ListParams.validate(), oneOf("status", p.Status, customerStatuses...))
}

// Create registers a customer.
func (s *CustomersService) Create(ctx context.Context, p *CustomerCreateParams) (*Customer, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	body := *p
	if err := internationalPhone("phone", &body.Phone); err != nil {
		return nil, err
	}
	return send[Customer](ctx, s.client, epCustomerCreate.op(&body))
}

// Get returns the customer with the given id.
func (s *CustomersService) Get(ctx context.Context, id string) (*Customer, error) {
	return send[Customer](ctx, s.client, epCustomerGet.op(nil, seg("id", id)))
}

// Update changes the fields of a customer that p sets, and returns the new record.
func (s *CustomersService) Update(ctx context.Context, id string, p *CustomerUpdateParams) (*Customer, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	body := *p
	if phone, ok := body.Phone.Get(); ok {
		if err := internationalPhone("phone", &phone); err != nil {
			return nil, err
		}
		body.Phone = Value(phone)
	}
	return send[Customer](ctx, s.client, epCustomerUpdate.op(&body, seg("id", id)))
}

// ListPage returns one page of customers.
func (s *CustomersService) ListPage(ctx context.Context, p *CustomerListParams) (*Page[CustomerSummary], error) {
	if p == nil {
		p = &CustomerListParams{}
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return send[Page[CustomerSummary]](ctx, s.client, epCustomerList.op(p))
}

// List returns every customer matching p, fetching pages lazily as the loop advances.
// Breaking out of the loop stops the fetching. p is not modified.
func (s *CustomersService) List(ctx context.Context, p *CustomerListParams) iter.Seq2[*CustomerSummary, error] {
	return listAll(ctx, p, s.ListPage)
}

// internationalPhone normalises an optional phone number in place to "+" and its
// international digits.
func internationalPhone(field string, phone *string) error {
	if *phone == "" {
		return nil
	}
	digits, err := normalizePhone(field, *phone)
	if err != nil {
		return err
	}
	if p := *phone; len(p) == len(digits)+1 && p[0] == '+' && p[1:] == digits {
		return nil // written as it is sent already
	}
	*phone = "+" + digits
	return nil
}
