package billing_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

var licenseKeyShape = regexp.MustCompile(`^[A-Z0-9]{4}(-[A-Z0-9]{4}){3}$`)

func TestLicenseLifecycleAgainstTheSandbox(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client(billing.WithSecretKey(srv.SecretKey))
	ctx := context.Background()
	customerID := newWalletOwner(t, c)
	product, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Editor", Type: billing.ProductTypeDigital})
	require.NoError(t, err)

	lic, err := c.Licenses.Create(ctx, &billing.LicenseCreateParams{
		CustomerID: customerID, ProductID: product.ID, MaxActivations: 2, ExpiresAt: srv.Now().Add(30 * day),
		Metadata: billing.Metadata{"seat": "design"},
	})
	require.NoError(t, err)
	assert.Regexp(t, licenseKeyShape, lic.Key)
	assert.Equal(t, billing.LicenseStatusActive, lic.Status)
	assert.Equal(t, billing.LicenseEnvironmentTest, lic.Environment)
	assert.Equal(t, customerID, lic.Customer.ID)
	assert.Equal(t, billing.LicenseProduct{ID: product.ID, Name: "Editor"}, lic.Product)

	valid, err := c.Licenses.Get(ctx, strings.ToLower(lic.Key))
	require.NoError(t, err)
	assert.Equal(t, &billing.License{ID: lic.ID, Key: lic.Key, Status: billing.LicenseStatusActive, MaxActivations: 2, ExpiresAt: lic.ExpiresAt}, valid)

	for want := 1; want <= 2; want++ {
		a, err := c.Licenses.Activate(ctx, lic.Key)
		require.NoError(t, err)
		assert.Equal(t, want, a.Activations)
	}
	_, err = c.Licenses.Activate(ctx, lic.Key)
	assert.ErrorIs(t, err, billing.ErrActivationLimit)

	suspended, err := c.Licenses.Update(ctx, lic.Key, &billing.LicenseUpdateParams{Status: billing.LicenseStatusSuspended, MaxActivations: 3})
	require.NoError(t, err)
	assert.Equal(t, billing.LicenseStatusSuspended, suspended.Status)
	_, err = c.Licenses.Activate(ctx, lic.Key)
	assert.ErrorIs(t, err, billing.ErrLicenseNotActive)

	_, err = c.Licenses.Update(ctx, lic.Key, &billing.LicenseUpdateParams{Status: billing.LicenseStatusActive})
	require.NoError(t, err)
	a, err := c.Licenses.Activate(ctx, lic.Key)
	require.NoError(t, err)
	assert.Equal(t, 3, a.Activations, "the raised limit admits one more")

	srv.Advance(30 * day)
	expired, err := c.Licenses.Get(ctx, lic.Key)
	require.NoError(t, err)
	assert.Equal(t, billing.LicenseStatusExpired, expired.Status, "the clock passed expiresAt")
	_, err = c.Licenses.Activate(ctx, lic.Key)
	assert.ErrorIs(t, err, billing.ErrLicenseExpired)
	_, err = c.Licenses.Update(ctx, lic.Key, &billing.LicenseUpdateParams{Status: billing.LicenseStatusActive})
	assert.ErrorIs(t, err, billing.ErrLicenseExpired, "reactivating needs a new expiry")

	renewed, err := c.Licenses.Update(ctx, lic.Key, &billing.LicenseUpdateParams{
		Status: billing.LicenseStatusActive, MaxActivations: 4, ExpiresAt: billing.Null[time.Time](), Metadata: billing.Metadata{},
	})
	require.NoError(t, err)
	assert.Equal(t, billing.LicenseStatusActive, renewed.Status)
	assert.True(t, renewed.ExpiresAt.IsZero(), "Null removed the expiry")
	assert.Empty(t, renewed.Metadata, "an empty map clears the metadata")

	revoked, err := c.Licenses.Revoke(ctx, lic.Key)
	require.NoError(t, err)
	assert.Equal(t, billing.LicenseStatusRevoked, revoked.Status)
	assert.Equal(t, srv.Now(), revoked.RevokedAt)

	srv.Advance(day)
	again, err := c.Licenses.Revoke(ctx, lic.Key)
	require.NoError(t, err)
	assert.Equal(t, revoked, again, "revoking again answers the first revocation")
	_, err = c.Licenses.Activate(ctx, lic.Key)
	assert.ErrorIs(t, err, billing.ErrLicenseRevoked)
	_, err = c.Licenses.Update(ctx, lic.Key, &billing.LicenseUpdateParams{Status: billing.LicenseStatusActive})
	assert.ErrorIs(t, err, billing.ErrLicenseRevoked)
	final, err := c.Licenses.Get(ctx, lic.Key)
	require.NoError(t, err)
	assert.Equal(t, billing.LicenseStatusRevoked, final.Status)
	assert.Equal(t, 3, final.Activations, "refusals recorded nothing")
}

func TestLicensesSandboxRulesTheSDKCannotCheck(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client()
	ctx := context.Background()
	customerID := newWalletOwner(t, c)

	// Only the service's clock says what is past.
	_, err := c.Licenses.Create(ctx, &billing.LicenseCreateParams{CustomerID: customerID, ExpiresAt: srv.Now()})
	var apiErr *billing.APIError
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, "expiresAt", apiErr.Field)
	assert.ErrorIs(t, err, billing.ErrInvalidRequest)

	_, err = c.Licenses.Create(ctx, &billing.LicenseCreateParams{CustomerID: "cust_missing"})
	assert.ErrorIs(t, err, billing.ErrNotFound)

	lic, err := c.Licenses.Create(ctx, &billing.LicenseCreateParams{CustomerID: customerID, MaxActivations: 2})
	require.NoError(t, err)
	assert.Zero(t, lic.Product, "bound to no product")
	_, err = c.Licenses.Activate(ctx, lic.Key)
	require.NoError(t, err)
	_, err = c.Licenses.Activate(ctx, lic.Key)
	require.NoError(t, err)
	_, err = c.Licenses.Update(ctx, lic.Key, &billing.LicenseUpdateParams{MaxActivations: 1})
	require.True(t, errors.As(err, &apiErr))
	assert.Equal(t, "maxActivations", apiErr.Field, "the limit cannot drop below the activations recorded")

	_, err = c.Licenses.Get(ctx, "ZZZZ-ZZZZ-ZZZZ-ZZZZ")
	assert.ErrorIs(t, err, billing.ErrNotFound)
}
