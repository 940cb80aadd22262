package billing

import (
	"net/url"
	"strings"
)

// WebCheckoutBranding says whether the web SDK's checkout shows the service's branding.
type WebCheckoutBranding string

// The branding choices of the web SDK's config.branding.
const (
	WebCheckoutBrandingEnabled  WebCheckoutBranding = "enabled"
	WebCheckoutBrandingDisabled WebCheckoutBranding = "disabled"
)

// WebCheckoutParams is what the backend adds to a checkout session for the web SDK.
// PublicKey and CallbackURL are required.
type WebCheckoutParams struct {
	// PublicKey is the account's public key from the dashboard's developer settings: the
	// only credential the browser ever sees. Never the client secret or the secret key.
	PublicKey string
	// CallbackURL receives the transaction callback of the payment (a
	// [TransactionCallback]); feed it to a Tracker or a webhook handler.
	CallbackURL string
	// Branding is optional; the service decides when it is empty.
	Branding WebCheckoutBranding
}

// WebPurchaseInfo is the web checkout SDK's purchaseInfo.
type WebPurchaseInfo struct {
	// Amount in minor units: the session's.
	Amount              int64  `json:"amount"`
	PurchaseDescription string `json:"purchaseDescription"`
	CustomerPhoneNumber string `json:"customerPhoneNumber"`
	// ClientReference names the session: its metadata.clientReference, or its reference.
	ClientReference string `json:"clientReference"`
}

// WebCheckoutConfig is the web SDK's config.
type WebCheckoutConfig struct {
	PublicKey   string              `json:"publicKey"`
	Branding    WebCheckoutBranding `json:"branding,omitempty"`
	CallbackURL string              `json:"callbackUrl"`
}

// WebCheckout is everything a merchant's page hands the web SDK for one session: render
// it into the page (html/template writes it as JSON inside a script element) and pass
// PurchaseInfo and Config to the SDK's initIframe, openModal or redirect. It holds no
// secret.
type WebCheckout struct {
	PurchaseInfo WebPurchaseInfo   `json:"purchaseInfo"`
	Config       WebCheckoutConfig `json:"config"`
	// ScriptURL is the web SDK script to include, served from the checkout's host.
	ScriptURL string `json:"scriptUrl"`
	// CheckoutURL is the session's hosted page, for a plain link or redirect.
	CheckoutURL string `json:"checkoutUrl"`
}

// NewWebCheckout gives a merchant's page what the web SDK needs for a session the backend
// created with Payments.CreateCheckout: the session must be PENDING, have a description
// and a customer phone (the SDK's purchaseInfo requires both), and its CheckoutURL. The
// SDK finds the session by its metadata.clientReference, or by its reference when it has
// none.
//
// Bad input is a *ValidationError. A PublicKey that is a secret key ("sk_…") is refused:
// the secret never leaves the server.
func NewWebCheckout(p *Payment, params *WebCheckoutParams) (*WebCheckout, error) {
	if err := validateWebCheckout(p, params); err != nil {
		return nil, err
	}
	clientReference := p.Reference
	if ref, ok := p.Metadata["clientReference"].(string); ok && ref != "" {
		clientReference = ref
	}
	checkout, _ := url.Parse(p.CheckoutURL) // checked by validateWebCheckout
	return &WebCheckout{
		PurchaseInfo: WebPurchaseInfo{
			Amount:              p.Amount,
			PurchaseDescription: p.Description,
			CustomerPhoneNumber: p.Customer.Phone,
			ClientReference:     clientReference,
		},
		Config:      WebCheckoutConfig{PublicKey: params.PublicKey, Branding: params.Branding, CallbackURL: params.CallbackURL},
		ScriptURL:   (&url.URL{Scheme: checkout.Scheme, Host: checkout.Host, Path: "/sdk/checkout.js"}).String(),
		CheckoutURL: p.CheckoutURL,
	}, nil
}

func validateWebCheckout(p *Payment, params *WebCheckoutParams) error {
	if p == nil {
		return invalid("payment", "is required: the Payment that CreateCheckout returned")
	}
	if params == nil {
		return invalid("params", "are required")
	}
	var status error
	if p.Status != PaymentStatusPending {
		status = invalid("payment.status", "must be PENDING: this session is "+string(p.Status)+" and can no longer be paid")
	}
	var secret error
	if strings.HasPrefix(params.PublicKey, "sk_") {
		secret = invalid("publicKey", "is a secret key: pass the public key, the secret never leaves the server")
	}
	return firstError(
		required("payment.reference", p.Reference),
		status,
		requiredURL("payment.checkoutUrl", p.CheckoutURL),
		required("payment.description", p.Description),
		required("payment.customer.phone", p.Customer.Phone),
		required("publicKey", params.PublicKey),
		secret,
		requiredURL("callbackUrl", params.CallbackURL),
		oneOf("branding", params.Branding, WebCheckoutBrandingEnabled, WebCheckoutBrandingDisabled),
	)
}
