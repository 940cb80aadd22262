package billing

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mockBaseURL = "https://api.billing.test"

// fixture returns a recorded response body from testdata.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	require.True(t, json.Valid(b), "fixture %s is not JSON", name)
	return b
}

// fixtureResponder answers with a recorded body and status.
func fixtureResponder(t testing.TB, status int, name string) httpmock.Responder {
	body := fixture(t, name)
	return func(*http.Request) (*http.Response, error) {
		resp := httpmock.NewBytesResponse(status, body)
		resp.Header.Set("Content-Type", "application/json")
		return resp, nil
	}
}

// newMockClient returns a client whose own http.Client goes through a fresh httpmock
// transport (never the global one), so tests can run in parallel.
func newMockClient(t testing.TB, opts ...Option) (*Client, *httpmock.MockTransport) {
	t.Helper()
	c, err := NewClient(append([]Option{
		WithBaseURL(mockBaseURL),
		WithClientCredentials("client-id", "client-secret"),
		WithRetry(1, 0, 0),
	}, opts...)...)
	require.NoError(t, err)
	mock := httpmock.NewMockTransport()
	c.http.HTTPClient.Transport = mock
	return c, mock
}

// requestBody reads a request body as a JSON object.
func requestBody(t testing.TB, r *http.Request) map[string]any {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// refusal is a call the SDK must refuse with a *ValidationError naming field.
type refusal struct {
	call  func(c *Client) error
	field string
}

// requireRefusedBeforeSending runs each call on a fresh client (built with opts) whose
// transport counts every request, and checks the call returned a *ValidationError naming
// the field and its rule, with no request sent.
func requireRefusedBeforeSending(t *testing.T, cases map[string]refusal, opts ...Option) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, mock := newMockClient(t, opts...)
			mock.RegisterNoResponder(httpmock.NewStringResponder(500, "must not be called"))
			var v *ValidationError
			require.ErrorAs(t, tc.call(c), &v)
			assert.Equal(t, tc.field, v.Field)
			assert.NotEmpty(t, v.Rule)
			assert.Zero(t, mock.GetTotalCallCount(), "no request may be sent")
		})
	}
}
