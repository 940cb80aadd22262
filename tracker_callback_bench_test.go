package billing

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
)

// BenchmarkTrackerHandlerCallback measures the callback path of a tracked receive: the
// handler reads and parses the callback, records it, confirms it with the status check
// (a mocked transport), settles the outcome and finishes the dedupe record.
func BenchmarkTrackerHandlerCallback(b *testing.B) {
	c, mock := newMockClient(b)
	status := string(fixture(b, "confirm/receive_status_order1042.json"))
	mock.RegisterRegexpResponder(http.MethodGet, regexp.MustCompile(`/v1/payments/(bench\d+)$`), func(r *http.Request) (*http.Response, error) {
		ref := httpmock.MustGetSubmatch(r, 1)
		resp := httpmock.NewStringResponse(http.StatusOK, strings.Replace(status, `"order1042"`, `"`+ref+`"`, 1))
		resp.Header.Set("Content-Type", "application/json")
		return resp, nil
	})
	tr := NewTracker(c, TrackerOptions{Clock: newFakeClock()})
	h := tr.Handler()
	callback := string(fixture(b, "events/transaction_success.json"))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ref := fmt.Sprintf("bench%d", i)
		i++
		if err := tr.Track(context.Background(), KindReceive, ref); err != nil {
			b.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/callbacks", strings.NewReader(strings.Replace(callback, `"order1042"`, `"`+ref+`"`, 1))))
		if rec.Code != http.StatusOK {
			b.Fatalf("answered %d", rec.Code)
		}
	}
}
