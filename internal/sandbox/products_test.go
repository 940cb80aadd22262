package sandbox

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// productJSON and priceJSON decode the records as a client would see them.
type productJSON struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Type        string         `json:"type"`
	ImageURL    *string        `json:"imageUrl"`
	Metadata    map[string]any `json:"metadata"`
	Active      bool           `json:"active"`
	Prices      []priceJSON    `json:"prices"`
	CreatedAt   string         `json:"createdAt"`
	UpdatedAt   string         `json:"updatedAt"`
}

type priceJSON struct {
	ID              string         `json:"id"`
	Nickname        *string        `json:"nickname"`
	Currency        string         `json:"currency"`
	UnitAmount      int64          `json:"unitAmount"`
	Scheme          string         `json:"scheme"`
	IsRecurring     bool           `json:"isRecurring"`
	Interval        *string        `json:"interval"`
	IntervalCount   int64          `json:"intervalCount"`
	TrialPeriodDays *int64         `json:"trialPeriodDays"`
	Metadata        map[string]any `json:"metadata"`
	Active          bool           `json:"active"`
	CreatedAt       string         `json:"createdAt"`
}

func createProduct(tb testing.TB, s *Server, body any) productJSON {
	tb.Helper()
	return decode[productJSON](tb, serve(tb, s, http.MethodPost, "/v1/products", basicHeader, body), http.StatusCreated).Data
}

func createPrice(tb testing.TB, s *Server, productID string, body any) priceJSON {
	tb.Helper()
	return decode[priceJSON](tb, serve(tb, s, http.MethodPost, "/v1/products/"+productID+"/prices", basicHeader, body), http.StatusCreated).Data
}

// priceCount is how many prices the catalog holds.
func priceCount(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.products.prices)
}

func TestCreateProduct(t *testing.T) {
	s := newTestServer(t, Config{})
	p := createProduct(t, s, map[string]any{
		"name": "Pro plan", "description": "Everything", "type": "DIGITAL",
		"imageUrl": "https://cdn.example.com/pro.png", "metadata": map[string]any{"tier": "pro"},
	})
	assert.Regexp(t, `^prod_[0-9a-f]{24}$`, p.ID)
	assert.Equal(t, "Pro plan", p.Name)
	assert.Equal(t, "Everything", *p.Description)
	assert.Equal(t, "DIGITAL", p.Type)
	assert.Equal(t, "https://cdn.example.com/pro.png", *p.ImageURL)
	assert.Equal(t, map[string]any{"tier": "pro"}, p.Metadata)
	assert.True(t, p.Active)
	assert.Equal(t, []priceJSON{}, p.Prices)
	assert.Equal(t, "2025-01-02T03:04:05.000Z", p.CreatedAt)
	assert.Equal(t, p.CreatedAt, p.UpdatedAt)

	rec := serve(t, s, http.MethodPost, "/v1/products", secretHeader, `{"name":"Basic"}`)
	assert.Contains(t, rec.Body.String(), `"prices":[]`, "an empty array, not null")
	minimal := decode[productJSON](t, rec, http.StatusCreated).Data
	assert.Equal(t, "SERVICE", minimal.Type, "the default type")
	assert.Nil(t, minimal.Description)
	assert.Nil(t, minimal.ImageURL)
	assert.Nil(t, minimal.Metadata)
}

func TestCreateProductRules(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, tc := range []struct {
		name, body, field, message string
	}{
		{"name missing", `{}`, "name", "name is required"},
		{"name blank", `{"name":"  "}`, "name", "name is required"},
		{"name null", `{"name":null}`, "name", "name is required"},
		{"name type", `{"name":5}`, "name", "name must be a string"},
		{"type enum", `{"name":"A","type":"service"}`, "type", "type must be one of SERVICE, GOOD, DIGITAL"},
		{"imageUrl relative", `{"name":"A","imageUrl":"/img.png"}`, "imageUrl", "imageUrl must be an absolute http or https URL"},
		{"imageUrl scheme", `{"name":"A","imageUrl":"ftp://example.com/a.png"}`, "imageUrl", "imageUrl must be an absolute http or https URL"},
		{"description type", `{"name":"A","description":false}`, "description", "description must be a string"},
		{"metadata nested", `{"name":"A","metadata":{"a":{"b":1}}}`, "metadata", "metadata must be flat"},
		{"not an object", `"A"`, "", "request body must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(t, s, http.MethodPost, "/v1/products", basicHeader, tc.body)
			requireError(t, rec, http.StatusBadRequest, CodeValidation, tc.field, tc.message)
		})
	}
	list := decode[page[productJSON]](t, serve(t, s, http.MethodGet, "/v1/products", basicHeader, nil), 200).Data
	assert.Empty(t, list.Items, "nothing was written")
}

func TestCreatePrice(t *testing.T) {
	s := newTestServer(t, Config{})
	p := createProduct(t, s, map[string]any{"name": "Pro"})

	pr := createPrice(t, s, p.ID, map[string]any{
		"unitAmount": 5000, "currency": "usd", "nickname": "Quarterly", "scheme": "PER_UNIT",
		"isRecurring": true, "interval": "MONTH", "intervalCount": 3, "trialPeriodDays": 14,
		"metadata": map[string]any{"plan": "q"},
	})
	assert.Regexp(t, `^price_[0-9a-f]{24}$`, pr.ID)
	assert.Equal(t, int64(5000), pr.UnitAmount)
	assert.Equal(t, "USD", pr.Currency)
	assert.Equal(t, "Quarterly", *pr.Nickname)
	assert.Equal(t, "PER_UNIT", pr.Scheme)
	assert.True(t, pr.IsRecurring)
	assert.Equal(t, "MONTH", *pr.Interval)
	assert.Equal(t, int64(3), pr.IntervalCount)
	assert.Equal(t, int64(14), *pr.TrialPeriodDays)
	assert.Equal(t, map[string]any{"plan": "q"}, pr.Metadata)
	assert.True(t, pr.Active)
	assert.Equal(t, "2025-01-02T03:04:05.000Z", pr.CreatedAt)

	once := createPrice(t, s, p.ID, `{"unitAmount":1}`)
	assert.Equal(t, priceJSON{ID: once.ID, Currency: "GHS", UnitAmount: 1, Scheme: "FLAT", IntervalCount: 1, Active: true, CreatedAt: once.CreatedAt}, once,
		"defaults: GHS, FLAT, one-time, intervalCount 1, no trial")

	weekly := createPrice(t, s, p.ID, `{"unitAmount":100,"isRecurring":true,"interval":"WEEK","trialPeriodDays":null,"intervalCount":365}`)
	assert.Nil(t, weekly.TrialPeriodDays)
	assert.Equal(t, int64(365), weekly.IntervalCount)
	assert.Equal(t, 3, priceCount(s))
}

func TestCreatePriceRules(t *testing.T) {
	s := newTestServer(t, Config{})
	p := createProduct(t, s, map[string]any{"name": "Pro"})
	for _, tc := range []struct {
		name, body, field, message string
	}{
		{"unitAmount missing", `{}`, "unitAmount", "unitAmount is required"},
		{"unitAmount null", `{"unitAmount":null}`, "unitAmount", "unitAmount is required"},
		{"unitAmount zero", `{"unitAmount":0}`, "unitAmount", "unitAmount must be a positive integer"},
		{"unitAmount negative", `{"unitAmount":-5}`, "unitAmount", "unitAmount must be a positive integer"},
		{"unitAmount decimal", `{"unitAmount":10.5}`, "unitAmount", "unitAmount must be a positive integer"},
		{"unitAmount string", `{"unitAmount":"10"}`, "unitAmount", "unitAmount must be a positive integer"},
		{"currency", `{"unitAmount":1,"currency":"cedis"}`, "currency", "currency must be a 3-letter ISO 4217 currency code"},
		{"scheme", `{"unitAmount":1,"scheme":"flat"}`, "scheme", "scheme must be one of FLAT, PER_UNIT, TIERED, VOLUME"},
		{"isRecurring type", `{"unitAmount":1,"isRecurring":"yes"}`, "isRecurring", "isRecurring must be a boolean"},
		{"interval required", `{"unitAmount":1,"isRecurring":true}`, "interval", "interval is required when isRecurring is true"},
		{"interval null", `{"unitAmount":1,"isRecurring":true,"interval":null}`, "interval", "interval is required when isRecurring is true"},
		{"interval enum", `{"unitAmount":1,"isRecurring":true,"interval":"QUARTER"}`, "interval", "interval must be one of DAY, WEEK, MONTH, YEAR"},
		{"intervalCount zero", `{"unitAmount":1,"isRecurring":true,"interval":"DAY","intervalCount":0}`, "intervalCount", "intervalCount must be an integer from 1 to 365"},
		{"intervalCount big", `{"unitAmount":1,"isRecurring":true,"interval":"DAY","intervalCount":366}`, "intervalCount", "intervalCount must be an integer from 1 to 365"},
		{"trialPeriodDays negative", `{"unitAmount":1,"isRecurring":true,"interval":"DAY","trialPeriodDays":-1}`, "trialPeriodDays", "trialPeriodDays must be an integer from 0 to 730"},
		{"trialPeriodDays big", `{"unitAmount":1,"isRecurring":true,"interval":"DAY","trialPeriodDays":731}`, "trialPeriodDays", "trialPeriodDays must be an integer from 0 to 730"},
		{"nickname type", `{"unitAmount":1,"nickname":1}`, "nickname", "nickname must be a string"},
		{"metadata", `{"unitAmount":1,"metadata":{"a":[1]}}`, "metadata", "metadata must be flat"},
		{"malformed", `{"unitAmount":`, "", "request body is not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(t, s, http.MethodPost, "/v1/products/"+p.ID+"/prices", basicHeader, tc.body)
			requireError(t, rec, http.StatusBadRequest, CodeValidation, tc.field, tc.message)
		})
	}
	requireError(t, serve(t, s, http.MethodPost, "/v1/products/prod_missing/prices", basicHeader, `{"unitAmount":1}`),
		http.StatusNotFound, CodeNotFound, "", `product "prod_missing" not found`)

	decode[productJSON](t, serve(t, s, http.MethodPost, "/sandbox/products/"+p.ID+"/archive", basicHeader, nil), http.StatusOK)
	requireError(t, serve(t, s, http.MethodPost, "/v1/products/"+p.ID+"/prices", basicHeader, `{"unitAmount":1}`),
		http.StatusConflict, CodeConflict, "", "is archived: it takes no new prices")
	assert.Zero(t, priceCount(s), "nothing was written")
}

func TestArchivePrice(t *testing.T) {
	s := newTestServer(t, Config{})
	p := createProduct(t, s, map[string]any{"name": "Pro"})
	other := createProduct(t, s, map[string]any{"name": "Other"})
	pr := createPrice(t, s, p.ID, `{"unitAmount":100}`)
	path := "/v1/products/" + p.ID + "/prices/" + pr.ID

	rec := serve(t, s, http.MethodDelete, path, basicHeader, nil)
	assert.JSONEq(t, `{"success":true,"data":{"id":"`+pr.ID+`","active":false}}`, rec.Body.String())
	assert.Equal(t, http.StatusOK, rec.Code)
	s.mu.Lock()
	assert.False(t, s.products.prices[pr.ID].Active)
	s.mu.Unlock()

	again := serve(t, s, http.MethodDelete, path, secretHeader, nil)
	assert.Equal(t, rec.Body.String(), again.Body.String(), "archiving again answers the same")

	requireError(t, serve(t, s, http.MethodDelete, "/v1/products/"+other.ID+"/prices/"+pr.ID, basicHeader, nil),
		http.StatusNotFound, CodeNotFound, "", "price")
	requireError(t, serve(t, s, http.MethodDelete, "/v1/products/"+p.ID+"/prices/price_missing", basicHeader, nil),
		http.StatusNotFound, CodeNotFound, "", `price "price_missing" not found`)
	requireError(t, serve(t, s, http.MethodDelete, "/v1/products/prod_missing/prices/"+pr.ID, basicHeader, nil),
		http.StatusNotFound, CodeNotFound, "", `product "prod_missing" not found`)
}

func TestListProductsActiveFilter(t *testing.T) {
	s := newTestServer(t, Config{})
	var ids []string
	for _, name := range []string{"A", "B", "C", "D"} {
		ids = append(ids, createProduct(t, s, map[string]any{"name": name, "description": "about " + name}).ID)
	}
	for _, id := range []string{ids[1], ids[3]} {
		archived := decode[productJSON](t, serve(t, s, http.MethodPost, "/sandbox/products/"+id+"/archive", basicHeader, nil), http.StatusOK).Data
		assert.False(t, archived.Active)
	}
	names := func(query url.Values) []string {
		var out []string
		for {
			p := decode[page[map[string]any]](t, serve(t, s, http.MethodGet, "/v1/products?"+query.Encode(), basicHeader, nil), 200).Data
			for _, item := range p.Items {
				out = append(out, item["name"].(string))
			}
			if !p.HasMore {
				return out
			}
			query.Set("cursor", p.NextCursor)
		}
	}
	assert.Equal(t, []string{"D", "C", "B", "A"}, names(url.Values{}), "absent: every product, newest first")
	assert.Equal(t, []string{"C", "A"}, names(url.Values{"active": {"true"}}))
	assert.Equal(t, []string{"D", "B"}, names(url.Values{"active": {"false"}}))
	assert.Equal(t, []string{"D", "B"}, names(url.Values{"active": {"false"}, "limit": {"1"}}), "the filter holds across pages")

	first := decode[page[map[string]any]](t, serve(t, s, http.MethodGet, "/v1/products?limit=1", basicHeader, nil), 200).Data
	require.Len(t, first.Items, 1)
	assert.Equal(t, map[string]any{"id": ids[3], "name": "D", "description": "about D", "active": false, "createdAt": "2025-01-02T03:04:05.000Z"}, first.Items[0])

	requireError(t, serve(t, s, http.MethodGet, "/v1/products?active=yes", basicHeader, nil), 400, CodeValidation, "active", "active must be one of true, false")
	requireError(t, serve(t, s, http.MethodGet, "/v1/products?limit=0", basicHeader, nil), 400, CodeValidation, "limit", "limit must be an integer from 1 to 100")
	requireError(t, serve(t, s, http.MethodPost, "/sandbox/products/prod_missing/archive", basicHeader, nil), 404, CodeNotFound, "", "not found")
}

func TestProductScopes(t *testing.T) {
	s := newTestServer(t, Config{Scopes: []string{ScopeProductsRead}})
	requireError(t, serve(t, s, http.MethodPost, "/v1/products", basicHeader, `{"name":"A"}`), http.StatusForbidden, CodeKeysMismatch, "", "scope products:write")
	decode[page[productJSON]](t, serve(t, s, http.MethodGet, "/v1/products", basicHeader, nil), http.StatusOK)
	requireError(t, serve(t, s, http.MethodGet, "/v1/products", sessionHeader, nil), http.StatusUnauthorized, CodeKeysMismatch, "", "invalid credentials")
}
