package billing

import (
	"context"
	"errors"
	"time"
)

// LicensesService issues, validates, activates, modifies and revokes license keys.
type LicensesService service

// LicenseStatus is the state of a license.
type LicenseStatus string

// The license states.
const (
	// LicenseStatusActive: can record activations.
	LicenseStatusActive LicenseStatus = "ACTIVE"
	// LicenseStatusSuspended: cannot record activations until set ACTIVE again.
	LicenseStatusSuspended LicenseStatus = "SUSPENDED"
	// LicenseStatusExpired: past its expiry date, inactive.
	LicenseStatusExpired LicenseStatus = "EXPIRED"
	// LicenseStatusRevoked: revoked for good; no activation or update is accepted.
	LicenseStatusRevoked LicenseStatus = "REVOKED"
)

// LicenseEnvironment says whether a license was issued in test mode or live mode.
type LicenseEnvironment string

// The license environments.
const (
	LicenseEnvironmentTest LicenseEnvironment = "TEST"
	LicenseEnvironmentLive LicenseEnvironment = "LIVE"
)

// Error codes the service sends when it refuses to activate or update a license
// (HTTP 400). Each matches its sentinel with errors.Is.
const (
	CodeLicenseNotActive       ResponseCode = "license_not_active"
	CodeLicenseExpired         ResponseCode = "license_expired"
	CodeActivationLimitReached ResponseCode = "activation_limit_reached"
	CodeLicenseRevoked         ResponseCode = "license_revoked"
)

// Sentinels that tell license refusals apart with errors.Is. The error is an *APIError
// that also matches ErrInvalidRequest.
var (
	// ErrLicenseNotActive: the license is SUSPENDED, so it cannot be activated.
	ErrLicenseNotActive = errors.New("billing: license not active")
	// ErrLicenseExpired: the license is past its expiry; to use it again, update it
	// with a later ExpiresAt (or Null) together with a status.
	ErrLicenseExpired = errors.New("billing: license expired")
	// ErrActivationLimit: activations have reached maxActivations.
	ErrActivationLimit = errors.New("billing: license activation limit reached")
	// ErrLicenseRevoked: the license is revoked, for good.
	ErrLicenseRevoked = errors.New("billing: license revoked")
)

// License is a software license key and its standing. Get, Activate and Revoke answer
// part of it (see each); Create and Update answer all of it.
type License struct {
	ID string `json:"id"`
	// Key is four groups of four characters joined by hyphens.
	Key            string             `json:"key"`
	Status         LicenseStatus      `json:"status"`
	Environment    LicenseEnvironment `json:"environment,omitempty"`
	Activations    int                `json:"activations"`
	MaxActivations int                `json:"maxActivations"`
	// ExpiresAt is zero for a license that never expires.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	RevokedAt time.Time `json:"revokedAt,omitzero"`
	Metadata  Metadata  `json:"metadata,omitempty"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	// Customer is who the license was issued to.
	Customer LicenseCustomer `json:"customer,omitzero"`
	// Product is the product the license is bound to; zero when it is bound to none.
	Product LicenseProduct `json:"product,omitzero"`
}

// LicenseCustomer is the customer a license was issued to.
type LicenseCustomer struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// LicenseProduct is the product a license is bound to.
type LicenseProduct struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// LicenseCreateParams issues a license to a customer. CustomerID is required.
type LicenseCreateParams struct {
	CustomerID string `json:"customerId"`
	// ProductID binds the license to a product.
	ProductID string `json:"productId,omitempty"`
	// MaxActivations defaults to 1.
	MaxActivations int `json:"maxActivations,omitempty"`
	// ExpiresAt, when set, must be in the future by the service's clock; the license
	// becomes EXPIRED then.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	Metadata  Metadata  `json:"metadata,omitzero"`
}

func (p *LicenseCreateParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return firstError(
		required("customerId", p.CustomerID),
		notNegative("maxActivations", p.MaxActivations),
		p.Metadata.validate("metadata"),
	)
}

// LicenseUpdateParams modifies a license that is not revoked. Every field is optional:
// a zero field is left as it is.
type LicenseUpdateParams struct {
	// Status is LicenseStatusActive or LicenseStatusSuspended. An expired license takes
	// a new status only together with a later ExpiresAt or Null.
	Status LicenseStatus `json:"status,omitempty"`
	// MaxActivations may not go below the activations already recorded.
	MaxActivations int `json:"maxActivations,omitempty"`
	// ExpiresAt moves the expiry (to a future moment) or, with Null, removes it.
	ExpiresAt Nullable[time.Time] `json:"expiresAt,omitzero"`
	// Metadata, when given, replaces the stored metadata wholesale (an empty non-nil
	// map clears it).
	Metadata Metadata `json:"metadata,omitzero"`
}

func (p *LicenseUpdateParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return firstError(
		oneOf("status", p.Status, LicenseStatusActive, LicenseStatusSuspended),
		notNegative("maxActivations", p.MaxActivations),
		p.Metadata.validate("metadata"),
	)
}

// Create issues a license: ACTIVE, with no activations and a newly generated key.
func (s *LicensesService) Create(ctx context.Context, p *LicenseCreateParams) (*License, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return send[License](ctx, s.client, epLicenseCreate.op(p))
}

// Get validates a key: it answers the license's ID, Key, Status, Activations,
// MaxActivations and ExpiresAt. A license that is not ACTIVE is still answered; check
// its Status.
func (s *LicensesService) Get(ctx context.Context, key string) (*License, error) {
	if err := licenseKey(key); err != nil {
		return nil, err
	}
	return send[License](ctx, s.client, epLicenseGet.op(nil, seg("key", key)))
}

// Activate records one activation and answers the license's ID, Key, Status,
// Activations and MaxActivations. It is refused when the license is not ACTIVE
// (ErrLicenseNotActive), expired (ErrLicenseExpired), revoked (ErrLicenseRevoked) or
// at its limit (ErrActivationLimit).
//
// An activation is not retried after it may have reached the service: a lost answer
// could otherwise count twice. Its error then matches ErrOutcomeUnknown: Get the license
// to see its Activations before activating again.
func (s *LicensesService) Activate(ctx context.Context, key string) (*License, error) {
	if err := licenseKey(key); err != nil {
		return nil, err
	}
	return send[License](ctx, s.client, epLicenseActivate.op(nil, seg("key", key)))
}

// Update modifies a license and answers all of it. A revoked license refuses every
// update (ErrLicenseRevoked).
func (s *LicensesService) Update(ctx context.Context, key string, p *LicenseUpdateParams) (*License, error) {
	if err := firstError(licenseKey(key), p.validate()); err != nil {
		return nil, err
	}
	return send[License](ctx, s.client, epLicenseUpdate.op(p, seg("key", key)))
}

// Revoke revokes a license for good and answers its Key, Status and RevokedAt.
// Revoking it again answers the same. A lost answer after it was sent is an error
// matching ErrOutcomeUnknown: Get the license to see its Status.
func (s *LicensesService) Revoke(ctx context.Context, key string) (*License, error) {
	if err := licenseKey(key); err != nil {
		return nil, err
	}
	return send[License](ctx, s.client, epLicenseRevoke.op(nil, seg("key", key)))
}

// licenseKey checks the shape of a key: four groups of four letters or digits joined
// by hyphens, in either case.
func licenseKey(key string) error {
	const rule = "must be four groups of four letters or digits joined by hyphens, such as ABCD-EFGH-JKLM-NPQR"
	if key == "" {
		return invalid("key", "is required")
	}
	if len(key) != 19 {
		return invalid("key", rule)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if i%5 == 4 {
			if c != '-' {
				return invalid("key", rule)
			}
		} else if (c < '0' || c > '9') && (c|0x20 < 'a' || c|0x20 > 'z') {
			return invalid("key", rule)
		}
	}
	return nil
}

// notNegative checks an optional count whose zero means the service's default.
func notNegative(field string, v int) error {
	if v < 0 {
		return invalid(field, "must be a positive integer")
	}
	return nil
}
