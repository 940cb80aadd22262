package sandbox

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// licenseJSON decodes a license as a client would see it.
type licenseJSON struct {
	ID             string         `json:"id"`
	Key            string         `json:"key"`
	Status         string         `json:"status"`
	Environment    string         `json:"environment"`
	Activations    int64          `json:"activations"`
	MaxActivations int64          `json:"maxActivations"`
	ExpiresAt      *string        `json:"expiresAt"`
	RevokedAt      *string        `json:"revokedAt"`
	Metadata       map[string]any `json:"metadata"`
	CreatedAt      string         `json:"createdAt"`
	Customer       map[string]any `json:"customer"`
	Product        map[string]any `json:"product"`
}

const licenseKeyPattern = `^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$`

func issueLicense(tb testing.TB, s *Server, body any) licenseJSON {
	tb.Helper()
	return decode[licenseJSON](tb, serve(tb, s, http.MethodPost, "/v1/licenses", basicHeader, body), http.StatusCreated).Data
}

func validate(tb testing.TB, s *Server, key string) licenseJSON {
	tb.Helper()
	return decode[licenseJSON](tb, serve(tb, s, http.MethodGet, "/v1/licenses/"+key, basicHeader, nil), http.StatusOK).Data
}

func activate(tb testing.TB, s *Server, key string) *httptest.ResponseRecorder {
	tb.Helper()
	return serve(tb, s, http.MethodPost, "/v1/licenses/"+key+"/activate", basicHeader, nil)
}

func updateLicense(tb testing.TB, s *Server, key string, body any) *httptest.ResponseRecorder {
	tb.Helper()
	return serve(tb, s, http.MethodPatch, "/v1/licenses/"+key, basicHeader, body)
}

// keysOf returns the keys of the JSON object in the body's data.
func keysOf(tb testing.TB, rec *httptest.ResponseRecorder) []string {
	tb.Helper()
	var keys []string
	for k := range decode[map[string]json.RawMessage](tb, rec, rec.Code).Data {
		keys = append(keys, k)
	}
	return keys
}

// licenseHolder is a customer and product to issue licenses to.
func licenseHolder(tb testing.TB, s *Server) (customerID, productID string) {
	tb.Helper()
	c := createCustomer(tb, s, map[string]any{"email": "ada@example.com", "name": "Ada"})
	p := createProduct(tb, s, map[string]any{"name": "Editor"})
	return c.ID, p.ID
}

func TestIssueLicense(t *testing.T) {
	s := newTestServer(t, Config{})
	customerID, productID := licenseHolder(t, s)

	l := issueLicense(t, s, map[string]any{
		"customerId": customerID, "productId": productID, "maxActivations": 3,
		"expiresAt": "2025-06-30T00:00:00Z", "metadata": map[string]any{"seat": "design"},
	})
	assert.Regexp(t, `^lic_[0-9a-f]{24}$`, l.ID)
	assert.Regexp(t, licenseKeyPattern, l.Key)
	assert.Equal(t, licenseJSON{
		ID: l.ID, Key: l.Key, Status: "ACTIVE", Environment: "TEST", Activations: 0, MaxActivations: 3,
		ExpiresAt: ptr("2025-06-30T00:00:00.000Z"), Metadata: map[string]any{"seat": "design"}, CreatedAt: "2025-01-02T03:04:05.000Z",
		Customer: map[string]any{"id": customerID, "name": "Ada", "email": "ada@example.com"},
		Product:  map[string]any{"id": productID, "name": "Editor"},
	}, l)

	rec := serve(t, s, http.MethodPost, "/v1/licenses", secretHeader, map[string]any{"customerId": customerID})
	raw := rec.Body.String()
	minimal := decode[licenseJSON](t, rec, http.StatusCreated).Data
	assert.Equal(t, int64(1), minimal.MaxActivations, "the default limit")
	assert.Nil(t, minimal.ExpiresAt)
	assert.Nil(t, minimal.RevokedAt)
	assert.Nil(t, minimal.Metadata)
	assert.NotContains(t, raw, `"product"`, "product is present only when bound")
	assert.Contains(t, raw, `"expiresAt":null`)
	assert.NotEqual(t, l.Key, minimal.Key)
}

func TestIssueLicenseRules(t *testing.T) {
	s := newTestServer(t, Config{})
	customerID, _ := licenseHolder(t, s)
	c := `"customerId":"` + customerID + `"`
	for _, tc := range []struct {
		name, body, field, message string
	}{
		{"customerId missing", `{}`, "customerId", "customerId is required"},
		{"customerId null", `{"customerId":null}`, "customerId", "customerId is required"},
		{"productId type", `{` + c + `,"productId":1}`, "productId", "productId must be a string"},
		{"maxActivations zero", `{` + c + `,"maxActivations":0}`, "maxActivations", "maxActivations must be a positive integer"},
		{"maxActivations negative", `{` + c + `,"maxActivations":-1}`, "maxActivations", "maxActivations must be a positive integer"},
		{"maxActivations string", `{` + c + `,"maxActivations":"2"}`, "maxActivations", "maxActivations must be a positive integer"},
		{"expiresAt shape", `{` + c + `,"expiresAt":"30/06/2025"}`, "expiresAt", "expiresAt must be an RFC 3339 timestamp"},
		{"expiresAt past", `{` + c + `,"expiresAt":"2025-01-01T00:00:00Z"}`, "expiresAt", "expiresAt must be in the future (the sandbox's time is 2025-01-02T03:04:05.000Z)"},
		{"expiresAt now", `{` + c + `,"expiresAt":"2025-01-02T03:04:05Z"}`, "expiresAt", "expiresAt must be in the future"},
		{"metadata", `{` + c + `,"metadata":{"a":{}}}`, "metadata", "metadata must be flat"},
		{"not an object", `null`, "", "request body must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, serve(t, s, http.MethodPost, "/v1/licenses", basicHeader, tc.body), http.StatusBadRequest, CodeValidation, tc.field, tc.message)
		})
	}
	requireError(t, serve(t, s, http.MethodPost, "/v1/licenses", basicHeader, `{"customerId":"cust_missing"}`),
		http.StatusNotFound, CodeNotFound, "customerId", `customer "cust_missing" not found`)
	requireError(t, serve(t, s, http.MethodPost, "/v1/licenses", basicHeader, `{`+c+`,"productId":"prod_missing"}`),
		http.StatusNotFound, CodeNotFound, "productId", `product "prod_missing" not found`)
	s.mu.Lock()
	assert.Zero(t, s.licenses.table.len(), "nothing was written")
	s.mu.Unlock()
}

func TestValidateLicense(t *testing.T) {
	s := newTestServer(t, Config{})
	customerID, _ := licenseHolder(t, s)
	l := issueLicense(t, s, map[string]any{"customerId": customerID, "maxActivations": 2, "expiresAt": "2026-01-01T00:00:00Z"})

	rec := serve(t, s, http.MethodGet, "/v1/licenses/"+l.Key, secretHeader, nil)
	assert.ElementsMatch(t, []string{"id", "key", "status", "activations", "maxActivations", "expiresAt"}, keysOf(t, rec))
	got := validate(t, s, l.Key)
	assert.Equal(t, licenseJSON{ID: l.ID, Key: l.Key, Status: "ACTIVE", MaxActivations: 2, ExpiresAt: ptr("2026-01-01T00:00:00.000Z")}, got)
	assert.Equal(t, got, validate(t, s, strings.ToLower(l.Key)), "keys match in either case")

	requireError(t, serve(t, s, http.MethodGet, "/v1/licenses/ABCD-EFGH-JKLM-NPQ2", basicHeader, nil), http.StatusNotFound, CodeNotFound, "", `license "ABCD-EFGH-JKLM-NPQ2" not found`)
	requireError(t, serve(t, s, http.MethodGet, "/v1/licenses/ABCD-EFGH", basicHeader, nil), http.StatusBadRequest, CodeValidation, "key", "key must be four groups of four")
	requireError(t, serve(t, s, http.MethodGet, "/v1/licenses/ABCD_EFGH_JKLM_NPQR", basicHeader, nil), http.StatusBadRequest, CodeValidation, "key", "key must be four groups of four")
}

func TestActivateUpToTheLimit(t *testing.T) {
	s := newTestServer(t, Config{})
	customerID, _ := licenseHolder(t, s)
	l := issueLicense(t, s, map[string]any{"customerId": customerID, "maxActivations": 2})

	rec := activate(t, s, l.Key)
	assert.ElementsMatch(t, []string{"id", "key", "status", "activations", "maxActivations"}, keysOf(t, rec))
	assert.JSONEq(t, `{"success":true,"data":{"id":"`+l.ID+`","key":"`+l.Key+`","status":"ACTIVE","activations":1,"maxActivations":2}}`, rec.Body.String())
	assert.Equal(t, int64(2), decode[licenseJSON](t, activate(t, s, strings.ToLower(l.Key)), http.StatusOK).Data.Activations)

	requireError(t, activate(t, s, l.Key), http.StatusBadRequest, CodeActivationLimitReached, "", "has reached its 2 activation(s)")
	assert.Equal(t, int64(2), validate(t, s, l.Key).Activations, "a refused activation records nothing")

	decode[licenseJSON](t, updateLicense(t, s, l.Key, `{"maxActivations":3}`), http.StatusOK)
	assert.Equal(t, int64(3), decode[licenseJSON](t, activate(t, s, l.Key), http.StatusOK).Data.Activations, "a raised limit admits more")
}

func TestActivateRefusals(t *testing.T) {
	s := newTestServer(t, Config{})
	customerID, _ := licenseHolder(t, s)
	issue := func() licenseJSON {
		return issueLicense(t, s, map[string]any{"customerId": customerID, "maxActivations": 5, "expiresAt": "2025-02-01T00:00:00Z"})
	}
	suspended, expired, revoked := issue(), issue(), issue()
	decode[licenseJSON](t, updateLicense(t, s, suspended.Key, `{"status":"SUSPENDED"}`), http.StatusOK)
	decode[licenseRevocation](t, serve(t, s, http.MethodDelete, "/v1/licenses/"+revoked.Key, basicHeader, nil), http.StatusOK)
	s.Advance(31 * day) // past 1 February for the expired one; the others are checked first
	for _, tc := range []struct {
		name, key, code, message string
	}{
		{"suspended", suspended.Key, CodeLicenseExpired, "expired at 2025-02-01T00:00:00.000Z"},
		{"expired", expired.Key, CodeLicenseExpired, "expired at 2025-02-01T00:00:00.000Z"},
		{"revoked", revoked.Key, CodeLicenseRevoked, "is revoked: it can never be activated again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, activate(t, s, tc.key), http.StatusBadRequest, tc.code, "", tc.message)
			assert.Zero(t, validate(t, s, tc.key).Activations)
		})
	}

	fresh := issueLicense(t, s, map[string]any{"customerId": customerID})
	decode[licenseJSON](t, updateLicense(t, s, fresh.Key, `{"status":"SUSPENDED"}`), http.StatusOK)
	requireError(t, activate(t, s, fresh.Key), http.StatusBadRequest, CodeLicenseNotActive, "", "is SUSPENDED: only an ACTIVE license can be activated")
	assert.Equal(t, "SUSPENDED", validate(t, s, fresh.Key).Status, "a suspended license is still described by a validation")
}

func TestLicenseExpiresByTheClock(t *testing.T) {
	s := newTestServer(t, Config{})
	customerID, _ := licenseHolder(t, s)
	l := issueLicense(t, s, map[string]any{"customerId": customerID, "expiresAt": "2025-01-12T03:04:05Z"})
	suspended := issueLicense(t, s, map[string]any{"customerId": customerID, "expiresAt": "2025-01-12T03:04:05Z"})
	decode[licenseJSON](t, updateLicense(t, s, suspended.Key, `{"status":"SUSPENDED"}`), http.StatusOK)

	s.Advance(10*day - time.Millisecond)
	assert.Equal(t, "ACTIVE", validate(t, s, l.Key).Status)
	s.Advance(time.Millisecond)
	s.mu.Lock()
	stored, _ := s.licenses.table.get(l.ID)
	status := stored.Status
	s.mu.Unlock()
	assert.Equal(t, "EXPIRED", status, "the scheduled task moved it, before any request")
	assert.Equal(t, "EXPIRED", validate(t, s, l.Key).Status)
	assert.Equal(t, "EXPIRED", validate(t, s, suspended.Key).Status, "a suspended license expires too")
}

func TestUpdateLicense(t *testing.T) {
	s := newTestServer(t, Config{})
	customerID, productID := licenseHolder(t, s)
	l := issueLicense(t, s, map[string]any{"customerId": customerID, "productId": productID, "expiresAt": "2025-03-01T00:00:00Z", "metadata": map[string]any{"a": "1"}})

	u := decode[licenseJSON](t, updateLicense(t, s, l.Key, `{"status":"SUSPENDED","maxActivations":4,"expiresAt":"2025-06-01T00:00:00Z","metadata":{"b":"2"}}`), http.StatusOK).Data
	assert.Equal(t, "SUSPENDED", u.Status)
	assert.Equal(t, int64(4), u.MaxActivations)
	assert.Equal(t, "2025-06-01T00:00:00.000Z", *u.ExpiresAt)
	assert.Equal(t, map[string]any{"b": "2"}, u.Metadata, "metadata is replaced")
	assert.Equal(t, l.Customer, u.Customer, "the answer is the whole license")
	assert.Equal(t, l.Product, u.Product)

	u = decode[licenseJSON](t, updateLicense(t, s, l.Key, `{"status":"ACTIVE"}`), http.StatusOK).Data
	assert.Equal(t, "ACTIVE", u.Status)
	assert.Equal(t, int64(4), u.MaxActivations, "absent fields are kept")

	s.Advance(60 * day) // past the first expiry, before the second
	assert.Equal(t, "ACTIVE", validate(t, s, l.Key).Status, "the moved expiry replaced the first")

	u = decode[licenseJSON](t, updateLicense(t, s, l.Key, `{"expiresAt":null,"metadata":null}`), http.StatusOK).Data
	assert.Nil(t, u.ExpiresAt, "null removes the expiry")
	assert.Nil(t, u.Metadata, "null clears the metadata")
	s.Advance(365 * day)
	assert.Equal(t, "ACTIVE", validate(t, s, l.Key).Status, "a license without expiry never expires")

	u = decode[licenseJSON](t, updateLicense(t, s, l.Key, `{}`), http.StatusOK).Data
	assert.Equal(t, "ACTIVE", u.Status, "an empty update changes nothing")
}

func TestUpdateExpiredLicense(t *testing.T) {
	s := newTestServer(t, Config{})
	customerID, _ := licenseHolder(t, s)
	l := issueLicense(t, s, map[string]any{"customerId": customerID, "expiresAt": "2025-01-03T00:00:00Z"})
	s.Advance(2 * day)
	require.Equal(t, "EXPIRED", validate(t, s, l.Key).Status)

	requireError(t, updateLicense(t, s, l.Key, `{"status":"ACTIVE"}`), http.StatusBadRequest, CodeLicenseExpired, "", "send a later expiresAt, or null to remove it")
	requireError(t, updateLicense(t, s, l.Key, `{"status":"SUSPENDED"}`), http.StatusBadRequest, CodeLicenseExpired, "", "send a later expiresAt")
	assert.Equal(t, "EXPIRED", validate(t, s, l.Key).Status, "refused updates change nothing")

	u := decode[licenseJSON](t, updateLicense(t, s, l.Key, `{"maxActivations":2}`), http.StatusOK).Data
	assert.Equal(t, "EXPIRED", u.Status, "other fields of an expired license can change")
	assert.Equal(t, int64(2), u.MaxActivations)

	u = decode[licenseJSON](t, updateLicense(t, s, l.Key, `{"status":"ACTIVE","expiresAt":"2025-12-31T00:00:00Z"}`), http.StatusOK).Data
	assert.Equal(t, "ACTIVE", u.Status, "renewed with a later expiry")
	assert.Equal(t, int64(1), decode[licenseJSON](t, activate(t, s, l.Key), http.StatusOK).Data.Activations)

	other := issueLicense(t, s, map[string]any{"customerId": customerID, "expiresAt": "2025-01-05T00:00:00Z"})
	s.Advance(2 * day)
	u = decode[licenseJSON](t, updateLicense(t, s, other.Key, `{"status":"SUSPENDED","expiresAt":null}`), http.StatusOK).Data
	assert.Equal(t, "SUSPENDED", u.Status, "an expired license can change status once its expiry is removed")
}

func TestUpdateLicenseRules(t *testing.T) {
	s := newTestServer(t, Config{})
	customerID, _ := licenseHolder(t, s)
	l := issueLicense(t, s, map[string]any{"customerId": customerID, "maxActivations": 3, "metadata": map[string]any{"a": "1"}})
	decode[licenseJSON](t, activate(t, s, l.Key), http.StatusOK)
	decode[licenseJSON](t, activate(t, s, l.Key), http.StatusOK)
	before := decode[licenseJSON](t, updateLicense(t, s, l.Key, `{}`), http.StatusOK).Data
	for _, tc := range []struct {
		name, body, field, message string
	}{
		{"status EXPIRED", `{"status":"EXPIRED"}`, "status", "status must be one of ACTIVE, SUSPENDED"},
		{"status REVOKED", `{"status":"REVOKED"}`, "status", "status must be one of ACTIVE, SUSPENDED"},
		{"status lower", `{"status":"active"}`, "status", "status must be one of ACTIVE, SUSPENDED"},
		{"maxActivations zero", `{"maxActivations":0}`, "maxActivations", "maxActivations must be a positive integer"},
		{"maxActivations below activations", `{"maxActivations":1}`, "maxActivations", "maxActivations must be at least the 2 activation(s) already recorded"},
		{"expiresAt shape", `{"expiresAt":"soon"}`, "expiresAt", "expiresAt must be an RFC 3339 timestamp"},
		{"expiresAt past", `{"expiresAt":"2024-12-31T00:00:00Z"}`, "expiresAt", "expiresAt must be in the future"},
		{"metadata", `{"metadata":"x"}`, "metadata", "metadata must be an object"},
		{"empty body", ``, "", "request body must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, updateLicense(t, s, l.Key, tc.body), http.StatusBadRequest, CodeValidation, tc.field, tc.message)
		})
	}
	assert.Equal(t, before, decode[licenseJSON](t, updateLicense(t, s, l.Key, `{}`), http.StatusOK).Data, "refused updates change nothing")
	requireError(t, updateLicense(t, s, "ZZZZ-ZZZZ-ZZZZ-ZZZZ", `{}`), http.StatusNotFound, CodeNotFound, "", "not found")
}

func TestRevokeLicense(t *testing.T) {
	s := newTestServer(t, Config{})
	customerID, _ := licenseHolder(t, s)
	issue := func() licenseJSON {
		return issueLicense(t, s, map[string]any{"customerId": customerID, "expiresAt": "2025-01-10T00:00:00Z"})
	}
	active, suspended, expired := issue(), issue(), issue()
	decode[licenseJSON](t, updateLicense(t, s, suspended.Key, `{"status":"SUSPENDED"}`), http.StatusOK)
	s.Advance(8 * day)
	require.Equal(t, "EXPIRED", validate(t, s, expired.Key).Status)
	// active and suspended expire too by now; give them a later expiry first.
	for _, key := range []string{active.Key, suspended.Key} {
		status := map[string]string{active.Key: "ACTIVE", suspended.Key: "SUSPENDED"}[key]
		decode[licenseJSON](t, updateLicense(t, s, key, `{"status":"`+status+`","expiresAt":"2025-12-31T00:00:00Z"}`), http.StatusOK)
	}

	for _, l := range []licenseJSON{active, suspended, expired} {
		rec := serve(t, s, http.MethodDelete, "/v1/licenses/"+l.Key, basicHeader, nil)
		assert.JSONEq(t, `{"success":true,"data":{"key":"`+l.Key+`","status":"REVOKED","revokedAt":"2025-01-10T03:04:05.000Z"}}`, rec.Body.String())
	}
	s.Advance(time.Hour)
	rec := serve(t, s, http.MethodDelete, "/v1/licenses/"+active.Key, basicHeader, nil)
	assert.Contains(t, rec.Body.String(), `"revokedAt":"2025-01-10T03:04:05.000Z"`, "revoking again keeps the first revokedAt")

	before := validate(t, s, active.Key)
	requireError(t, activate(t, s, active.Key), http.StatusBadRequest, CodeLicenseRevoked, "", "is revoked")
	for _, body := range []string{`{"status":"ACTIVE"}`, `{"maxActivations":9}`, `{"expiresAt":null}`, `{}`} {
		requireError(t, updateLicense(t, s, active.Key, body), http.StatusBadRequest, CodeLicenseRevoked, "", "can no longer be updated")
	}
	s.Advance(400 * day)
	assert.Equal(t, before, validate(t, s, active.Key), "revoked for good: not even the clock changes it")
	requireError(t, serve(t, s, http.MethodDelete, "/v1/licenses/ZZZZ-ZZZZ-ZZZZ-ZZZZ", basicHeader, nil), http.StatusNotFound, CodeNotFound, "", "not found")
}

func TestLicenseKeys(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		key := newLicenseKey()
		require.Regexp(t, licenseKeyPattern, key)
		require.True(t, isLicenseKey(key))
		seen[key] = true
	}
	assert.Len(t, seen, 2000)
	for _, bad := range []string{"", "ABCD-EFGH-JKLM-NPQ", "ABCD-EFGH-JKLM-NPQRS", "ABCDEFGHJKLMNPQRSTU", "ABCD-EFGH-JKLM-NP-R", "ABCD-EFGH-JKLM-NPQ!"} {
		assert.False(t, isLicenseKey(bad), bad)
	}
}

func TestLicenseScopes(t *testing.T) {
	s := newTestServer(t, Config{Scopes: []string{ScopeLicensesRead}})
	requireError(t, serve(t, s, http.MethodPost, "/v1/licenses", basicHeader, `{"customerId":"c"}`), http.StatusForbidden, CodeKeysMismatch, "", "scope licenses:write")
	requireError(t, serve(t, s, http.MethodPost, "/v1/licenses/ABCD-EFGH-JKLM-NPQR/activate", basicHeader, nil), http.StatusForbidden, CodeKeysMismatch, "", "scope licenses:write")
	requireError(t, serve(t, s, http.MethodGet, "/v1/licenses/ABCD-EFGH-JKLM-NPQR", basicHeader, nil), http.StatusNotFound, CodeNotFound, "", "not found")
}

func ptr[T any](v T) *T { return &v }

func BenchmarkSandboxActivateLicense(b *testing.B) {
	s := newTestServer(b, Config{})
	customerID, _ := licenseHolder(b, s)
	l := issueLicense(b, s, map[string]any{"customerId": customerID, "maxActivations": 1 << 40})
	benchmarkRequests(b, s, http.StatusOK, func() *http.Request {
		return authorized(http.MethodPost, "/v1/licenses/"+l.Key+"/activate", nil)
	})
}
