package billing

import (
	"context"
	"net/http"
	"testing"
)

// nopObserver is an Observer that does nothing: the cost it adds to a call is the hook's.
type nopObserver struct{}

func (nopObserver) CallStart(ctx context.Context, _ *CallInfo) context.Context       { return ctx }
func (nopObserver) CallEnd(context.Context, *CallInfo)                               {}
func (nopObserver) AttemptStart(ctx context.Context, _ *AttemptInfo) context.Context { return ctx }
func (nopObserver) AttemptEnd(context.Context, *AttemptInfo)                         {}

// BenchmarkCustomersGetObserved is BenchmarkCustomersGet with an Observer installed (one
// that does nothing) and with a ResponseMeta asked for, each beside the raw floor.
func BenchmarkCustomersGetObserved(b *testing.B) {
	srv := newBenchServer(b, 0)
	hc := rawClient()
	raw := func() error {
		var out dataOf[Customer]
		return rawCall(hc, http.MethodGet, srv.URL+"/v1/customers/cust_8f3a2b1c9d0e4f5a6b7c8d9e", nil, &out)
	}
	observed, err := NewClient(WithBaseURL(srv.URL), WithSecretKey("sk_test_bench"), WithObserver(nopObserver{}))
	if err != nil {
		b.Fatal(err)
	}
	plain := newBenchClient(b, srv.URL)
	var meta ResponseMeta
	for name, sdk := range map[string]func() error{
		"observer": func() error {
			_, err := observed.Customers.Get(context.Background(), "cust_8f3a2b1c9d0e4f5a6b7c8d9e")
			return err
		},
		"meta": func() error {
			_, err := plain.Customers.Get(WithResponseMeta(context.Background(), &meta), "cust_8f3a2b1c9d0e4f5a6b7c8d9e")
			return err
		},
	} {
		b.Run("with="+name, func(b *testing.B) {
			runSerialAndParallel(b, srv, "sdk", sdk)
			runInterleaved(b, sdk, raw)
		})
	}
}

// BenchmarkUnobservedCallHooks is what the pipeline spends on observing a call that
// asks for nothing: a context lookup and two nil checks.
func BenchmarkUnobservedCallHooks(b *testing.B) {
	c, err := NewClient(WithBaseURL("https://api.example.com"), WithSecretKey("sk"))
	if err != nil {
		b.Fatal(err)
	}
	o := newOp(http.MethodGet, "/v1/customers/cust_1")
	st := &attemptState{attempts: 1}
	res := &response{done: true, status: 200}
	h := &envelopeHeader{}
	ctx := context.WithValue(context.WithValue(context.Background(), spanKey{}, 1), attemptKey{}, st)
	b.ReportAllocs()
	for b.Loop() {
		_, call := c.startCall(ctx, o)
		call.finish(st, res, h, nil)
	}
}
