package sandbox

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// authKind is how a route authenticates its caller (SPEC "Authentication").
type authKind int

const (
	// authPublic takes no credentials: pages a payer's browser opens.
	authPublic authKind = iota + 1
	// authBilling takes Basic client credentials or a Bearer secret key:
	// customers, products, credits, meters, licenses, sandbox controls.
	authBilling
	// authBasic takes Basic client credentials only: money movement,
	// mandates, send-to-bank.
	authBasic
	// authSession takes a Bearer session token or secret key: the short
	// /subscriptions paths.
	authSession
)

// accepts names the credentials a kind takes, for the 401 message.
func (k authKind) accepts() string {
	switch k {
	case authBasic:
		return "Basic client credentials"
	case authSession:
		return "a Bearer session token or secret key"
	default:
		return "Basic client credentials or a Bearer secret key"
	}
}

// credentials holds SHA-256 digests of the configured secrets, so a check
// compares equal-length values in constant time and leaks neither content nor length.
type credentials struct {
	clientID, clientSecret, secretKey [sha256.Size]byte
	sessionTokens                     [][sha256.Size]byte
}

func newCredentials(cfg Config) credentials {
	c := credentials{
		clientID:     sha256.Sum256([]byte(cfg.ClientID)),
		clientSecret: sha256.Sum256([]byte(cfg.ClientSecret)),
		secretKey:    sha256.Sum256([]byte(cfg.SecretKey)),
	}
	for _, tok := range cfg.SessionTokens {
		c.sessionTokens = append(c.sessionTokens, sha256.Sum256([]byte(tok)))
	}
	return c
}

func secretMatches(given string, want [sha256.Size]byte) bool {
	got := sha256.Sum256([]byte(given))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

func (c credentials) basic(id, secret string) bool {
	idOK := secretMatches(id, c.clientID)
	secretOK := secretMatches(secret, c.clientSecret) // checked even when the id is wrong
	return idOK && secretOK
}

func (c credentials) session(token string) bool {
	ok := false
	for _, want := range c.sessionTokens {
		ok = secretMatches(token, want) || ok
	}
	return ok
}

// unauthorized is the 401 answer: the problem, then what the endpoint takes.
func unauthorized(problem string, kind authKind) *apiError {
	return &apiError{status: http.StatusUnauthorized, code: CodeKeysMismatch, message: problem + ": this endpoint takes " + kind.accepts()}
}

// authenticate checks the Authorization header of r against what kind takes.
func (s *Server) authenticate(kind authKind, r *http.Request) error {
	if kind == authPublic {
		return nil
	}
	header := r.Header.Get("Authorization")
	scheme, credential, _ := strings.Cut(header, " ")
	credential = strings.TrimSpace(credential)
	switch {
	case header == "":
		return unauthorized("missing credentials", kind)
	case strings.EqualFold(scheme, "Basic") && kind != authSession:
		id, secret, ok := r.BasicAuth()
		if ok && s.creds.basic(id, secret) {
			return nil
		}
	case strings.EqualFold(scheme, "Bearer") && kind != authBasic:
		if secretMatches(credential, s.creds.secretKey) || kind == authSession && s.creds.session(credential) {
			return nil
		}
	default:
		return unauthorized("wrong kind of credentials", kind)
	}
	return unauthorized("invalid credentials", kind)
}

// ipAllowed reports whether the connection's address is in the allowlist.
// Forwarding headers are ignored: the sandbox is reached directly.
func (s *Server) ipAllowed(r *http.Request) bool {
	addr, err := netip.ParseAddr(r.RemoteAddr)
	if addrPort, portErr := netip.ParseAddrPort(r.RemoteAddr); portErr == nil {
		addr, err = addrPort.Addr(), nil
	}
	if err != nil {
		return false
	}
	addr = addr.Unmap().WithZone("")
	return slices.ContainsFunc(s.cfg.AllowIPs, func(p netip.Prefix) bool { return p.Contains(addr) })
}
