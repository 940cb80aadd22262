package billing

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// digitsOf returns the ASCII digits of s, in order.
func digitsOf(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// maskSeparators are the characters a number's groups are written apart with.
var maskSeparators = []string{" ", "  ", ".", "-", "_", "\t", "\u00a0", "\u202f", "\u2009", "\u2007", "\u2002", "\u3000",
	"\u200b", "\u2010", "\u2011", "\u2013", "\u2014", "\u2212", ". ", " - ", "\u00a0-\u00a0"}

// maskGroupings split a number into groups: each is a list of group sizes, repeated
// from the start until the digits run out.
var maskGroupings = [][]int{{100}, {1}, {2}, {3}, {4}, {3, 2, 3, 4}, {3, 3, 3, 3}, {1, 4}, {5, 7}}

// maskPrefixes and maskSuffixes are what a number is written between.
var (
	maskPrefixes = []string{"", "+", " ", "(", "msisdn", "msisdn_", "MSISDN:", "msisdn=", "customerMsisdn", "customer_msisdn_",
		"tel:", "tel ", "Phone ", "phone_", "ACC", "acc_", "accountNumber", "account_number_", "AccountNo", "IBAN ",
		"wallet ", "momo:", "card ", "number ", "No.", "nr ", "to ", "call ", "path/", "=", "\u00a0", "\u202f"}
	maskSuffixes = []string{"", "X", "x", "abc", "Zq", ".", ",", " ", "_", "-", ")", "/cancel", " has no mandate", "\u00a0", "@"}
)

// TestMaskNumbersGenerative writes numbers of 7 to 15 digits in every grouping with every
// separator, between every prefix and suffix, and checks that at most the last three
// digits survive masking: no digit of the number reaches a log or an error string but
// those.
func TestMaskNumbersGenerative(t *testing.T) {
	numbers := []string{"1234567", "2335577712", "233557771234", "9988776655443", "144100012345678"}
	cases := 0
	for _, number := range numbers {
		for _, grouping := range maskGroupings {
			for _, sep := range maskSeparators {
				var w strings.Builder
				rest := number
				for g := 0; rest != ""; g++ {
					n := min(grouping[g%len(grouping)], len(rest))
					if g > 0 {
						w.WriteString(sep)
					}
					w.WriteString(rest[:n])
					rest = rest[n:]
				}
				written := w.String()
				for _, prefix := range maskPrefixes {
					for _, suffix := range maskSuffixes {
						in := prefix + written + suffix
						out := maskNumbers(in)
						cases++
						if got := digitsOf(out); got != number[len(number)-3:] {
							t.Fatalf("maskNumbers(%q) = %q: digits %q survive", in, out, got)
						}
					}
				}
			}
		}
	}
	t.Logf("%d written numbers masked", cases)
}

// TestMaskEmailsGenerative writes email addresses of several shapes in several places
// and checks that their local part never survives but its first character.
func TestMaskEmailsGenerative(t *testing.T) {
	locals := []string{"ama", "ama.mensah", "kofi+shop", "k_boateng", "AMA.MENSAH", "o'neil", "x1y2z3"}
	domains := []string{"example.com", "mail.example.com.gh", "ex-ample.co"}
	contexts := []string{"%s", "email %s already exists", "a customer with email %s already exists", "<%s>", "(%s)",
		`"email":"%s"`, "email=%s&limit=10", "%s, %s"}
	cases := 0
	for _, local := range locals {
		for _, domain := range domains {
			for _, at := range []string{"@", "%40"} {
				for _, context := range contexts {
					address := local + at + domain
					in := strings.ReplaceAll(context, "%s", address)
					out := maskNumbers(in)
					cases++
					require.NotContains(t, out, local, "maskNumbers(%q) = %q", in, out)
					require.Contains(t, out, local[:1]+"***"+at+domain, "maskNumbers(%q) = %q: the domain stays", in, out)
				}
			}
		}
	}
	t.Logf("%d written email addresses masked", cases)
}

// TestMaskKeepsIdsReadable: what names no person stays as written.
func TestMaskKeepsIdsReadable(t *testing.T) {
	for _, s := range []string{
		"cus_01HQ3K9ZB8Y7X6W5V4T3S2R1P0", "ORDER-2291-A", "order 1234 of 5678", "expired on 2025-01-15 at 10:30",
		"ref0001234567 and INV2024000123", "3jL2KlUy3vt21debitC", "amount 1200 fee 30 balance 99",
		"dial tcp 127.0.0.1:4010: refused", "dial tcp 192.168.100.200:443: refused", "bank 300302 account 12-34",
		"piano1234567x", "hotel1234567", "sub_b12345678a9", "ref_0001234567", "no @ here", "user@localhost",
	} {
		assert.Equal(t, s, maskNumbers(s))
	}
}

// TestRequestLogMasksTheEmailOfA409 is the path an email took into the logs: the
// service's 409 quotes it, and the request log writes the error.
func TestRequestLogMasksTheEmailOfA409(t *testing.T) {
	var logs strings.Builder
	c, mock := newMockClient(t, WithSecretKey("sk_test"), WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/customers", httpmock.NewStringResponder(http.StatusConflict,
		`{"success":false,"message":"a customer with email ama.mensah@example.com already exists","code":"conflict"}`))
	_, err := c.Customers.Create(context.Background(), &CustomerCreateParams{Email: "ama.mensah@example.com", Name: "Ama"})
	require.ErrorIs(t, err, ErrConflict)
	assert.NotContains(t, logs.String()+err.Error(), "ama.mensah")
	assert.Contains(t, logs.String(), "a***@example.com")
	assert.Contains(t, err.Error(), "a***@example.com")
}

// TestMaskKeepsHexIdentifiersReadable writes the identifiers a service or a merchant
// makes from random hex digits (24-digit references, UUIDs), with every length of digits
// they may begin with, in each place output writes them: none of their digits is masked,
// so a reference printed by the billing command can be copied into the next one. A
// number written beside one is still masked.
func TestMaskKeepsHexIdentifiersReadable(t *testing.T) {
	const tail = "649e5c2ac40e4a5080e0c1f7b3d9a2e4"
	var ids []string
	for lead := 1; lead <= 16; lead++ {
		digits := strings.Repeat("1234567890", 3)[:lead]
		reference := digits + tail[:24-lead]
		ids = append(ids, reference, strings.ToUpper(reference))
		hex := digits + tail[:32-lead]
		uuid := hex[:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:]
		ids = append(ids, uuid, strings.ToUpper(uuid))
		// A UUID whose last group begins with the digits.
		ids = append(ids, "9f0e8d7c-6b5a-4c3d-8e2f-"+(digits + tail)[:12])
	}
	contexts := []string{"%s", "http://127.0.0.1:4010/checkout/%s", `{"reference":"%s"}`, "reference %s pending",
		"ord_%s", "%s, %s", "checkout %s failed by MOBILE_MONEY", "%2F%s"}
	cases := 0
	for _, id := range ids {
		for _, context := range contexts {
			in := strings.ReplaceAll(context, "%s", id)
			require.Equal(t, in, maskNumbers(in), "an identifier is no number")
			beside := "call 0241234567 about " + in
			require.Equal(t, "call *******567 about "+in, maskNumbers(beside), "the number beside it is")
			cases += 2
		}
	}
	t.Logf("%d identifiers kept", cases)
}
