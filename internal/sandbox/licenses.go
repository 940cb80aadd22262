package sandbox

import (
	"net/http"
	"strings"
	"time"
)

// The license states of SPEC "States and transitions › License".
const (
	licenseActive    = "ACTIVE"
	licenseSuspended = "SUSPENDED"
	licenseExpired   = "EXPIRED"
	licenseRevoked   = "REVOKED"
)

// Codes of the sandbox's error body for licenses. The spec gives activation
// failures HTTP 400 and nothing more; distinct codes let a merchant tell them
// apart without reading the message.
const (
	// CodeLicenseNotActive answers an activation of a SUSPENDED license.
	CodeLicenseNotActive = "license_not_active"
	// CodeLicenseExpired answers an activation of an expired license, and a
	// status change of one whose expiry has passed.
	CodeLicenseExpired = "license_expired"
	// CodeActivationLimitReached answers an activation when activations
	// equals maxActivations.
	CodeActivationLimitReached = "activation_limit_reached"
	// CodeLicenseRevoked answers an activation or update of a revoked license.
	CodeLicenseRevoked = "license_revoked"
)

// licenseKeyAlphabet leaves out 0, O, 1 and I, which readers confuse. Its 32
// letters make a random byte's low 5 bits an unbiased pick.
const licenseKeyAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// license is a license as the wire shows it (SPEC "License").
type license struct {
	ID             string          `json:"id"`
	Key            string          `json:"key"`
	Status         string          `json:"status"`
	Environment    string          `json:"environment"`
	Activations    int64           `json:"activations"`
	MaxActivations int64           `json:"maxActivations"`
	ExpiresAt      *timestamp      `json:"expiresAt"`
	RevokedAt      *timestamp      `json:"revokedAt"`
	Metadata       map[string]any  `json:"metadata"`
	CreatedAt      timestamp       `json:"createdAt"`
	Customer       licenseCustomer `json:"customer"`
	Product        *licenseProduct `json:"product,omitempty"` // present when bound

	customerID, productID string
}

type licenseCustomer struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

type licenseProduct struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// licenseValidation is the answer of a validation (GET by key).
type licenseValidation struct {
	ID             string     `json:"id"`
	Key            string     `json:"key"`
	Status         string     `json:"status"`
	Activations    int64      `json:"activations"`
	MaxActivations int64      `json:"maxActivations"`
	ExpiresAt      *timestamp `json:"expiresAt"`
}

// licenseActivation is the answer of an activation.
type licenseActivation struct {
	ID             string `json:"id"`
	Key            string `json:"key"`
	Status         string `json:"status"`
	Activations    int64  `json:"activations"`
	MaxActivations int64  `json:"maxActivations"`
}

// licenseRevocation is the answer of a revoke.
type licenseRevocation struct {
	Key       string     `json:"key"`
	Status    string     `json:"status"`
	RevokedAt *timestamp `json:"revokedAt"`
}

type licenseStore struct {
	table table[license]
	byKey map[string]string // key -> id
}

func licenseRoutes(s *Server) []route {
	return []route{
		{pattern: "POST /v1/licenses", auth: authBilling, scope: ScopeLicensesWrite, handler: s.createLicense},
		{pattern: "GET /v1/licenses/{key}", auth: authBilling, scope: ScopeLicensesRead, handler: s.validateLicense},
		{pattern: "POST /v1/licenses/{key}/activate", auth: authBilling, scope: ScopeLicensesWrite, handler: s.activateLicense},
		{pattern: "PATCH /v1/licenses/{key}", auth: authBilling, scope: ScopeLicensesWrite, handler: s.updateLicense},
		{pattern: "DELETE /v1/licenses/{key}", auth: authBilling, scope: ScopeLicensesWrite, handler: s.revokeLicense},
	}
}

func (s *Server) createLicense(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	l := &license{Status: licenseActive, Environment: "TEST", MaxActivations: 1}
	l.customerID = f.requiredString("customerId")
	l.productID, _ = f.optionalString("productId")
	if n, ok := f.positiveInteger("maxActivations"); ok {
		l.MaxActivations = n
	}
	expiresAt := nullableField(f, "expiresAt", f.timestamp)
	l.Metadata, _ = f.metadata("metadata")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	created, err := s.insertLicense(l, expiresAt)
	writeResult(w, http.StatusCreated, created, err)
}

func (s *Server) insertLicense(l *license, expiresAt nullable[time.Time]) (license, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.Now()
	if expiresAt.set {
		if err := requireFuture(expiresAt.value, now); err != nil {
			return license{}, err
		}
		l.ExpiresAt = &timestamp{expiresAt.value}
	}
	if _, ok := s.customers.table.get(l.customerID); !ok {
		e := notFoundError("customer", l.customerID)
		e.field = "customerId"
		return license{}, e
	}
	if _, ok := s.products.table.get(l.productID); l.productID != "" && !ok {
		e := notFoundError("product", l.productID)
		e.field = "productId"
		return license{}, e
	}
	if s.licenses.byKey == nil {
		s.licenses.byKey = make(map[string]string)
	}
	l.Key = newLicenseKey()
	for s.licenses.byKey[l.Key] != "" {
		l.Key = newLicenseKey()
	}
	l.ID = newID("lic_")
	l.CreatedAt = timestamp{now}
	s.licenses.byKey[l.Key] = l.ID
	s.licenses.table.insert(l.ID, l)
	s.scheduleExpiry(l)
	return s.licenseView(l), nil
}

// licenseView returns l with its customer and product as they are now. Call
// it with s.mu held.
func (s *Server) licenseView(l *license) license {
	v := *l
	if c, ok := s.customers.table.get(l.customerID); ok {
		v.Customer = licenseCustomer{ID: c.ID, Name: c.Name, Email: c.Email}
	}
	if p, ok := s.products.table.get(l.productID); ok {
		v.Product = &licenseProduct{ID: p.ID, Name: p.Name}
	}
	return v
}

// scheduleExpiry arranges for l to become EXPIRED when the sandbox clock
// reaches its expiresAt. A task whose moment is no longer the license's
// expiresAt (the expiry was moved or removed) does nothing. Call it with s.mu
// held.
func (s *Server) scheduleExpiry(l *license) {
	if l.ExpiresAt == nil {
		return
	}
	s.scheduleJob(l.ExpiresAt.Time, expireLicenseJob{ID: l.ID, At: *l.ExpiresAt})
}

// expireIfDue moves l to EXPIRED when now has reached its expiresAt. The
// scheduled task does this on time; handlers call it too, so that with the
// wall clock a request just after the expiry never sees a stale status.
func expireIfDue(l *license, now time.Time) {
	if (l.Status == licenseActive || l.Status == licenseSuspended) && l.ExpiresAt != nil && !now.Before(l.ExpiresAt.Time) {
		l.Status = licenseExpired
	}
}

// withLicense runs change (when not nil) on the license with key under the
// lock, after bringing its expiry up to date, and returns a view of the
// result. A change that fails leaves the license as it was.
func (s *Server) withLicense(key string, change func(*license, time.Time) error) (license, error) {
	if !isLicenseKey(key) {
		return license{}, validationError("key", "key must be four groups of four letters or digits joined by hyphens, such as ABCD-EFGH-JKLM-NPQR")
	}
	key = strings.ToUpper(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.licenses.table.get(s.licenses.byKey[key])
	if !ok {
		return license{}, notFoundError("license", key)
	}
	now := s.Now()
	expireIfDue(l, now)
	if change != nil {
		if err := change(l, now); err != nil {
			return license{}, err
		}
	}
	return s.licenseView(l), nil
}

// validateLicense answers the license's standing; a license that is not
// ACTIVE is still described, with its status.
func (s *Server) validateLicense(w http.ResponseWriter, r *http.Request) {
	l, err := s.withLicense(r.PathValue("key"), nil)
	writeResult(w, http.StatusOK, licenseValidation{ID: l.ID, Key: l.Key, Status: l.Status,
		Activations: l.Activations, MaxActivations: l.MaxActivations, ExpiresAt: l.ExpiresAt}, err)
}

// activateLicense records one activation of an ACTIVE, unexpired license
// below its limit; every refusal is HTTP 400 with its own code (SPEC "Errors").
func (s *Server) activateLicense(w http.ResponseWriter, r *http.Request) {
	l, err := s.withLicense(r.PathValue("key"), func(l *license, _ time.Time) error {
		switch {
		case l.Status == licenseRevoked:
			return licenseError(CodeLicenseRevoked, "license %s is revoked: it can never be activated again", l.Key)
		case l.Status == licenseExpired:
			return licenseError(CodeLicenseExpired, "license %s expired at %s", l.Key, l.ExpiresAt.UTC().Format(timeLayout))
		case l.Status != licenseActive:
			return licenseError(CodeLicenseNotActive, "license %s is %s: only an ACTIVE license can be activated", l.Key, l.Status)
		case l.Activations >= l.MaxActivations:
			return licenseError(CodeActivationLimitReached, "license %s has reached its %d activation(s)", l.Key, l.MaxActivations)
		}
		l.Activations++
		return nil
	})
	writeResult(w, http.StatusOK, licenseActivation{ID: l.ID, Key: l.Key, Status: l.Status,
		Activations: l.Activations, MaxActivations: l.MaxActivations}, err)
}

// updateLicense modifies a license that is not revoked. The spec does not
// show its answer; the sandbox answers the whole license, as on create.
func (s *Server) updateLicense(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	status, hasStatus := f.enum("status", licenseActive, licenseSuspended)
	maxActivations, hasMax := f.positiveInteger("maxActivations")
	expiresAt := nullableField(f, "expiresAt", f.timestamp)
	metadata, hasMetadata := f.metadata("metadata")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	updated, err := s.withLicense(r.PathValue("key"), func(l *license, now time.Time) error {
		if l.Status == licenseRevoked {
			return licenseError(CodeLicenseRevoked, "license %s is revoked: it can no longer be updated", l.Key)
		}
		if expiresAt.set {
			if err := requireFuture(expiresAt.value, now); err != nil {
				return err
			}
		}
		if hasMax && maxActivations < l.Activations {
			return validationError("maxActivations", "maxActivations must be at least the %d activation(s) already recorded", l.Activations)
		}
		newExpiry := l.ExpiresAt
		if expiresAt.set || expiresAt.null {
			newExpiry = nil
			if expiresAt.set {
				newExpiry = &timestamp{expiresAt.value}
			}
		}
		if hasStatus && l.Status == licenseExpired && newExpiry != nil && !now.Before(newExpiry.Time) {
			return licenseError(CodeLicenseExpired, "license %s expired at %s: send a later expiresAt, or null to remove it, with the new status", l.Key, newExpiry.UTC().Format(timeLayout))
		}
		if hasStatus {
			l.Status = status
		}
		if hasMax {
			l.MaxActivations = maxActivations
		}
		if newExpiry != l.ExpiresAt {
			l.ExpiresAt = newExpiry
			s.scheduleExpiry(l)
		}
		if hasMetadata {
			l.Metadata = metadata // replaced wholesale, or cleared by null
		}
		return nil
	})
	writeResult(w, http.StatusOK, updated, err)
}

// revokeLicense revokes a license for good. Revoking it again answers the
// same, with the first revokedAt.
func (s *Server) revokeLicense(w http.ResponseWriter, r *http.Request) {
	l, err := s.withLicense(r.PathValue("key"), func(l *license, now time.Time) error {
		if l.Status != licenseRevoked {
			l.Status = licenseRevoked
			l.RevokedAt = &timestamp{now}
		}
		return nil
	})
	writeResult(w, http.StatusOK, licenseRevocation{Key: l.Key, Status: l.Status, RevokedAt: l.RevokedAt}, err)
}

func licenseError(code, format string, args ...any) *apiError {
	e := validationError("", format, args...)
	e.code = code
	return e
}

func requireFuture(t, now time.Time) error {
	if !t.After(now) {
		return validationError("expiresAt", "expiresAt must be in the future (the sandbox's time is %s)", now.UTC().Format(timeLayout))
	}
	return nil
}

// newLicenseKey returns a random key of four groups of four characters
// joined by hyphens (SPEC "License").
func newLicenseKey() string {
	var drawn [16]byte
	random(drawn[:])
	key := make([]byte, 0, 19)
	for i, b := range drawn {
		if i > 0 && i%4 == 0 {
			key = append(key, '-')
		}
		key = append(key, licenseKeyAlphabet[b&31])
	}
	return string(key)
}

// isLicenseKey reports whether s has the shape of a key, in either case.
func isLicenseKey(s string) bool {
	if len(s) != 19 {
		return false
	}
	for i, c := range []byte(s) {
		if i%5 == 4 {
			if c != '-' {
				return false
			}
			continue
		}
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
