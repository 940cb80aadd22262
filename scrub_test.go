package billing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A base URL's password may hold '/', '?', '#' and '@': NewClient's error hides it
// whole, wherever the parser gives up, as the scrubber does in any other text.
func TestNewClientHidesAPasswordHoldingURLDelimiters(t *testing.T) {
	for _, password := range []string{"hunter2/secret", "hunter2?secret", "hunter2#secret", "hunter2@secret", "hunter2/sec?ret#word@42x"} {
		for _, form := range []string{"https://merchant:%s@api.example.com", "https://merchant:%s@api.example.com/v1", "//merchant:%s@api.example.com",
			"http://merchant:%s@api.example.com:port", "ftp://merchant:%s@api.example.com"} {
			raw := fmt.Sprintf(form, password)
			_, err := NewClient(WithBaseURL(raw), WithClientCredentials("id", "s"))
			require.Error(t, err, raw)
			for _, part := range strings.FieldsFunc(password, func(r rune) bool { return strings.ContainsRune("/?#@", r) }) {
				assert.NotContains(t, err.Error(), part, "%s: %v", raw, err)
			}
			assert.NotContains(t, Scrub("dial "+raw+": refused"), password, raw)
		}
	}
}

// What the scrubber masks, one line each.
func TestScrubMasksWhatNamesAPersonOrOpensAnAccount(t *testing.T) {
	for in, want := range map[string]string{
		"GET /v1/mandates/preapproval/233241234567/cancel": "GET /v1/mandates/preapproval/*********567/cancel",
		"account 1441000123456 refused":                    "account **********456 refused",
		"customer ama.mensah@example.com exists":           "customer a***@example.com exists",
		"/v1/customers?email=ama.mensah%40example.com":     "/v1/customers?email=a***%40example.com",
		"Authorization: Basic Y2xpZW50OnNlY3JldA==":        "Authorization: Basic [redacted]",
		"authorization=Bearer sk_live_abc123 sent":         "authorization=Bearer [redacted] sent",
		`{"client_secret":"s3cr3t-value","id":"x"}`:        `{"client_secret":"[redacted]","id":"x"}`,
		"token=abc&limit=10":                               "token=[redacted]&limit=10",
		"password: hunter2":                                "password: [redacted]",
		`Get "https://user:p/a?s#s@api.example.com/v1"`:    `Get "https://***@api.example.com/v1"`,
		"cus_01H8X2 and 2025-01-15 stay":                   "cus_01H8X2 and 2025-01-15 stay",
		"the token expired":                                "the token expired",
	} {
		assert.Equal(t, want, Scrub(in), "%q", in)
	}
	s := NewScrubber("Y2xpZW50OnNlY3JldA", "opaque-secret")
	assert.Equal(t, "key [redacted] and [redacted]", s.Text("key opaque-secret and Y2xpZW50OnNlY3JldA"))
}

// An error handed to an Observer prints only scrubbed text under every verb, keeps its
// chain for errors.Is, and gives errors.As scrubbed copies.
func TestScrubbedErrorUnderEveryVerb(t *testing.T) {
	ue := &url.Error{Op: "Get", URL: "https://api.example.com/v1/mandates/preapproval/233241234567/cancel", Err: errors.New("connection reset")}
	err := NewScrubber().Error(fmt.Errorf("billing: %w", ue))
	for _, verb := range []string{"%v", "%+v", "%s", "%q", "%#v", "%x"} {
		assert.NotContains(t, fmt.Sprintf(verb, err), "233241234567", verb)
	}
	var got *url.Error
	require.ErrorAs(t, err, &got)
	assert.Equal(t, "Get", got.Op, "errors.As finds the error, as a scrubbed copy")
	assert.NotContains(t, got.URL, "233241234567")
	assert.ErrorIs(t, err, ue, "errors.Is walks the chain itself")

	api := &APIError{StatusCode: 404, Message: "233241234567 has no mandate", Body: []byte(`{"message":"233241234567 has no mandate"}`), Method: "GET", Path: "/x"}
	unknown := &OutcomeUnknownError{Method: "POST", Path: "/v1/payments/send", Err: api}
	for _, v := range []error{api, unknown} {
		for _, verb := range []string{"%v", "%+v", "%s", "%q", "%#v"} {
			assert.NotContains(t, fmt.Sprintf(verb, v), "233241234567", verb)
		}
	}
}

// The log handler a Client wraps around WithLogger's scrubs messages, string and error
// attributes, attributes given to With, and groups.
func TestScrubHandlerScrubsEveryAttribute(t *testing.T) {
	var buf bytes.Buffer
	l := scrubLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), NewScrubber("opaque-secret"))
	l.With("base", "233241234567").WithGroup("g").Debug("phone 233241234567", "err", errors.New("for ama@example.com"),
		"s", "opaque-secret", slog.Group("inner", "acct", "1441000123456"))
	out := buf.String()
	for _, leak := range []string{"233241234567", "ama@", "opaque-secret", "1441000123456"} {
		assert.NotContains(t, out, leak)
	}
	assert.Contains(t, out, "*********567")
}

// errObserver keeps the text of every error an Observer is told, under every verb.
type errObserver struct {
	routeObserver
	texts []string
}

func (o *errObserver) AttemptEnd(_ context.Context, a *AttemptInfo) {
	if a.Err != nil {
		o.mu.Lock()
		o.texts = append(o.texts, fmt.Sprintf("%v|%+v|%s|%q|%#v", a.Err, a.Err, a.Err, a.Err, a.Err))
		o.mu.Unlock()
	}
}

func (o *errObserver) CallEnd(_ context.Context, c *CallInfo) {
	if c.Err != nil {
		o.mu.Lock()
		o.texts = append(o.texts, fmt.Sprintf("%v|%+v|%s|%q|%#v", c.Err, c.Err, c.Err, c.Err, c.Err))
		o.mu.Unlock()
	}
}

// A transport failure's error names the request's URL: the Observer is told it scrubbed,
// attempt by attempt, not only the call's error at the end.
func TestObserverIsToldTransportErrorsScrubbed(t *testing.T) {
	srv := newScriptedServer(t, resetConnection)
	obs := &errObserver{}
	c, _ := newTestClient(t, srv.URL, WithObserver(obs), WithRetry(2, 0, 0), WithDisbursementAccount("2020202"))
	_, err := c.Mandates.Cancel(ctx(), "233241234567")
	require.Error(t, err)
	_, err = c.Customers.ListPage(ctx(), &CustomerListParams{Email: "ama.mensah@example.com"})
	require.Error(t, err)
	_, err = c.Payouts.BankTransferStatus(ctx(), &BankTransferStatusParams{ClientReference: "bank1"})
	require.Error(t, err)
	require.GreaterOrEqual(t, len(obs.texts), 6)
	for _, text := range obs.texts {
		for _, leak := range []string{"233241234567", "ama.mensah", "2020202"} {
			assert.NotContains(t, text, leak)
		}
	}
}

// An observer that reaches the SDK's error types with errors.As reads a scrubbed copy:
// the status and code it needs, no raw message, body, path or header. The error the
// merchant's own call returned is left as it was.
func TestObserversReachScrubbedCopiesWithErrorsAs(t *testing.T) {
	s := NewScrubber("s3cr3t-key")
	raw := &APIError{StatusCode: 422, Code: "4000", Message: "233241234567 refused; key s3cr3t-key", Field: "msisdn",
		Body: []byte(`{"msisdn":"233241234567"}`), Path: "/v1/mandates/233241234567/cancel", RequestID: "req-1",
		Header: http.Header{"Set-Cookie": {"session=s3cr3t-key"}, "X-Request-Id": {"req-1"}}}
	for name, err := range map[string]error{
		"an APIError":               raw,
		"an unknown outcome of one": &OutcomeUnknownError{Operation: "payout", Path: raw.Path, Err: raw},
	} {
		observed := s.Error(fmt.Errorf("wrapped: %w", err))
		var got *APIError
		require.True(t, errors.As(observed, &got), name)
		assert.NotSame(t, raw, got, name)
		assert.Equal(t, 422, got.StatusCode, name)
		assert.Equal(t, ResponseCode("4000"), got.Code, name)
		assert.Equal(t, http.Header{"X-Request-Id": {"req-1"}}, got.Header, name)
		for _, field := range []string{got.Message, string(got.Body), got.Path} {
			assert.NotContains(t, field, "241234567", name)
			assert.NotContains(t, field, "s3cr3t-key", name)
		}
		var unknown *OutcomeUnknownError
		if errors.As(observed, &unknown) {
			assert.NotContains(t, unknown.Path, "241234567", name)
			assert.NotContains(t, fmt.Sprintf("%v", unknown.Err), "241234567", name)
			assert.True(t, errors.Is(observed, ErrOutcomeUnknown), name)
		}
	}
	assert.Contains(t, raw.Message, "233241234567", "the merchant's own error is untouched")
}

// Every error type the package exports, found by go/doc, reaches an observer through
// errors.As as a scrubbed copy: each of its fields, filled with a planted number, a
// secret and a header, comes back without them. A type added to the package without a
// place here fails the test.
func TestEveryExportedErrorTypeReachesObserversScrubbed(t *testing.T) {
	types := map[string]reflect.Type{
		"APIError":            reflect.TypeOf(APIError{}),
		"OutcomeUnknownError": reflect.TypeOf(OutcomeUnknownError{}),
		"ValidationError":     reflect.TypeOf(ValidationError{}),
	}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	require.NoError(t, err)
	var files []*ast.File
	for _, f := range pkgs["billing"].Files {
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/billingsdk/billing-go")
	require.NoError(t, err)
	var exported []string
	for _, ty := range p.Types {
		for _, m := range ty.Methods {
			if m.Name == "Error" && m.Decl.Type.Params.NumFields() == 0 { // error's method, not Scrubber.Error
				exported = append(exported, ty.Name)
			}
		}
	}
	assert.ElementsMatch(t, exported, slices.Collect(maps.Keys(types)), "the package's error types and the ones this test fills")

	const planted, secret = "233241234567", "s3cr3t-key"
	s := NewScrubber(secret)
	for name, typ := range types {
		v := reflect.New(typ)
		plant(v.Elem(), planted+" "+secret)
		observed := s.Error(fmt.Errorf("wrapped: %w", v.Interface().(error)))
		got := reflect.New(v.Type())
		require.True(t, errors.As(observed, got.Interface()), name)
		require.NotEqual(t, v.Pointer(), got.Elem().Pointer(), "%s: a copy, not the error itself", name)
		text := readable(got.Elem().Elem())
		assert.NotContains(t, text, "241234567", name)
		assert.NotContains(t, text, secret, name)
		if _, ok := typ.FieldByName("RequestID"); ok {
			assert.Contains(t, text, "req-1", "%s: the request id stays", name)
		}
	}
}

// plant sets every exported field of the struct v to carry text: strings, byte slices,
// errors and headers (beside a request id).
func plant(v reflect.Value, text string) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch {
		case f.Type() == reflect.TypeOf(http.Header(nil)):
			f.Set(reflect.ValueOf(http.Header{"X-Echo": {text}, RequestIDHeader: {"req-1"}}))
		case f.Type() == reflect.TypeOf((*error)(nil)).Elem():
			f.Set(reflect.ValueOf(errors.New(text)))
		case f.Kind() == reflect.String:
			f.SetString(text)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Uint8:
			f.SetBytes([]byte(text))
		}
	}
	if f := v.FieldByName("RequestID"); f.IsValid() {
		f.SetString("req-1")
	}
}

// readable is everything an observer can read from the struct v's exported fields.
func readable(v reflect.Value) string {
	var b strings.Builder
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		f := v.Field(i)
		if err, ok := f.Interface().(error); ok && err != nil {
			b.WriteString(err.Error() + "\n")
			continue
		}
		fmt.Fprintf(&b, "%s\n", f.Interface())
	}
	return b.String()
}
