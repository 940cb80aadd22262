package billing

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/internal/scrubcorpus"
)

// The credentials of the client these tests build, as a service or gateway may echo them.
const (
	echoID      = "cid-7f3a9c21"
	echoSecret  = "cs-Qm4xT9vLp2"
	echoKey     = "sk_live_9d8c7b6a5f4e"
	echoSession = "sess_51ab62cd73ef"
)

var echoBasic = base64.StdEncoding.EncodeToString([]byte(echoID + ":" + echoSecret))

// echoClient returns a Client of a server that answers every request with status and
// message, and the credentials a leak would show.
func echoClient(t *testing.T, status int, message string) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := json.Marshal(map[string]any{"success": false, "message": message, "responseCode": "4000"})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(WithBaseURL(srv.URL), WithClientCredentials(echoID, echoSecret), WithSecretKey(echoKey),
		WithSessionToken(echoSession), WithRetry(1, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	return c
}

// printed returns err as every verb, a %w wrap and errors.Join print it.
func printed(err error) string {
	wrapped := fmt.Errorf("checkout: %w", err)
	return strings.Join([]string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%q", err),
		fmt.Sprintf("%#v", err), fmt.Sprintf("%s", wrapped), fmt.Sprintf("%#v", wrapped), errors.Join(errors.New("first"), err).Error()}, "\n")
}

// Item 1: a service that echoes the merchant's credentials in an error on 401, 403 and
// 400, and in the OutcomeUnknownError of a 500 on a receive, has none of them printed.
func TestReturnedErrorsHoldNoneOfTheClientsCredentials(t *testing.T) {
	message := "unknown key " + echoKey + " for " + echoID + " (" + echoBasic + ") / " + echoSecret + "; session " + echoSession
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusBadRequest} {
		c := echoClient(t, status, message)
		_, err := c.Customers.Get(ctx(), "cus_1")
		require.Error(t, err)
		var apiErr *APIError
		require.ErrorAs(t, err, &apiErr, "HTTP %d", status)
		out := printed(err)
		for _, secret := range []string{echoKey, echoID, echoBasic, echoSecret, echoSession} {
			assert.NotContains(t, out, secret, "HTTP %d", status)
		}
		assert.Contains(t, apiErr.Message, echoKey, "the Message field keeps the text as sent")
	}
	c := echoClient(t, http.StatusInternalServerError, message)
	_, err := c.Payments.Receive(ctx(), validReceive())
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	var unknown *OutcomeUnknownError
	require.ErrorAs(t, err, &unknown)
	out := printed(err)
	for _, secret := range []string{echoKey, echoID, echoBasic, echoSecret, echoSession} {
		assert.NotContains(t, out, secret)
	}
}

// Item 2: an email with a "+" tag, percent-encoded in a query that a hang-up quotes, is
// masked whole in the error and the debug log.
func TestTaggedEmailInAQueryIsMaskedWhole(t *testing.T) {
	var log strings.Builder
	c, err := NewClient(WithBaseURL(scrubcorpus.HangUp(t)), WithSecretKey(echoKey), WithRetry(1, time.Millisecond, time.Millisecond),
		WithLogger(newDebugLogger(&log)))
	require.NoError(t, err)
	_, err = c.Customers.ListPage(ctx(), &CustomerListParams{Email: "ama.mensah+vip@example.com"})
	require.Error(t, err)
	for _, out := range []string{printed(err), log.String()} {
		assert.NotContains(t, out, "mensah")
		assert.NotContains(t, out, "vip")
	}
	assert.Contains(t, err.Error(), "a***%40example.com")
}

// Item 3: a number after a percent escape is masked.
func TestNumbersAfterPercentEscapesAreMasked(t *testing.T) {
	for in, want := range map[string]string{
		"invalid msisdn=%2B233241239876":          "invalid msisdn=%2B*********876",
		"tel%3A%2B233241239876":                   "tel%3A%2B*********876",
		"CustomerMsisdn%3D233241239876":           "CustomerMsisdn%3D*********876",
		"CustomerMsisdn=%2B233551237654&amount=1": "CustomerMsisdn=%2B*********654&amount=1",
		"phone=%252B233241239876":                 "phone=%252B*********876",
		"phone=%2B233+24+123+9876":                "phone=%2B***+**+***+*876",
	} {
		assert.Equal(t, want, Scrub(in), "%q", in)
	}
	c := echoClient(t, http.StatusBadRequest, "invalid form CustomerMsisdn=%2B233551237654&amount=1")
	_, err := c.Customers.Get(ctx(), "cus_1")
	require.Error(t, err)
	assert.NotContains(t, printed(err), "233551237654")
	assert.NotContains(t, printed(err), "551237")
}

// Item 4: email addresses with internationalised domains are masked.
func TestInternationalisedEmailAddressesAreMasked(t *testing.T) {
	for in, want := range map[string]string{
		"customer ama.mensah@bücher.example exists": "customer a***@bücher.example exists",
		"customer ama.mensah@例え.jp exists":          "customer a***@例え.jp exists",
		"customer ámá.mensah@example.com exists":    "customer á***@example.com exists",
	} {
		assert.Equal(t, want, Scrub(in), "%q", in)
	}
	c := echoClient(t, http.StatusConflict, "a customer with email ama.mensah@例え.jp exists")
	_, err := c.Customers.Get(ctx(), "cus_1")
	require.ErrorIs(t, err, ErrConflict)
	assert.NotContains(t, printed(err), "mensah")
}

// Item 6: NewClient's refusal of a base URL never quotes a secret in its query.
func TestBaseURLRefusalQuotesNoQueryValue(t *testing.T) {
	for _, raw := range []string{
		"https://api.exa mple.com/?token=sk_live_4242abcdef",
		"https://api.exa mple.com/?client_secret=cs-4242abcdef",
		"ftp://api.example.com/?api_key=ak-4242abcdef",
		"http://api.example.com/v1?x=1&api_key=ak-4242abcdef#frag-4242abcdef",
		"https://cid:pw-4242abcdef@api.example.com/?token=sk_live_4242abcdef",
	} {
		_, err := NewClient(WithBaseURL(raw), WithSecretKey("k"))
		require.Error(t, err, raw)
		assert.NotContains(t, err.Error(), "4242abcdef", raw)
		assert.Contains(t, err.Error(), "base URL", raw)
	}
}

// Item 7: credential words alone are words: the sandbox's help reaches the merchant as
// written.
func TestCredentialWordsAloneAreNotRedacted(t *testing.T) {
	help := "this endpoint takes Basic client credentials or a Bearer API key"
	assert.Equal(t, help, Scrub(help))
	c := echoClient(t, http.StatusUnauthorized, help)
	_, err := c.Customers.Get(ctx(), "cus_1")
	require.ErrorIs(t, err, ErrUnauthorized)
	assert.Contains(t, err.Error(), help)
	for in, want := range map[string]string{
		"Authorization: Basic Y2lkOnNlY3JldA==": "Authorization: Basic [redacted]",
		"Bearer sk_live_4242abcdef refused":     "Bearer [redacted] refused",
		"the token: expired":                    "the token: expired",
		"password: hunter2":                     "password: [redacted]",
	} {
		assert.Equal(t, want, Scrub(in), "%q", in)
	}
}

// newDebugLogger returns a JSON logger of every level into w.
func newDebugLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// The corpus plants MSISDNs in the numbering of every country of the SDK's phone table:
// a country added there without a row in the corpus fails here.
func TestCorpusCoversEveryPhoneCountry(t *testing.T) {
	for _, pc := range phoneCountries {
		found := false
		for _, c := range scrubcorpus.Countries {
			found = found || (c.Code == pc.code && c.National == pc.national)
		}
		assert.True(t, found, "scrubcorpus.Countries lacks %s (+%s, %d digits)", pc.name, pc.code, pc.national)
	}
}

// A panic recovered on a goroutine of the SDK is told, in its error and its log record,
// through the scrubber of the Client whose logger logs it: a panic value quoting a
// credential shows none of it.
func TestRecoveredPanicKnowsTheClientsSecrets(t *testing.T) {
	var log strings.Builder
	logger := scrubLogger(newDebugLogger(&log), NewScrubber(echoSecret, echoKey))
	err := recovered(logger, "the store", fmt.Sprintf("store refused key %s (%s)", echoKey, echoSecret))
	for _, out := range []string{printed(err), log.String()} {
		assert.NotContains(t, out, echoKey)
		assert.NotContains(t, out, echoSecret)
	}
}
