package otelbilling

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// Every operator's action is a span naming the actor, the movement and its states, and
// a counted action; a refused one's span has an error status. The actor's email is
// masked as every text the package sets.
func TestOperatorActionsAreSpansAndCounted(t *testing.T) {
	tp, sr := recorder(t)
	reader := sdkmetric.NewManualReader()
	metrics, err := NewTrackerMetrics(WithTracerProvider(tp), WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		t.Fatal(err)
	}
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{Clock: srv.Clock(), Observer: metrics})
	ctx := context.Background()
	if err := tr.Track(ctx, billing.KindSend, "refund7"); err != nil {
		t.Fatal(err)
	}
	const actor = "ama.mensah@example.com"
	if _, err := tr.Resolve(ctx, actor, "the service lost it", billing.KindSend, "refund7", billing.EventFailed); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Release(ctx, actor, "sent by mistake", billing.KindSend, "refund7"); !errors.Is(err, billing.ErrAlreadySettled) {
		t.Fatalf("Release of a resolved movement = %v, want ErrAlreadySettled", err)
	}

	spans := sr.Ended()
	var names []string
	for _, s := range spans {
		if strings.HasPrefix(s.Name(), "billing operator ") {
			names = append(names, s.Name())
		}
	}
	if strings.Join(names, ",") != "billing operator resolve,billing operator release" {
		t.Fatalf("operator spans %v", names)
	}
	for _, s := range spans {
		if !strings.HasPrefix(s.Name(), "billing operator ") {
			continue
		}
		a := attrs(s)
		if a[AttrClientReference] != "refund7" || a[AttrMovementKind] != string(billing.KindSend) {
			t.Errorf("%s: attributes %v", s.Name(), a)
		}
		if got, _ := a[AttrOperatorActor].(string); got == actor || got == "" {
			t.Errorf("%s: the actor reads %q, want it masked", s.Name(), got)
		}
		switch s.Name() {
		case "billing operator resolve":
			if a[AttrStateBefore] != "pending" || a[AttrStateAfter] != "failed" || s.Status().Code == codes.Error {
				t.Errorf("resolve span: %v, status %v", a, s.Status())
			}
		case "billing operator release":
			if s.Status().Code != codes.Error {
				t.Errorf("the refused release's span has status %v, want an error", s.Status())
			}
		}
	}
	got := counts(t, collect(t, reader)["billing.tracker.operator_actions"], AttrOperatorAction, "error.type")
	if got["resolve,none"] != 1 || got["release,refused"] != 1 {
		t.Errorf("operator_actions counted %v", got)
	}
}
