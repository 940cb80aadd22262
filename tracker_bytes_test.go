package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sender controls everything in a callback but its state and amounts, which the status
// check confirms: genuine callbacks padded with a huge description must not hold more
// memory than TrackerOptions.MaxBytes, however many of them come.
func TestTrackerBoundsCallbackMemoryInBytes(t *testing.T) {
	const (
		budget  = 2 << 20
		n       = 50
		padding = 200 << 10
	)
	tr, mock, _ := newTestTracker(t, TrackerOptions{MaxBytes: budget})
	status := string(fixture(t, "payments/receive_status_paid.json"))
	mock.RegisterRegexpResponder(http.MethodGet, regexp.MustCompile(`/v1/payments/(padded\d+)$`), func(r *http.Request) (*http.Response, error) {
		ref := httpmock.MustGetSubmatch(r, 1)
		body := regexp.MustCompile(`"clientReference": "\w+"`).ReplaceAllString(status, `"clientReference": "`+ref+`"`)
		return httpmock.NewStringResponse(http.StatusOK, body), nil
	})
	var callback map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, "events/transaction_success.json"), &callback))
	data := callback["Data"].(map[string]any)
	data["Description"] = strings.Repeat("x", padding)
	delete(data, "Amount") // the paid status check's amount differs from the fixture's
	delete(data, "TransactionId")
	h := tr.Handler()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		data["ClientReference"] = fmt.Sprintf("padded%d", i)
		body, err := json.Marshal(callback)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, post(t, h, body).Code, "callback %d", i)
	}
	runtime.GC()
	runtime.GC() // the second empties sync.Pools, which keep encoders' buffers one cycle
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d callbacks of %d KiB hold %d KiB (budget %d KiB)", n, padding>>10, held>>10, budget>>10)
	// The slack covers what is not callbacks: the mock's responders and the test's own.
	assert.LessOrEqual(t, held, int64(budget+512<<10), "heap held by %d padded callbacks", n)
	assert.LessOrEqual(t, heldBytes(tr), budget, "bytes the store accounts")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	newest := fmt.Sprintf("padded%d", n-1)
	o, err := tr.Await(ctx, KindReceive, newest)
	require.NoError(t, err, "the newest outcome is kept")
	assert.True(t, o.Succeeded())
	assert.Equal(t, SourceCallback, o.Source)
	ev, ok := o.Event.(*TransactionCallback)
	require.True(t, ok, "the newest outcome keeps its callback: %#v", o.Event)
	assert.Equal(t, newest, ev.Data.ClientReference)
	runtime.KeepAlive(tr)
}

// Callbacks that claim nothing final are handled without a status check, whatever
// reference they carry: their dedupe records and bodies must fit MaxBytes too.
func TestTrackerBoundsPendingCallbacksWithHugeReferences(t *testing.T) {
	const (
		budget = 2 << 20
		n      = 50
		refLen = 300 << 10
	)
	tr, _, _ := newTestTracker(t, TrackerOptions{MaxBytes: budget})
	h := tr.Handler()
	ref := strings.Repeat("r", refLen)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		body := fmt.Sprintf(`{"ResponseCode":"0001","Message":"accepted","Data":{"ClientReference":"%s%05d"}}`, ref, i)
		// No movement has such a reference: refused before anything is recorded.
		require.Equal(t, http.StatusBadRequest, post(t, h, []byte(body)).Code, "callback %d", i)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d pending callbacks with %d KiB references hold %d KiB (budget %d KiB)", n, refLen>>10, held>>10, budget>>10)
	assert.LessOrEqual(t, held, int64(budget+512<<10), "heap held by %d callbacks with huge references", n)
	assert.LessOrEqual(t, heldBytes(tr), budget, "bytes the store accounts")
	runtime.KeepAlive(tr)
}

// heldBytes is what the Tracker's own in-memory store accounts against MaxBytes.
func heldBytes(tr *Tracker) int {
	_, n := tr.Store().(interface{ Held() (int, int) }).Held()
	return n
}
