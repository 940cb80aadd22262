package sandbox

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder collects what tasks report, safe for the background runner.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) add(v string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, v)
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

func TestManualClockStandsStill(t *testing.T) {
	c := NewManualClock(testStart)
	assert.Equal(t, testStart, c.Now())
	assert.Equal(t, testStart, c.Now())
}

func TestAdvanceRunsDueTasksInTimeOrder(t *testing.T) {
	s := newTestServer(t, Config{})
	var rec recorder
	at := func(d time.Duration, name string) { s.schedule(testStart.Add(d), func() { rec.add(name) }) }
	at(3*time.Second, "c")
	at(time.Second, "a")
	at(2*time.Second, "b")
	at(time.Second, "a2") // same moment as a: scheduling order
	at(10*time.Second, "late")

	assert.Empty(t, rec.list(), "nothing runs before the clock moves")
	s.Advance(5 * time.Second)
	assert.Equal(t, []string{"a", "a2", "b", "c"}, rec.list())
	assert.Equal(t, testStart.Add(5*time.Second), s.Now())

	s.Advance(5 * time.Second)
	assert.Equal(t, []string{"a", "a2", "b", "c", "late"}, rec.list(), "a task due exactly at the end runs")
	assert.Equal(t, testStart.Add(10*time.Second), s.Now())
}

func TestTasksSeeTheirOwnMomentAndChainWithinTheWindow(t *testing.T) {
	s := newTestServer(t, Config{})
	var rec recorder
	var tick func()
	tick = func() {
		rec.add(s.Now().Sub(testStart).String())
		s.schedule(s.Now().Add(time.Second), tick) // a retry a second later
	}
	s.schedule(testStart.Add(time.Second), tick)

	s.Advance(3500 * time.Millisecond)
	assert.Equal(t, []string{"1s", "2s", "3s"}, rec.list())
	assert.Equal(t, testStart.Add(3500*time.Millisecond), s.Now())
	s.Advance(500 * time.Millisecond)
	assert.Equal(t, []string{"1s", "2s", "3s", "4s"}, rec.list())
}

func TestAdvanceZeroRunsWhatIsAlreadyDue(t *testing.T) {
	s := newTestServer(t, Config{})
	var rec recorder
	s.schedule(testStart.Add(-time.Hour), func() { rec.add("past") })
	s.schedule(testStart, func() { rec.add("now") })
	s.Advance(0)
	assert.Equal(t, []string{"past", "now"}, rec.list())
	assert.Equal(t, testStart, s.Now())

	s.Advance(-time.Hour)
	assert.Equal(t, testStart, s.Now(), "time never moves backwards")
}

func TestTasksMayUseTheStore(t *testing.T) {
	s := newTestServer(t, Config{})
	c := createCustomer(t, s, map[string]any{"email": "ada@example.com", "name": "Ada"})
	s.schedule(testStart.Add(time.Minute), func() {
		_, err := s.withCustomer(c.ID, func(c *customer) { c.Status = "INACTIVE" })
		assert.NoError(t, err)
	})
	rec := serve(t, s, http.MethodPost, "/sandbox/clock/advance", basicHeader, `{"seconds":60}`)
	assert.Equal(t, "2025-01-02T03:05:05.000Z", decode[clockView](t, rec, 200).Data.Now.UTC().Format(timeLayout))
	got := decode[customerJSON](t, serve(t, s, http.MethodGet, "/v1/customers/"+c.ID, basicHeader, nil), 200).Data
	assert.Equal(t, "INACTIVE", got.Status)
}

func TestClockAdvanceEndpoint(t *testing.T) {
	s := newTestServer(t, Config{})
	env := decode[map[string]string](t, serve(t, s, http.MethodPost, "/sandbox/clock/advance", secretHeader, `{"seconds":3600}`), 200)
	assert.True(t, env.Success)
	assert.Equal(t, "2025-01-02T04:04:05.000Z", env.Data["now"])
	assert.Equal(t, testStart.Add(time.Hour), s.Now())

	for _, tc := range []struct{ body, message string }{
		{`{}`, "seconds is required"},
		{`{"seconds":-1}`, "seconds must be an integer from 0 to 3153600000"},
		{`{"seconds":1.5}`, "seconds must be an integer from 0 to 3153600000"},
		{`{"seconds":"10"}`, "seconds must be an integer from 0 to 3153600000"},
	} {
		requireError(t, serve(t, s, http.MethodPost, "/sandbox/clock/advance", basicHeader, tc.body), 400, CodeValidation, "seconds", tc.message)
	}
	requireError(t, serve(t, s, http.MethodPost, "/sandbox/clock/advance", "", `{"seconds":1}`), 401, CodeKeysMismatch, "", "missing credentials")
	assert.Equal(t, testStart.Add(time.Hour), s.Now(), "refused moves leave the clock")
}

// awaitSignal waits for ch, failing after a generous bound: the background
// runner works on the wall clock.
func awaitSignal(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the background runner did not run the task")
	}
}

func TestBackgroundRunnerRunsDueTasksWithARealClock(t *testing.T) {
	s := newTestServer(t, Config{Clock: realClock{}})
	ran := make(chan struct{})
	s.schedule(s.Now(), func() { close(ran) })
	awaitSignal(t, ran)
}

func TestBackgroundRunnerNoticesAnAdvance(t *testing.T) {
	s := newTestServer(t, Config{Clock: realClock{}})
	ran := make(chan struct{})
	s.schedule(s.Now().Add(time.Hour), func() { close(ran) })
	s.Advance(time.Hour - 5*time.Millisecond) // due 5ms later: the runner must re-arm its timer
	awaitSignal(t, ran)
}

func TestAdvanceWithARealClockRunsTasksSynchronously(t *testing.T) {
	s := newTestServer(t, Config{Clock: realClock{}})
	before := s.Now()
	var rec recorder
	s.schedule(before.Add(24*time.Hour), func() { rec.add("tomorrow") })
	s.Advance(48 * time.Hour)
	assert.Equal(t, []string{"tomorrow"}, rec.list())
	assert.GreaterOrEqual(t, s.Now().Sub(before), 48*time.Hour)
}

func TestCloseIsIdempotent(t *testing.T) {
	s := New(Config{})
	s.Close()
	s.Close()
	manual := New(Config{Clock: NewManualClock(testStart)})
	manual.Close()
	manual.Close()
	require.Equal(t, testStart, manual.Now())
}
