package billing

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// personalFieldName is this test's own statement of which field names hold a
// credential, a phone or MSISDN, an account number or an email. PublicKey is the one
// credential meant for the browser.
var personalFieldName = regexp.MustCompile(`(?i)secret|token|password|otpcode|authorization|phone|msisdn|accountnumber|customernumber|disbursementaccount|email`)

// personalTypes holds a zero value of every exported type of the package with such a
// field. TestEveryPersonalTypeIsRegistered keeps it complete.
var personalTypes = []any{
	CustomerCreateParams{}, CustomerUpdateParams{}, CustomerListParams{}, Customer{}, CustomerSummary{}, LicenseCustomer{},
	CheckoutCustomer{}, PaymentCustomer{}, MobileMoneyDetail{}, WebPurchaseInfo{}, ReceiveParams{}, DirectReceive{},
	SendParams{}, DirectSend{}, SendTransaction{}, BankTransferParams{}, BankTransferStatusParams{}, BankTransferTransaction{},
	MandateCreateParams{}, MandateVerifyOTPParams{}, MandateReactivateParams{}, Mandate{}, DirectDebitParams{}, MandateCallback{},
}

// TestEveryPersonalTypeIsRegistered parses the package's source and lists every exported
// struct type with an exported field whose name says it holds a credential or a personal
// number: each must be in personalTypes, so TestSecretsUnderEveryVerb checks it.
func TestEveryPersonalTypeIsRegistered(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	require.NoError(t, err)
	var found []string
	for _, pkg := range pkgs {
		for _, file := range pkg.Files {
			ast.Inspect(file, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok || !ts.Name.IsExported() {
					return true
				}
				if st, ok := ts.Type.(*ast.StructType); ok {
					for _, field := range st.Fields.List {
						for _, name := range field.Names {
							if name.IsExported() && personalFieldName.MatchString(name.Name) && !slices.Contains(found, ts.Name.Name) {
								found = append(found, ts.Name.Name)
							}
						}
					}
				}
				return true
			})
		}
	}
	var registered []string
	for _, v := range personalTypes {
		registered = append(registered, reflect.TypeOf(v).Name())
	}
	slices.Sort(found)
	slices.Sort(registered)
	require.Equal(t, found, registered, "every exported type holding a credential or a personal number is in personalTypes")
}

// canaryFor returns a distinct value of the kind the field's name says it holds.
func canaryFor(name string, n int) string {
	lower := strings.ToLower(name)
	switch {
	case strings.Contains(lower, "email"):
		return fmt.Sprintf("canary.person%d@example.com", n)
	case personalFieldName.MatchString(lower) && (strings.Contains(lower, "secret") || strings.Contains(lower, "token") ||
		strings.Contains(lower, "password") || strings.Contains(lower, "otp") || strings.Contains(lower, "authorization")):
		return fmt.Sprintf("CNRY-%04d", 1000+n)
	}
	return fmt.Sprintf("2339876%05d", 10000+n)
}

// fillCanaries sets every personal field of v (a settable struct), nested structs
// included, to a canary, and returns the canaries.
func fillCanaries(t *testing.T, v reflect.Value, canaries *[]string) {
	for i := range v.NumField() {
		sf, fv := v.Type().Field(i), v.Field(i)
		if !sf.IsExported() {
			continue
		}
		switch {
		case personalFieldName.MatchString(sf.Name) && fv.Kind() == reflect.String:
			c := canaryFor(sf.Name, len(*canaries))
			fv.SetString(c)
			*canaries = append(*canaries, c)
		case personalFieldName.MatchString(sf.Name) && fv.Type() == reflect.TypeOf(Nullable[string]{}):
			c := canaryFor(sf.Name, len(*canaries))
			fv.Set(reflect.ValueOf(Value(c)))
			*canaries = append(*canaries, c)
		case personalFieldName.MatchString(sf.Name):
			t.Fatalf("%s.%s: a personal field of type %s the test cannot fill", v.Type(), sf.Name, fv.Type())
		case fv.Kind() == reflect.Struct:
			fillCanaries(t, fv, canaries)
		}
	}
}

// printedLeaks formats v under every verb and through slog's text and JSON handlers and
// reports every canary, or the part of it that must stay hidden, found in the output.
func printedLeaks(v any, canaries []string) []string {
	var outputs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.4v", "%-v", "%T"} {
		outputs = append(outputs, fmt.Sprintf(verb, v))
		outputs = append(outputs, fmt.Sprintf(verb, []any{v}))
		outputs = append(outputs, fmt.Sprintf(verb, struct{ Inner any }{v}))
	}
	outputs = append(outputs, fmt.Sprint(v), fmt.Sprintln(v))
	for _, handler := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		var b bytes.Buffer
		logger := slog.New(handler(&b))
		logger.Info("value", "v", v)
		logger.Info("value", slog.Any("v", v))
		logger.Info("group", slog.Group("g", slog.Any("v", v)))
		outputs = append(outputs, b.String())
	}
	var leaks []string
	for _, out := range outputs {
		for _, c := range canaries {
			hidden := c
			if isDigits(c) {
				hidden = c[:len(c)-3] // the last three digits may show
			} else if at := strings.IndexByte(c, '@'); at > 0 {
				hidden = c[1:at] // the first character and the domain may show
			}
			for _, form := range []string{hidden, hex.EncodeToString([]byte(hidden)), strings.ToUpper(hex.EncodeToString([]byte(hidden)))} {
				if strings.Contains(out, form) {
					leaks = append(leaks, fmt.Sprintf("%q in %q", form, out))
				}
			}
		}
	}
	return leaks
}

// TestSecretsUnderEveryVerb fills every personal field of every registered type with a
// canary and prints the value and a pointer to it under every fmt verb, nested in a
// slice and a struct, and through slog's text and JSON handlers: no canary appears.
func TestSecretsUnderEveryVerb(t *testing.T) {
	fields := 0
	for _, zero := range personalTypes {
		typ := reflect.TypeOf(zero)
		t.Run(typ.Name(), func(t *testing.T) {
			ptr := reflect.New(typ)
			var canaries []string
			fillCanaries(t, ptr.Elem(), &canaries)
			require.NotEmpty(t, canaries)
			fields += len(canaries)
			for _, v := range []any{ptr.Elem().Interface(), ptr.Interface()} {
				assert.Empty(t, printedLeaks(v, canaries))
			}
			assert.Contains(t, fmt.Sprintf("%+v", ptr.Elem().Interface()), "*", "redacted, not dropped")
			assert.Contains(t, fmt.Sprintf("%#v", ptr.Elem().Interface()), "billing."+typ.Name()+"{")
		})
	}
	t.Logf("%d types, %d personal fields printed under every verb", len(personalTypes), fields)
}

// TestClientPrintsNoCredentials prints a Client, and every option that configured it,
// under every verb and through slog: neither the credentials nor the disbursement
// account appear.
func TestClientPrintsNoCredentials(t *testing.T) {
	const (
		clientID     = "canary-client-id"
		clientSecret = "canary-client-secret"
		secretKey    = "sk_canary_secret_key"
		sessionToken = "sess_canary_session_token"
		account      = "2339876543210"
	)
	opts := []Option{WithBaseURL(mockBaseURL), WithClientCredentials(clientID, clientSecret), WithSecretKey(secretKey),
		WithSessionToken(sessionToken), WithDisbursementAccount(account)}
	c, err := NewClient(opts...)
	require.NoError(t, err)
	basic := base64.StdEncoding.EncodeToString([]byte(clientID + ":" + clientSecret))
	canaries := []string{clientSecret, secretKey, sessionToken, basic, account}
	for _, v := range []any{c, *c} {
		assert.Empty(t, printedLeaks(v, canaries))
	}
	for _, o := range opts {
		assert.Empty(t, printedLeaks(o, canaries))
	}
	assert.Contains(t, fmt.Sprintf("%v", c), mockBaseURL)
	assert.Contains(t, fmt.Sprintf("%+v", c), "client credentials, secret key, session token (redacted)")
}
