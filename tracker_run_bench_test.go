package billing_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// BenchmarkRunResolvesOverdue measures how many overdue movements one Run resolves per
// second against the sandbox: payouts whose callbacks were dropped, each resolved by its
// status check, settled and reported to OnOutcome, on the in-memory store.
func BenchmarkRunResolvesOverdue(b *testing.B) {
	const n = 500
	srv := billingtest.NewServer(b, billingtest.WithManualClock())
	c := srv.Client()
	ctx := context.Background()
	var resolved int
	var elapsed time.Duration
	for round := 0; b.Loop(); round++ {
		b.StopTimer()
		reported := make(chan struct{}, n)
		tr := billing.NewTracker(c, billing.TrackerOptions{Clock: srv.Clock(), RunInterval: time.Hour,
			OnOutcome: func(context.Context, *billing.Outcome) error { reported <- struct{}{}; return nil }})
		for i := range n {
			ref := fmt.Sprintf("bench%dr%d", round, i)
			srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: ref})
			if _, err := tr.Send(ctx, &billing.SendParams{Amount: 100, Phone: "233201234567", Provider: billing.ProviderTelecel,
				Description: "bench", ClientReference: ref, CallbackURL: "http://127.0.0.1:1/none"}); err != nil {
				b.Fatal(err)
			}
		}
		srv.Advance(6 * time.Minute) // every callback is overdue
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		b.StartTimer()
		start := time.Now()
		go func() { done <- tr.Run(runCtx) }()
		for range n {
			<-reported
		}
		elapsed += time.Since(start)
		resolved += n
		b.StopTimer()
		stop()
		<-done
		b.StartTimer()
	}
	b.ReportMetric(float64(resolved)/elapsed.Seconds(), "movements/s")
}
