package billing

import (
	"bufio"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceField is one params field that carries a merchant reference, and how to
// validate params holding a value in it.
type referenceField struct {
	ref      reference
	field    string // the Field of the ValidationError that refuses it
	required bool   // an empty value is refused
	// validate checks params that are valid but for the reference, which holds v.
	validate func(v string) error
}

// referenceFields lists every params field that carries a merchant reference, under the
// name the README's table of references gives it ("" when it is not in the table).
var referenceFields = map[string]referenceField{
	"ReceiveParams.ClientReference": {referenceReceive, "ClientReference", true, func(v string) error {
		return (&ReceiveParams{Amount: 500, Phone: "233241234567", Provider: ProviderMTN, Description: "Order", ClientReference: v}).validate()
	}},
	"SendParams.ClientReference": {referenceSend, "ClientReference", true, func(v string) error {
		return (&SendParams{Amount: 500, Phone: "233241234567", Provider: ProviderMTN, Description: "Refund", ClientReference: v}).validate()
	}},
	"CheckoutParams.ClientReference": {referenceCheckout, "ClientReference", false, func(v string) error {
		return (&CheckoutParams{Amount: 500, ClientReference: v}).validate()
	}},
	// The same reference written into the metadata by hand: the same rule, and the
	// error names the key the caller set.
	"": {referenceCheckout, "metadata.clientReference", false, func(v string) error {
		return (&CheckoutParams{Amount: 500, Metadata: Metadata{"clientReference": v}}).validate()
	}},
	"BankTransferParams.ClientReference": {referenceBankTransfer, "ClientReference", true, func(v string) error {
		return (&BankTransferParams{BankCode: "300302", Amount: 5000, PrimaryCallbackURL: "https://shop.example.com/cb",
			Description: "Invoice", BankAccountNumber: "1441000123456", ClientReference: v}).validate()
	}},
	"DirectDebitParams.ClientReference": {referenceDirectDebit, "ClientReference", true, func(v string) error {
		return (&DirectDebitParams{CustomerMSISDN: "233241234567", Channel: DirectDebitChannelMTN, Amount: 4999,
			PrimaryCallbackURL: "https://shop.example.com/cb", Description: "Plan", ClientReference: v}).validate()
	}},
	"MandateCreateParams.ClientReferenceID": {referenceMandate, "clientReferenceId", true, func(v string) error {
		return (&MandateCreateParams{ClientReferenceID: v, CustomerMSISDN: "233241234567", Channel: DirectDebitChannelMTN,
			CallbackURL: "https://shop.example.com/cb"}).validate()
	}},
	"MandateVerifyOTPParams.ClientReferenceID": {referenceMandate, "clientReferenceId", true, func(v string) error {
		return (&MandateVerifyOTPParams{CustomerMSISDN: "233241234567", ServicePreApprovalID: "pre1", ClientReferenceID: v,
			OTPCode: "ABCD-1234"}).validate()
	}},
}

// readmeReferenceRules reads the README's table of references: each params field it
// names, with the rule written beside it.
func readmeReferenceRules(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("README.md")
	require.NoError(t, err)
	defer f.Close()
	rules := map[string]string{}
	inTable := false
	fieldName := regexp.MustCompile("`([A-Za-z]+Params\\.[A-Za-z]+)`")
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "| reference | rule |":
			inTable = true
		case inTable && strings.HasPrefix(line, "|---"):
		case inTable && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			require.Len(t, cells, 2, "a row of the references table: %s", line)
			for _, m := range fieldName.FindAllStringSubmatch(cells[0], -1) {
				rules[m[1]] = strings.TrimSpace(cells[1])
			}
		default:
			inTable = false
		}
	}
	require.NotEmpty(t, rules, "README.md has no table headed | reference | rule |")
	return rules
}

// The README's table, the rules the validation applies, and the field docs say the same
// rule for every reference, and every reference field is in the table.
func TestReferenceRulesAgreeInReadmeValidationAndGodoc(t *testing.T) {
	readme := readmeReferenceRules(t)
	docs := paramsFieldDocs(t)
	for name, f := range referenceFields {
		if name == "" {
			continue
		}
		rule := referenceRules[f.ref].String()
		assert.Equal(t, rule, readme[name], "the README's rule for %s", name)
		assert.Contains(t, docs[name], rule, "the godoc of %s", name)
	}
	for name := range readme {
		_, ok := referenceFields[name]
		assert.True(t, ok, "the README names %s, which carries no reference this test knows", name)
	}
	for ref := range referenceRules {
		used := false
		for _, f := range referenceFields {
			used = used || f.ref == ref
		}
		assert.True(t, used, "no params field carries the %s reference", ref)
	}
}

// paramsFieldDocs reads the doc comment of every field of every exported struct in the
// package, keyed "Type.Field", with its lines joined by spaces.
func paramsFieldDocs(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	docs := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := spec.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, field := range st.Fields.List {
				for _, id := range field.Names {
					docs[spec.Name.Name+"."+id.Name] = strings.Join(strings.Fields(field.Doc.Text()), " ")
				}
			}
			return false
		})
	}
	return docs
}

// Every reference field takes exactly what the README's rule for it says: each printable ASCII character
// and a few others in the middle of a reference, the shortest and longest lengths and one
// beyond, and no value. A refusal names the field the caller set.
func TestEveryReferenceFieldFollowsItsRule(t *testing.T) {
	var values []string
	for c := rune(0); c < 0x80; c++ {
		values = append(values, "ab"+string(c)+"9")
	}
	values = append(values, "abé9", "ab٣9", "ab\u00a09", "ab\xff9", "a", "Z", "7", "-", "_",
		strings.Repeat("a", maxClientReference), strings.Repeat("Z9", maxClientReference/2),
		strings.Repeat("a", maxClientReference+1), strings.Repeat("a-", maxClientReference/2+1), "")
	readme := readmeReferenceRules(t)
	for name, f := range referenceFields {
		written := readme[name]
		if name == "" {
			written = readme["CheckoutParams.ClientReference"]
		}
		require.NotEmpty(t, written, "the README's rule for %s", name)
		punct := strings.Contains(written, "'-' and '_'")
		for _, v := range values {
			err := f.validate(v)
			want := allowedByRule(v, punct, f.required)
			if want {
				assert.NoError(t, err, "%s %q", name, v)
				continue
			}
			var invalid *ValidationError
			if assert.ErrorAs(t, err, &invalid, "%s %q", name, v) {
				assert.Equal(t, f.field, invalid.Field, "%s %q", name, v)
				if v != "" {
					assert.Contains(t, invalid.Rule, written, "%s %q", name, v)
				}
			}
		}
	}
}

// allowedByRule is the rule as the README writes it, independently of the SDK's code:
// 1-36 ASCII letters and digits, and '-' and '_' where the rule says so; empty only
// where the reference is optional.
func allowedByRule(v string, punct, required bool) bool {
	if v == "" {
		return !required
	}
	if len(v) > 36 {
		return false
	}
	for _, c := range []byte(v) {
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		digit := '0' <= c && c <= '9'
		if !letter && !digit && !(punct && (c == '-' || c == '_')) {
			return false
		}
	}
	return true
}

// A checkout session takes the references a shop writes, ord_123 among them, and the
// request carries it as metadata.clientReference; a refusal names ClientReference, the
// field the caller set, not a metadata key the caller never wrote.
func TestCheckoutTakesOrd123AndNamesClientReference(t *testing.T) {
	c, mock := newMockClient(t)
	var sent string
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/payments", func(r *http.Request) (*http.Response, error) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		require.NoError(t, err)
		sent = string(b)
		return fixtureResponder(t, http.StatusOK, "payments/checkout_created.json")(r)
	})
	_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 5000, ClientReference: "ord_123"})
	require.NoError(t, err)
	assert.Contains(t, sent, `"clientReference":"ord_123"`)

	_, err = c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 5000, ClientReference: "ord.123"})
	var invalid *ValidationError
	require.True(t, errors.As(err, &invalid), "%v", err)
	assert.Equal(t, "ClientReference", invalid.Field)
	assert.Equal(t, "billing: invalid ClientReference: must be 1-36 characters: letters, digits, '-' and '_'", err.Error())
	assert.Equal(t, 1, mock.GetTotalCallCount(), "the refused session is not sent")
}
