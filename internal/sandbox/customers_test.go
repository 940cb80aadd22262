package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// customerJSON decodes a customer as a client would see it.
type customerJSON struct {
	ID          string         `json:"id"`
	ExternalID  *string        `json:"externalId"`
	Email       string         `json:"email"`
	Name        string         `json:"name"`
	Phone       *string        `json:"phone"`
	Description *string        `json:"description"`
	Metadata    map[string]any `json:"metadata"`
	Status      string         `json:"status"`
	Currency    string         `json:"currency"`
	CreatedAt   string         `json:"createdAt"`
	UpdatedAt   string         `json:"updatedAt"`
}

// createCustomer creates a customer through the API and returns it.
func createCustomer(tb testing.TB, s *Server, body map[string]any) customerJSON {
	tb.Helper()
	return decode[customerJSON](tb, serve(tb, s, http.MethodPost, "/v1/customers", basicHeader, body), http.StatusCreated).Data
}

func TestCreateCustomer(t *testing.T) {
	s := newTestServer(t, Config{})
	c := createCustomer(t, s, map[string]any{
		"email": "Ada@Example.com", "name": "Ada Lovelace", "phone": "+233241234567",
		"externalId": "crm-42", "description": "VIP", "currency": "usd",
		"metadata": map[string]any{"tier": "gold", "seats": 3},
	})
	assert.Regexp(t, `^cust_[0-9a-f]{24}$`, c.ID)
	assert.Equal(t, "Ada@Example.com", c.Email)
	assert.Equal(t, "Ada Lovelace", c.Name)
	assert.Equal(t, "+233241234567", *c.Phone)
	assert.Equal(t, "crm-42", *c.ExternalID)
	assert.Equal(t, "VIP", *c.Description)
	assert.Equal(t, "USD", c.Currency)
	assert.Equal(t, map[string]any{"tier": "gold", "seats": float64(3)}, c.Metadata)
	assert.Equal(t, "ACTIVE", c.Status)
	assert.Equal(t, "2025-01-02T03:04:05.000Z", c.CreatedAt)
	assert.Equal(t, c.CreatedAt, c.UpdatedAt)

	minimal := createCustomer(t, s, map[string]any{"email": "grace@example.com", "name": "Grace"})
	assert.Equal(t, "GHS", minimal.Currency, "the default currency")
	assert.Nil(t, minimal.Phone)
	assert.Nil(t, minimal.Description)
	assert.Nil(t, minimal.ExternalID)
	assert.Nil(t, minimal.Metadata)

	rec := serve(t, s, http.MethodPost, "/v1/customers", basicHeader, `{"email":"nulls@example.com","name":"N","phone":null,"description":null,"metadata":null}`)
	assert.Nil(t, decode[customerJSON](t, rec, http.StatusCreated).Data.Phone, "null is accepted on create")

	raw := serve(t, s, http.MethodGet, "/v1/customers/"+minimal.ID, secretHeader, nil).Body.String()
	assert.Contains(t, raw, `"phone":null`, "unset fields are written as null")
}

func TestCreateCustomerRules(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, tc := range []struct {
		name, body, field, message string
	}{
		{"email missing", `{"name":"A"}`, "email", "email is required"},
		{"email blank", `{"email":"","name":"A"}`, "email", "email is required"},
		{"email shape", `{"email":"not-an-email","name":"A"}`, "email", "email must be an email address"},
		{"email type", `{"email":5,"name":"A"}`, "email", "email must be a string"},
		{"name missing", `{"email":"a@example.com"}`, "name", "name is required"},
		{"name null", `{"email":"a@example.com","name":null}`, "name", "name is required"},
		{"phone shape", `{"email":"a@example.com","name":"A","phone":"024 123"}`, "phone", "phone must be an international phone number"},
		{"currency shape", `{"email":"a@example.com","name":"A","currency":"cedi"}`, "currency", "currency must be a 3-letter ISO 4217 currency code"},
		{"description type", `{"email":"a@example.com","name":"A","description":7}`, "description", "description must be a string"},
		{"externalId type", `{"email":"a@example.com","name":"A","externalId":7}`, "externalId", "externalId must be a string"},
		{"metadata nested", `{"email":"a@example.com","name":"A","metadata":{"a":{"b":1}}}`, "metadata", "metadata must be flat"},
		{"metadata array", `{"email":"a@example.com","name":"A","metadata":[]}`, "metadata", "metadata must be an object"},
		{"not an object", `[]`, "", "request body must be a JSON object"},
		{"malformed", `{"email":`, "", "request body is not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(t, s, http.MethodPost, "/v1/customers", basicHeader, tc.body)
			requireError(t, rec, http.StatusBadRequest, CodeValidation, tc.field, tc.message)
		})
	}
	list := decode[page[customerJSON]](t, serve(t, s, http.MethodGet, "/v1/customers", basicHeader, nil), 200).Data
	assert.Empty(t, list.Items, "nothing was written")
}

func TestCustomerEmailIsUniqueIgnoringCase(t *testing.T) {
	s := newTestServer(t, Config{})
	createCustomer(t, s, map[string]any{"email": "ada@example.com", "name": "Ada"})
	rec := serve(t, s, http.MethodPost, "/v1/customers", basicHeader, map[string]any{"email": "ADA@example.COM", "name": "Other"})
	requireError(t, rec, http.StatusConflict, CodeConflict, "", "a customer with email ADA@example.COM already exists")
}

func TestGetCustomer(t *testing.T) {
	s := newTestServer(t, Config{})
	created := createCustomer(t, s, map[string]any{"email": "ada@example.com", "name": "Ada"})
	got := decode[customerJSON](t, serve(t, s, http.MethodGet, "/v1/customers/"+created.ID, secretHeader, nil), 200)
	assert.True(t, got.Success)
	assert.Equal(t, created, got.Data)

	requireError(t, serve(t, s, http.MethodGet, "/v1/customers/cust_missing", basicHeader, nil), 404, CodeNotFound, "", `customer "cust_missing" not found`)
}

func TestUpdateCustomer(t *testing.T) {
	s := newTestServer(t, Config{})
	c := createCustomer(t, s, map[string]any{
		"email": "ada@example.com", "name": "Ada", "phone": "+233241234567", "description": "note",
		"metadata": map[string]any{"a": "1", "b": "2"},
	})
	s.Advance(90 * time.Second)
	patch := func(body string) customerJSON {
		t.Helper()
		return decode[customerJSON](t, serve(t, s, http.MethodPatch, "/v1/customers/"+c.ID, basicHeader, body), 200).Data
	}

	u := patch(`{"name":"Ada L.","status":"BLOCKED","metadata":{"c":"3"}}`)
	assert.Equal(t, "Ada L.", u.Name)
	assert.Equal(t, "BLOCKED", u.Status)
	assert.Equal(t, map[string]any{"c": "3"}, u.Metadata, "metadata is replaced wholesale")
	assert.Equal(t, "+233241234567", *u.Phone, "absent fields are kept")
	assert.Equal(t, "note", *u.Description)
	assert.Equal(t, c.CreatedAt, u.CreatedAt)
	assert.Equal(t, "2025-01-02T03:05:35.000Z", u.UpdatedAt, "updatedAt moves")

	u = patch(`{"phone":null,"description":null,"metadata":null}`)
	assert.Nil(t, u.Phone, "null clears phone")
	assert.Nil(t, u.Description, "null clears description")
	assert.Nil(t, u.Metadata, "null clears metadata")
	assert.Equal(t, "Ada L.", u.Name)

	u = patch(`{"phone":"233201234567","description":"again","status":"INACTIVE"}`)
	assert.Equal(t, "233201234567", *u.Phone)
	assert.Equal(t, "again", *u.Description)
	assert.Equal(t, "INACTIVE", u.Status)

	u = patch(`{}`)
	assert.Equal(t, "INACTIVE", u.Status, "an empty update changes nothing but updatedAt")
	assert.Equal(t, "ada@example.com", u.Email)

	got := decode[customerJSON](t, serve(t, s, http.MethodGet, "/v1/customers/"+c.ID, basicHeader, nil), 200).Data
	assert.Equal(t, u, got, "the update is stored")
}

func TestUpdateCustomerRules(t *testing.T) {
	s := newTestServer(t, Config{})
	c := createCustomer(t, s, map[string]any{"email": "ada@example.com", "name": "Ada"})
	for _, tc := range []struct {
		name, body, field, message string
	}{
		{"name blank", `{"name":""}`, "name", "name must not be empty"},
		{"name null", `{"name":null}`, "name", "name must not be empty"},
		{"status", `{"status":"DELETED"}`, "status", "status must be one of ACTIVE, INACTIVE, BLOCKED"},
		{"phone", `{"phone":"abc"}`, "phone", "phone must be an international phone number"},
		{"metadata", `{"metadata":{"a":[1]}}`, "metadata", "metadata must be flat"},
		{"empty body", ``, "", "request body must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(t, s, http.MethodPatch, "/v1/customers/"+c.ID, basicHeader, tc.body)
			requireError(t, rec, http.StatusBadRequest, CodeValidation, tc.field, tc.message)
		})
	}
	requireError(t, serve(t, s, http.MethodPatch, "/v1/customers/cust_missing", basicHeader, `{"name":"x"}`), 404, CodeNotFound, "", "not found")
	got := decode[customerJSON](t, serve(t, s, http.MethodGet, "/v1/customers/"+c.ID, basicHeader, nil), 200).Data
	assert.Equal(t, c, got, "refused updates write nothing")
}

// listAll walks a customer list page by page and returns every item.
func listAll(t *testing.T, s *Server, query url.Values) []map[string]any {
	t.Helper()
	var all []map[string]any
	for {
		rec := serve(t, s, http.MethodGet, "/v1/customers?"+query.Encode(), basicHeader, nil)
		p := decode[page[map[string]any]](t, rec, 200).Data
		all = append(all, p.Items...)
		if !p.HasMore {
			assert.Empty(t, p.NextCursor)
			return all
		}
		query.Set("cursor", p.NextCursor)
	}
}

func TestListCustomersPagesThroughEachOnce(t *testing.T) {
	s := newTestServer(t, Config{})
	for i := range 250 {
		createCustomer(t, s, map[string]any{"email": fmt.Sprintf("c%03d@example.com", i), "name": "C"})
	}
	items := listAll(t, s, url.Values{"limit": {"100"}})
	require.Len(t, items, 250)
	seen := map[string]bool{}
	for i, item := range items {
		assert.Equal(t, fmt.Sprintf("c%03d@example.com", 249-i), item["email"], "newest first")
		seen[item["id"].(string)] = true
	}
	assert.Len(t, seen, 250)

	assert.Len(t, listAll(t, s, url.Values{}), 250, "default limit 20")
	first := decode[page[map[string]any]](t, serve(t, s, http.MethodGet, "/v1/customers", basicHeader, nil), 200).Data
	assert.Len(t, first.Items, 20)
	assert.True(t, first.HasMore)
}

func TestListCustomersShowsTheSummaryFields(t *testing.T) {
	s := newTestServer(t, Config{})
	createCustomer(t, s, map[string]any{"email": "ada@example.com", "name": "Ada", "description": "hidden", "metadata": map[string]any{"k": "v"}})
	items := listAll(t, s, url.Values{})
	require.Len(t, items, 1)
	var keys []string
	for k := range items[0] {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"id", "email", "name", "phone", "status", "createdAt"}, keys)
}

func TestListCustomersFilters(t *testing.T) {
	s := newTestServer(t, Config{})
	for i, email := range []string{"ada@acme.com", "grace@ACME.com", "linus@example.com", "ken@acme.org"} {
		c := createCustomer(t, s, map[string]any{"email": email, "name": "N"})
		if i%2 == 1 {
			serve(t, s, http.MethodPatch, "/v1/customers/"+c.ID, basicHeader, `{"status":"BLOCKED"}`)
		}
	}
	emails := func(query url.Values) []string {
		var out []string
		for _, item := range listAll(t, s, query) {
			out = append(out, item["email"].(string))
		}
		return out
	}
	assert.Equal(t, []string{"grace@ACME.com", "ada@acme.com"}, emails(url.Values{"email": {"Acme.COM"}}), "substring, any case")
	assert.Equal(t, []string{"ken@acme.org", "grace@ACME.com"}, emails(url.Values{"status": {"BLOCKED"}}))
	assert.Equal(t, []string{"grace@ACME.com"}, emails(url.Values{"status": {"BLOCKED"}, "email": {"acme.com"}}))
	assert.Equal(t, []string{"linus@example.com", "ada@acme.com"}, emails(url.Values{"status": {"ACTIVE"}, "limit": {"1"}}), "filters hold across pages")
	assert.Empty(t, emails(url.Values{"email": {"nobody"}}))

	requireError(t, serve(t, s, http.MethodGet, "/v1/customers?status=active", basicHeader, nil), 400, CodeValidation, "status", "status must be one of ACTIVE, INACTIVE, BLOCKED")
	requireError(t, serve(t, s, http.MethodGet, "/v1/customers?limit=101", basicHeader, nil), 400, CodeValidation, "limit", "limit must be an integer from 1 to 100")
	requireError(t, serve(t, s, http.MethodGet, "/v1/customers?cursor=bm9wZQ", basicHeader, nil), 400, CodeValidation, "cursor", "cursor is not valid")
}

func TestCustomersUnderConcurrency(t *testing.T) {
	s := newTestServer(t, Config{})
	const workers, each = 16, 25
	var wg sync.WaitGroup
	ids := make(chan string, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				rec := serve(t, s, http.MethodPost, "/v1/customers", basicHeader, map[string]any{"email": fmt.Sprintf("w%d-%d@example.com", w, i), "name": "N"})
				var env envelope[customerJSON]
				if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &env) != nil {
					t.Errorf("create: %d %s", rec.Code, rec.Body)
					return
				}
				ids <- env.Data.ID
				serve(t, s, http.MethodGet, "/v1/customers?limit=5", basicHeader, nil)
				serve(t, s, http.MethodPatch, "/v1/customers/"+env.Data.ID, basicHeader, `{"status":"INACTIVE"}`)
			}
		}()
	}
	wg.Wait()
	close(ids)
	unique := map[string]bool{}
	for id := range ids {
		unique[id] = true
	}
	assert.Len(t, unique, workers*each)
	assert.Len(t, listAll(t, s, url.Values{"limit": {"100"}, "status": {"INACTIVE"}}), workers*each)
}

func TestDuplicateEmailRaceHasOneWinner(t *testing.T) {
	s := newTestServer(t, Config{})
	const racers = 32
	statuses := make(chan int, racers)
	var wg sync.WaitGroup
	for range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- serve(t, s, http.MethodPost, "/v1/customers", basicHeader, map[string]any{"email": "same@example.com", "name": "N"}).Code
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for status := range statuses {
		count[status]++
	}
	assert.Equal(t, map[int]int{http.StatusCreated: 1, http.StatusConflict: racers - 1}, count)
}
