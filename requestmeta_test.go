package billing

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The transport judges an answer twice when it goes on to read its body; the log's
// attempt count must still be one per request sent.
func TestLogCountsEachSendOnce(t *testing.T) {
	for name, tc := range map[string]struct {
		steps []func(http.ResponseWriter, *http.Request)
		want  string
	}{
		"one answer":            {[]func(http.ResponseWriter, *http.Request){jsonAnswer(200, okCustomer)}, "attempts=1"},
		"one refusal":           {[]func(http.ResponseWriter, *http.Request){jsonAnswer(404, `{"success":false,"message":"no"}`)}, "attempts=1"},
		"two failures, then ok": {[]func(http.ResponseWriter, *http.Request){jsonAnswer(503, serverFailure), truncatedBody, jsonAnswer(200, okCustomer)}, "attempts=3"},
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			srv := newScriptedServer(t, tc.steps...)
			c, _ := newTestClient(t, srv.URL, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			_, _ = c.Customers.Get(context.Background(), "cust_1")
			assert.Contains(t, logs.String(), " "+tc.want+" ")
			require.NotZero(t, srv.hits.Load())
		})
	}
}
