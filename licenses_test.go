package billing

import (
	"net/http"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fixtureKey = "TMA3-CTCN-7AEF-ULDW"

func TestLicensesCreateDecodesTheWholeLicense(t *testing.T) {
	c, mock := newMockClient(t)
	var got map[string]any
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/licenses", func(r *http.Request) (*http.Response, error) {
		got = requestBody(t, r)
		if got["productId"] == nil {
			return fixtureResponder(t, 201, "licenses/license_unbound.json")(r)
		}
		return fixtureResponder(t, 201, "licenses/license.json")(r)
	})

	l, err := c.Licenses.Create(ctx(), &LicenseCreateParams{
		CustomerID: "cust_883566f47c5ec7982ee1b5d4", ProductID: "prod_8ea7d5138f6039b1025259ae", MaxActivations: 2,
		ExpiresAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Metadata: Metadata{"seat": "design"},
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"customerId": "cust_883566f47c5ec7982ee1b5d4", "productId": "prod_8ea7d5138f6039b1025259ae", "maxActivations": float64(2),
		"expiresAt": "2026-01-01T00:00:00Z", "metadata": map[string]any{"seat": "design"},
	}, got)
	assert.Equal(t, &License{
		ID: "lic_2a4ba078cb421f07891fdea3", Key: fixtureKey, Status: LicenseStatusActive, Environment: LicenseEnvironmentTest,
		MaxActivations: 2, ExpiresAt: utcTime(2026, 1, 1, 0, 0, 0), Metadata: Metadata{"seat": "design"}, CreatedAt: utcTime(2025, 1, 5, 3, 4, 5),
		Customer: LicenseCustomer{ID: "cust_883566f47c5ec7982ee1b5d4", Name: "Ama Mensah", Email: "ama.mensah@example.com"},
		Product:  LicenseProduct{ID: "prod_8ea7d5138f6039b1025259ae", Name: "Pro plan"},
	}, l)

	unbound, err := c.Licenses.Create(ctx(), &LicenseCreateParams{CustomerID: "cust_1"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"customerId": "cust_1"}, got, "optional fields are left out")
	assert.Zero(t, unbound.Product, "no product: a license bound to none")
	assert.Nil(t, unbound.Metadata)
	assert.Equal(t, 1, unbound.MaxActivations)
}

func TestLicensesGetActivateRevoke(t *testing.T) {
	c, mock := newMockClient(t)
	base := mockBaseURL + "/v1/licenses/" + fixtureKey
	mock.RegisterResponder(http.MethodGet, base, fixtureResponder(t, 200, "licenses/validation.json"))
	mock.RegisterResponder(http.MethodPost, base+"/activate", fixtureResponder(t, 200, "licenses/activation.json"))
	mock.RegisterResponder(http.MethodDelete, base, fixtureResponder(t, 200, "licenses/revoked.json"))

	valid, err := c.Licenses.Get(ctx(), fixtureKey)
	require.NoError(t, err)
	assert.Equal(t, &License{ID: "lic_2a4ba078cb421f07891fdea3", Key: fixtureKey, Status: LicenseStatusActive, MaxActivations: 2, ExpiresAt: utcTime(2026, 1, 1, 0, 0, 0)}, valid)

	activated, err := c.Licenses.Activate(ctx(), fixtureKey)
	require.NoError(t, err)
	assert.Equal(t, &License{ID: "lic_2a4ba078cb421f07891fdea3", Key: fixtureKey, Status: LicenseStatusActive, Activations: 1, MaxActivations: 2}, activated)

	revoked, err := c.Licenses.Revoke(ctx(), fixtureKey)
	require.NoError(t, err)
	assert.Equal(t, &License{Key: fixtureKey, Status: LicenseStatusRevoked, RevokedAt: utcTime(2025, 1, 6, 3, 4, 5)}, revoked)
}

func TestLicensesUpdateSendsNullToRemoveTheExpiry(t *testing.T) {
	c, mock := newMockClient(t)
	var got map[string]any
	mock.RegisterResponder(http.MethodPatch, mockBaseURL+"/v1/licenses/"+fixtureKey, func(r *http.Request) (*http.Response, error) {
		got = requestBody(t, r)
		return fixtureResponder(t, 200, "licenses/updated.json")(r)
	})

	l, err := c.Licenses.Update(ctx(), fixtureKey, &LicenseUpdateParams{
		Status: LicenseStatusSuspended, MaxActivations: 3, ExpiresAt: Null[time.Time](), Metadata: Metadata{"seat": "design", "team": "web"},
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"status": "SUSPENDED", "maxActivations": float64(3), "expiresAt": nil, "metadata": map[string]any{"seat": "design", "team": "web"}}, got)
	assert.Equal(t, LicenseStatusSuspended, l.Status)
	assert.True(t, l.ExpiresAt.IsZero())
	assert.Equal(t, "Pro plan", l.Product.Name, "the answer is the whole license")

	_, err = c.Licenses.Update(ctx(), fixtureKey, &LicenseUpdateParams{ExpiresAt: Value(time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC))})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"expiresAt": "2027-03-01T12:00:00Z"}, got)

	_, err = c.Licenses.Update(ctx(), fixtureKey, &LicenseUpdateParams{})
	require.NoError(t, err)
	assert.Empty(t, got, "zero fields are left as they are")
}

func TestLicenseRefusalsMatchTheirSentinels(t *testing.T) {
	sentinels := []error{ErrLicenseNotActive, ErrLicenseExpired, ErrActivationLimit, ErrLicenseRevoked}
	for name, want := range map[string]error{
		"licenses/error_not_active.json":       ErrLicenseNotActive,
		"licenses/error_expired.json":          ErrLicenseExpired,
		"licenses/error_activation_limit.json": ErrActivationLimit,
		"licenses/error_revoked.json":          ErrLicenseRevoked,
	} {
		t.Run(name, func(t *testing.T) {
			c, mock := newMockClient(t)
			mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/licenses/"+fixtureKey+"/activate", fixtureResponder(t, 400, name))
			_, err := c.Licenses.Activate(ctx(), fixtureKey)
			require.ErrorIs(t, err, want)
			assert.ErrorIs(t, err, ErrInvalidRequest, "a 400 all the same")
			for _, other := range sentinels {
				if other != want {
					assert.NotErrorIs(t, err, other)
				}
			}
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
		})
	}
}

func TestLicensesActivateIsNotResent(t *testing.T) {
	c, mock := newMockClient(t, WithRetry(4, 0, 0))
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/licenses/"+fixtureKey+"/activate", httpmock.NewStringResponder(502, `{"success":false,"message":"bad gateway"}`))
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/licenses/"+fixtureKey, httpmock.NewStringResponder(502, `{"success":false,"message":"bad gateway"}`))

	_, err := c.Licenses.Activate(ctx(), fixtureKey)
	require.Error(t, err)
	assert.Equal(t, 1, mock.GetTotalCallCount(), "an activation that may have counted is not sent again")

	_, err = c.Licenses.Get(ctx(), fixtureKey)
	require.Error(t, err)
	assert.Equal(t, 5, mock.GetTotalCallCount(), "a validation is a read, retried")
}

func TestLicensesValidationSendsNothing(t *testing.T) {
	requireRefusedBeforeSending(t, map[string]refusal{
		"create nil": {func(c *Client) error { _, err := c.Licenses.Create(ctx(), nil); return err }, "params"},
		"customer required": {func(c *Client) error {
			_, err := c.Licenses.Create(ctx(), &LicenseCreateParams{ProductID: "prod_1"})
			return err
		}, "customerId"},
		"max activations negative": {func(c *Client) error {
			_, err := c.Licenses.Create(ctx(), &LicenseCreateParams{CustomerID: "cust_1", MaxActivations: -1})
			return err
		}, "maxActivations"},
		"create metadata": {func(c *Client) error {
			_, err := c.Licenses.Create(ctx(), &LicenseCreateParams{CustomerID: "cust_1", Metadata: Metadata{"a": map[string]any{}}})
			return err
		}, "metadata.a"},
		"get empty key":     {func(c *Client) error { _, err := c.Licenses.Get(ctx(), ""); return err }, "key"},
		"get short key":     {func(c *Client) error { _, err := c.Licenses.Get(ctx(), "ABCD-EFGH"); return err }, "key"},
		"activate bad key":  {func(c *Client) error { _, err := c.Licenses.Activate(ctx(), "ABCD-EFGH-JKLM-NP/R"); return err }, "key"},
		"revoke bad hyphen": {func(c *Client) error { _, err := c.Licenses.Revoke(ctx(), "ABCD_EFGH_JKLM_NPQR"); return err }, "key"},
		"update bad key": {func(c *Client) error {
			_, err := c.Licenses.Update(ctx(), "ABCDEFGHJKLMNPQRSTU", &LicenseUpdateParams{})
			return err
		}, "key"},
		"update nil": {func(c *Client) error { _, err := c.Licenses.Update(ctx(), fixtureKey, nil); return err }, "params"},
		"update status expired": {func(c *Client) error {
			_, err := c.Licenses.Update(ctx(), fixtureKey, &LicenseUpdateParams{Status: LicenseStatusExpired})
			return err
		}, "status"},
		"update status revoked": {func(c *Client) error {
			_, err := c.Licenses.Update(ctx(), fixtureKey, &LicenseUpdateParams{Status: LicenseStatusRevoked})
			return err
		}, "status"},
		"update max negative": {func(c *Client) error {
			_, err := c.Licenses.Update(ctx(), fixtureKey, &LicenseUpdateParams{MaxActivations: -2})
			return err
		}, "maxActivations"},
		"update metadata": {func(c *Client) error {
			_, err := c.Licenses.Update(ctx(), fixtureKey, &LicenseUpdateParams{Metadata: Metadata{"x": []int{1}}})
			return err
		}, "metadata.x"},
	})
}
