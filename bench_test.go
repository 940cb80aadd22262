package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
)

// benchServer answers like the service, from the recorded fixtures, and counts the TCP
// connections clients open to it.
type benchServer struct {
	*httptest.Server
	newConns atomic.Int64
}

func newBenchServer(b *testing.B) *benchServer {
	customer := fixture(b, "customers/customer.json")
	s := &benchServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = w.Write(customer)
	}))
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.newConns.Add(1)
		}
	}
	s.Start()
	b.Cleanup(s.Close)
	return s
}

// rawCreateCustomer is the floor: what a merchant would hand-write with net/http and
// encoding/json for the same call, on a client with the same pooled transport and
// per-request timeout as the SDK's (a production client without a timeout is a bug).
func rawCreateCustomer(hc *http.Client, baseURL, auth string, p *CustomerCreateParams) (*Customer, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, baseURL+"/v1/customers", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var env struct {
		Success bool     `json:"success"`
		Data    Customer `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return nil, err
	}
	return &env.Data, nil
}

// runSerialAndParallel measures fn serially and from 8 goroutines, reporting the TCP
// connections opened during the measured loop (0 once the pool is warm).
func runSerialAndParallel(b *testing.B, srv *benchServer, fn func() error) {
	b.Run("serial", func(b *testing.B) {
		measureConns(b, srv, func() {
			for b.Loop() {
				if err := fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("parallel8", func(b *testing.B) {
		b.SetParallelism(8 / max(1, runtimeProcs()))
		measureConns(b, srv, func() {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := fn(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	})
}

func measureConns(b *testing.B, srv *benchServer, loop func()) {
	b.ReportAllocs()
	before := srv.newConns.Load()
	b.ResetTimer()
	loop()
	b.StopTimer()
	b.ReportMetric(float64(srv.newConns.Load()-before), "new-conns")
}

func BenchmarkCustomersCreate(b *testing.B) {
	srv := newBenchServer(b)
	params := &CustomerCreateParams{Email: "ama.mensah@example.com", Name: "Ama Mensah", Metadata: Metadata{"segment": "retail"}}

	b.Run("sdk", func(b *testing.B) {
		c, err := NewClient(WithBaseURL(srv.URL), WithSecretKey("sk_test_bench"))
		if err != nil {
			b.Fatal(err)
		}
		warm(b, 8, func() error { _, err := c.Customers.Create(context.Background(), params); return err })
		runSerialAndParallel(b, srv, func() error {
			_, err := c.Customers.Create(context.Background(), params)
			return err
		})
	})
	b.Run("raw", func(b *testing.B) {
		hc := &http.Client{Transport: pooledTransport(), Timeout: DefaultTimeout}
		warm(b, 8, func() error { _, err := rawCreateCustomer(hc, srv.URL, "Bearer sk_test_bench", params); return err })
		runSerialAndParallel(b, srv, func() error {
			_, err := rawCreateCustomer(hc, srv.URL, "Bearer sk_test_bench", params)
			return err
		})
	})
}

// warm opens the pool's connections before measuring, from n goroutines at once.
func warm(b *testing.B, n int, fn func() error) {
	errs := make(chan error, n)
	for range n {
		go func() { errs <- fn() }()
	}
	for range n {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
