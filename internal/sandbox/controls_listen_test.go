package sandbox

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordedPost is one request a test receiver got.
type recordedPost struct {
	path, forwardedFor, attempt string
	body                        string
}

// recordingReceiver answers each post with the next of statuses (200 once
// they run out) and records it.
func recordingReceiver(t *testing.T, statuses ...int) (*httptest.Server, func() []recordedPost) {
	t.Helper()
	var mu sync.Mutex
	var got []recordedPost
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, recordedPost{path: r.URL.Path, forwardedFor: r.Header.Get(ForwardedForHeader), attempt: r.Header.Get(AttemptHeader), body: string(b)})
		status := http.StatusOK
		if len(got) <= len(statuses) {
			status = statuses[len(got)-1]
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []recordedPost {
		mu.Lock()
		defer mu.Unlock()
		return append([]recordedPost(nil), got...)
	}
}

func TestForwardTargetReceivesEveryDeliveryWithItsRetries(t *testing.T) {
	s := newTestServer(t, Config{})
	forward, forwarded := recordingReceiver(t, http.StatusInternalServerError)
	app, appGot := recordingReceiver(t)

	rec := serve(t, s, http.MethodPut, "/sandbox/forward", basicHeader, `{"url":"`+forward.URL+`/in"}`)
	assert.Equal(t, forward.URL+"/in", decode[forwardView](t, rec, 200).Data.URL)
	assert.Equal(t, forward.URL+"/in", decode[forwardView](t, serve(t, s, http.MethodGet, "/sandbox/forward", secretHeader, nil), 200).Data.URL)

	require.Equal(t, 200, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233241234567", "fwd1", app.URL+"/hooks")).Code)
	s.Advance(0)
	got := forwarded()
	require.Len(t, got, 1, "the callback went to the forward target")
	assert.Equal(t, "/in", got[0].path)
	assert.Equal(t, app.URL+"/hooks", got[0].forwardedFor)
	assert.Equal(t, "1", got[0].attempt)
	assert.Empty(t, appGot(), "not to the callback URL")

	s.Advance(30 * time.Second) // the first redelivery, after the 500
	got = forwarded()
	require.Len(t, got, 2)
	assert.Equal(t, "2", got[1].attempt)
	assert.Equal(t, got[0].body, got[1].body, "the body is unchanged")

	deliveries := s.Deliveries()
	require.Len(t, deliveries, 2)
	assert.Equal(t, app.URL+"/hooks", deliveries[0].URL)
	assert.Equal(t, forward.URL+"/in", deliveries[0].ForwardedTo)
	assert.Equal(t, []int{500, 200}, []int{deliveries[0].Status, deliveries[1].Status})

	// Cleared, deliveries go where they were meant again.
	assert.Empty(t, decode[forwardView](t, serve(t, s, http.MethodDelete, "/sandbox/forward", basicHeader, nil), 200).Data.URL)
	require.Equal(t, 200, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233241234567", "fwd2", app.URL+"/hooks")).Code)
	s.Advance(0)
	assert.Len(t, appGot(), 1)
	assert.Len(t, forwarded(), 2)
}

func TestForwardControlRefusesBadInput(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, body := range []string{`{}`, `{"url":""}`, `{"url":"ftp://example.com/x"}`, `{"url":"/relative"}`, `{"url":42}`} {
		requireError(t, serve(t, s, http.MethodPut, "/sandbox/forward", basicHeader, body), 400, CodeValidation, "url", "url")
	}
	assert.Empty(t, s.ForwardTarget(), "a refused target changes nothing")
	requireError(t, serve(t, s, http.MethodPut, "/sandbox/forward", "", `{"url":"http://127.0.0.1:1/"}`), 401, CodeKeysMismatch, "", "missing credentials")
	assert.Error(t, s.SetForwardTarget("not a url"))
}

func TestDeliveriesControlPagesTheAttempts(t *testing.T) {
	s := newTestServer(t, Config{})
	app, _ := recordingReceiver(t, http.StatusServiceUnavailable)
	for _, ref := range []string{"dl1", "dl2"} {
		require.Equal(t, 200, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233241234567", ref, app.URL)).Code)
	}
	s.Advance(time.Minute) // two first attempts, the retry of the one answered 503

	all := decode[[]deliveryView](t, serve(t, s, http.MethodGet, "/sandbox/deliveries", basicHeader, nil), 200).Data
	require.Len(t, all, 3)
	for i, d := range all {
		assert.Equal(t, i+1, d.Seq)
		assert.Equal(t, app.URL, d.URL)
		assert.Empty(t, d.ForwardedTo)
	}
	assert.Equal(t, []int{503, 200, 200}, []int{all[0].Status, all[1].Status, all[2].Status})
	assert.Equal(t, []int{1, 1, 2}, []int{all[0].Attempt, all[1].Attempt, all[2].Attempt})
	assert.Equal(t, all[0].Reference, all[2].Reference)
	var body map[string]any
	require.NoError(t, json.Unmarshal(all[1].Body, &body), "the body is the JSON posted")
	assert.Equal(t, string(s.Deliveries()[1].Body), string(all[1].Body))

	page := decode[[]deliveryView](t, serve(t, s, http.MethodGet, "/sandbox/deliveries?after=1&limit=1", basicHeader, nil), 200).Data
	require.Len(t, page, 1)
	assert.Equal(t, 2, page[0].Seq)
	assert.Empty(t, decode[[]deliveryView](t, serve(t, s, http.MethodGet, "/sandbox/deliveries?after=3", basicHeader, nil), 200).Data)
	for _, q := range []string{"after=-1", "after=x", "limit=0", "limit=1001", "limit=x"} {
		rec := serve(t, s, http.MethodGet, "/sandbox/deliveries?"+q, basicHeader, nil)
		assert.Equal(t, 400, rec.Code, q)
	}
}

func TestMovementsControlListsWhatTheSandboxAccepted(t *testing.T) {
	s := newTestServer(t, Config{})
	app, _ := recordingReceiver(t)
	require.Equal(t, 200, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233241234567", "mv1", app.URL)).Code)
	s.Advance(time.Second)
	require.Equal(t, 200, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233240000004", "mv2", app.URL)).Code)

	all := decode[[]movementView](t, serve(t, s, http.MethodGet, "/sandbox/movements", basicHeader, nil), 200).Data
	require.Len(t, all, 2)
	assert.Equal(t, "mv1", all[0].ClientReference)
	assert.Equal(t, "receive", all[0].Kind)
	assert.Equal(t, StateSucceeded, all[0].State)
	assert.Equal(t, "0000", all[0].ResponseCode)
	require.NotNil(t, all[0].ResolvedAt)
	assert.Equal(t, "mv2", all[1].ClientReference)
	assert.Equal(t, StatePending, all[1].State)
	assert.Nil(t, all[1].ResolvedAt, "null while pending")
	assert.Equal(t, len(s.AllMovements()), len(all))

	one := decode[[]movementView](t, serve(t, s, http.MethodGet, "/sandbox/movements?clientReference=mv2", basicHeader, nil), 200).Data
	require.Len(t, one, 1)
	assert.Equal(t, all[1], one[0])
	assert.Empty(t, decode[[]movementView](t, serve(t, s, http.MethodGet, "/sandbox/movements?clientReference=none", basicHeader, nil), 200).Data)
	last := decode[[]movementView](t, serve(t, s, http.MethodGet, "/sandbox/movements?limit=1", basicHeader, nil), 200).Data
	require.Len(t, last, 1)
	assert.Equal(t, "mv2", last[0].ClientReference, "limit keeps the newest")
}

func TestClockControlsTakeAnyDuration(t *testing.T) {
	s := newTestServer(t, Config{})
	shown := decode[clockView](t, serve(t, s, http.MethodGet, "/sandbox/clock", basicHeader, nil), 200).Data
	assert.Equal(t, testStart, shown.Now.Time)
	assert.Equal(t, testStart, s.Now(), "reading the clock moves nothing")

	moved := decode[clockView](t, serve(t, s, http.MethodPost, "/sandbox/clock/advance", basicHeader, `{"duration":"1.5s"}`), 200).Data
	assert.Equal(t, testStart.Add(1500*time.Millisecond), s.Now())
	assert.Equal(t, testStart.Add(1500*time.Millisecond).Format(time.RFC3339Nano), moved.Exact)
	serve(t, s, http.MethodPost, "/sandbox/clock/advance", basicHeader, `{"duration":"250us"}`)
	exact := decode[clockView](t, serve(t, s, http.MethodGet, "/sandbox/clock", basicHeader, nil), 200).Data.Exact
	assert.Equal(t, testStart.Add(1500250*time.Microsecond).Format(time.RFC3339Nano), exact)

	for _, body := range []string{`{"duration":"-1s"}`, `{"duration":"soon"}`, `{"duration":"876001h"}`} {
		requireError(t, serve(t, s, http.MethodPost, "/sandbox/clock/advance", basicHeader, body), 400, CodeValidation, "duration", "duration must be a duration")
	}
	requireError(t, serve(t, s, http.MethodPost, "/sandbox/clock/advance", basicHeader, `{"duration":5}`), 400, CodeValidation, "duration", "duration must be")
	requireError(t, serve(t, s, http.MethodPost, "/sandbox/clock/advance", basicHeader, `{"duration":"1s","seconds":1}`), 400, CodeValidation, "seconds", "not both")
	assert.Equal(t, testStart.Add(1500250*time.Microsecond), s.Now(), "refused moves leave the clock")
}

// Each run of a sandbox says it is one, under an instance of its own.
func TestIdentityIsNewAtEveryStart(t *testing.T) {
	a := decode[identityView](t, serve(t, newTestServer(t, Config{}), http.MethodGet, "/sandbox/identity", basicHeader, nil), 200).Data
	b := decode[identityView](t, serve(t, newTestServer(t, Config{}), http.MethodGet, "/sandbox/identity", basicHeader, nil), 200).Data
	assert.Equal(t, IdentityName, a.Sandbox)
	assert.NotEmpty(t, a.Instance)
	assert.NotEqual(t, a.Instance, b.Instance)
}

// An exclusive registration is refused while another target is set, and
// changes nothing.
func TestExclusiveForwardIsRefusedWhileAnotherIsSet(t *testing.T) {
	s := newTestServer(t, Config{})
	require.Equal(t, 200, serve(t, s, http.MethodPut, "/sandbox/forward", basicHeader, `{"url":"http://127.0.0.1:1/a","exclusive":true}`).Code)
	require.Equal(t, 200, serve(t, s, http.MethodPut, "/sandbox/forward", basicHeader, `{"url":"http://127.0.0.1:1/a","exclusive":true}`).Code, "the same target again")
	rec := serve(t, s, http.MethodPut, "/sandbox/forward", basicHeader, `{"url":"http://127.0.0.1:1/b","exclusive":true}`)
	assert.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "another listener")
	assert.Equal(t, "http://127.0.0.1:1/a", s.ForwardTarget())
}

// A webhook meant for no URL (no -webhook-url) still reaches a forward
// target; with none, nothing is sent.
func TestWebhookWithNoURLReachesTheForwardTarget(t *testing.T) {
	s := newTestServer(t, Config{})
	s.deliver("", map[string]string{"event": "payment.succeeded"})
	s.Advance(0)
	assert.Empty(t, s.Deliveries(), "no URL and no listener: nothing sent")
	forward, forwarded := recordingReceiver(t)
	require.NoError(t, s.SetForwardTarget(forward.URL+"/in"))
	s.deliver("", map[string]string{"event": "payment.succeeded"})
	s.Advance(0)
	require.Len(t, forwarded(), 1)
	assert.Equal(t, "", forwarded()[0].forwardedFor)
}

// Resend posts a delivery's body again, unchanged, as a new delivery.
func TestResendPostsTheSameBodyAgain(t *testing.T) {
	s := newTestServer(t, Config{})
	forward, forwarded := recordingReceiver(t)
	require.NoError(t, s.SetForwardTarget(forward.URL+"/in"))
	require.Equal(t, 200, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233241234567", "rs1", "http://127.0.0.1:1/hooks")).Code)
	s.Advance(0)
	require.Len(t, forwarded(), 1)
	rec := serve(t, s, http.MethodPost, "/sandbox/deliveries/1/resend", basicHeader, nil)
	assert.Equal(t, 2, decode[resendView](t, rec, 200).Data.Seq)
	got := forwarded()
	require.Len(t, got, 2)
	assert.Equal(t, got[0].body, got[1].body)
	requireStatus := func(path string, status int) {
		t.Helper()
		assert.Equal(t, status, serve(t, s, http.MethodPost, path, basicHeader, nil).Code, path)
	}
	requireStatus("/sandbox/deliveries/3/resend", http.StatusNotFound)
	requireStatus("/sandbox/deliveries/0/resend", http.StatusBadRequest)
	requireStatus("/sandbox/deliveries/x/resend", http.StatusBadRequest)
}

// The delivery log is bounded; an attempt keeps its seq when older ones go.
func TestDeliveryLogIsBounded(t *testing.T) {
	var l deliveries
	for i := 1; i <= maxDeliveryLog+5; i++ {
		assert.Equal(t, i, l.add(Delivery{Attempt: i}))
	}
	assert.LessOrEqual(t, len(l.log), maxDeliveryLog)
	d, ok := l.bySeq(maxDeliveryLog + 5)
	require.True(t, ok)
	assert.Equal(t, maxDeliveryLog+5, d.Attempt)
	_, ok = l.bySeq(1)
	assert.False(t, ok, "the oldest went")
	page, first := l.after(0, 3)
	assert.Equal(t, l.dropped+1, first)
	assert.Equal(t, first, page[0].Attempt)
}
