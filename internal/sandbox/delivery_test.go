package sandbox

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeliveryRetriesUntilTheReceiverAnswers2xx(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	answers := []int{500, 503, 200}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		bodies = append(bodies, string(b))
		w.WriteHeader(answers[len(bodies)-1])
	}))
	defer receiver.Close()

	clock := NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := New(Config{Clock: clock})
	defer s.Close()
	s.deliver(receiver.URL, map[string]string{"ResponseCode": "0000"})

	s.Advance(0)
	require.Len(t, s.Deliveries(), 1, "the first attempt runs at the next Advance")
	s.Advance(29 * time.Second)
	assert.Len(t, s.Deliveries(), 1, "not before the first wait is over")
	s.Advance(time.Second)
	assert.Len(t, s.Deliveries(), 2)
	s.Advance(time.Minute)
	got := s.Deliveries()
	require.Len(t, got, 3)
	assert.Equal(t, []int{500, 503, 200}, []int{got[0].Status, got[1].Status, got[2].Status})
	assert.Equal(t, []int{1, 2, 3}, []int{got[0].Attempt, got[1].Attempt, got[2].Attempt})
	s.Advance(24 * time.Hour)
	assert.Len(t, s.Deliveries(), 3, "no attempt after a 2xx")
	for _, b := range bodies {
		assert.JSONEq(t, `{"ResponseCode":"0000"}`, b)
	}
}

func TestDeliveryGivesUpAfterTheSchedule(t *testing.T) {
	clock := NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := New(Config{Clock: clock})
	defer s.Close()
	s.deliver("http://127.0.0.1:1/unreachable", map[string]int{"n": 1})
	s.Advance(48 * time.Hour)
	got := s.Deliveries()
	assert.Len(t, got, len(redeliveryWaits)+1)
	for _, d := range got {
		assert.Zero(t, d.Status)
	}
}
