package sandboxctl_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/billingtest/sandboxctl"
)

// A test suite drives a sandbox that runs in another process; here
// billingtest.Start stands for it, with its clock stopped.
func Example() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()

	ctl := sandboxctl.New(srv.URL, srv.ClientID, srv.ClientSecret)
	now, err := ctl.Advance(ctx, 6*time.Minute+1500*time.Millisecond)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sandbox time:", now.Format(time.RFC3339Nano))
	deliveries, err := ctl.Deliveries(ctx, 0, 100)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("callbacks posted:", len(deliveries))
	// Output:
	// sandbox time: 2025-01-01T00:06:01.5Z
	// callbacks posted: 0
}
