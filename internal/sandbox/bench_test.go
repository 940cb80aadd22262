package sandbox

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// benchmarkRequests sends the requests newRequest makes to s from parallel
// goroutines, in-process, and reports requests per second across them all.
func benchmarkRequests(b *testing.B, s *Server, want int, newRequest func() *http.Request) {
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, newRequest())
			if rec.Code != want {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// authorized is a request with the default Basic credentials.
func authorized(method, target string, body io.Reader) *http.Request {
	req := httptest.NewRequest(method, target, body)
	req.Header.Set("Authorization", basicHeader)
	return req
}

func BenchmarkSandboxGetCustomer(b *testing.B) {
	s := newTestServer(b, Config{})
	c := createCustomer(b, s, map[string]any{"email": "ada@example.com", "name": "Ada", "metadata": map[string]any{"tier": "gold"}})
	benchmarkRequests(b, s, http.StatusOK, func() *http.Request {
		return authorized(http.MethodGet, "/v1/customers/"+c.ID, nil)
	})
}

func BenchmarkSandboxCreateCustomer(b *testing.B) {
	s := newTestServer(b, Config{})
	var n atomic.Int64
	benchmarkRequests(b, s, http.StatusCreated, func() *http.Request {
		body := fmt.Sprintf(`{"email":"c%d@example.com","name":"Customer","phone":"+233241234567","metadata":{"tier":"gold"}}`, n.Add(1))
		return authorized(http.MethodPost, "/v1/customers", strings.NewReader(body))
	})
}

// BenchmarkSandboxListCustomersDeep reads pages of 100 from the middle of a
// list of 100,000 customers: a page must cost its size, not its depth.
func BenchmarkSandboxListCustomersDeep(b *testing.B) {
	s := newTestServer(b, Config{})
	for i := range 100_000 {
		email := fmt.Sprintf("c%d@example.com", i)
		if _, err := s.insertCustomer(&customer{Email: email, emailKey: email, Name: "C", Status: "ACTIVE", Currency: defaultCurrency}); err != nil {
			b.Fatal(err)
		}
	}
	target := "/v1/customers?limit=100&cursor=" + encodeCursor(s.customers.table.ids[50_000])
	benchmarkRequests(b, s, http.StatusOK, func() *http.Request {
		return authorized(http.MethodGet, target, nil)
	})
}
