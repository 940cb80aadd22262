package billing

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/storekit"
)

// contextCalls lists, by reflection, every exported method that takes a context first:
// of the Client's services, and of a Tracker (a new one for each call).
func contextCalls(t *testing.T, c *Client) []exportedCall {
	ctxType := reflect.TypeFor[context.Context]()
	calls := exportedCalls(t, c)
	seen := map[string]bool{}
	for _, call := range calls {
		seen[call.name] = true
	}
	tt := reflect.TypeFor[*Tracker]()
	for m := range tt.NumMethod() {
		mt := tt.Method(m)
		if name := "Tracker." + mt.Name; !seen[name] && mt.Type.NumIn() > 1 && mt.Type.In(1) == ctxType {
			calls = append(calls, exportedCall{name, func() reflect.Value {
				return reflect.ValueOf(NewTracker(c, TrackerOptions{})).Method(m)
			}})
		}
	}
	return calls
}

// argsFor returns arguments for fn: ctx first, valid params and ids, and the zero value
// of anything else.
func argsFor(fn reflect.Value, ctx context.Context) []reflect.Value {
	ft := fn.Type()
	args := make([]reflect.Value, ft.NumIn())
	for i := range ft.NumIn() {
		in := ft.In(i)
		switch {
		case i == 0:
			args[i] = reflect.Zero(in)
			if ctx != nil {
				args[i] = reflect.ValueOf(ctx)
			}
		case in.Kind() == reflect.String:
			args[i] = reflect.ValueOf(validIDs[0]).Convert(in)
		case validParams[in] != nil:
			args[i] = reflect.ValueOf(validParams[in]())
		case in == reflect.TypeFor[Kind]():
			args[i] = reflect.ValueOf(KindReceive)
		default:
			args[i] = reflect.Zero(in)
		}
	}
	return args
}

// Every exported method that takes a context, given a nil one, returns an error and
// panics nowhere, on the caller's goroutine or on one of its own; given a nil pointer or
// interface for any other argument, it panics nowhere either. The methods are found by
// reflection, so a method added later is held to it.
func TestNilContextAndNilArgumentsAreErrorsNotPanics(t *testing.T) {
	srv := newRouteRecorder(t)
	c, err := NewClient(WithBaseURL(srv.URL), WithClientCredentials("client-id", "client-secret"), WithDisbursementAccount("2020202"), WithRetry(1, 0, 0))
	require.NoError(t, err)
	calls := contextCalls(t, c)
	for _, call := range calls {
		fn := call.fn()
		err := invoke(fn, argsFor(fn, nil))
		if assert.Error(t, err, "%s(nil, ...)", call.name) {
			assert.NotContains(t, err.Error(), "panic", "%s(nil, ...)", call.name)
		}
		if call.name == "Tracker.Run" || call.name == "Tracker.Await" {
			continue // their other arguments cannot be nil; with a live context they wait
		}
		for i := 1; i < fn.Type().NumIn(); i++ {
			switch fn.Type().In(i).Kind() {
			case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func:
			default:
				continue
			}
			args := argsFor(fn, context.Background())
			args[i] = reflect.Zero(fn.Type().In(i))
			err := invoke(call.fn(), args)
			if err != nil {
				assert.NotContains(t, err.Error(), "panic", "%s with a nil argument %d", call.name, i)
			}
		}
	}
	t.Logf("%d methods taking a context", len(calls))

	tr := NewTracker(c, TrackerOptions{})
	assert.Error(t, tr.Deliver(context.Background(), nil))
	var typedNil *TransactionCallback
	assert.Error(t, tr.Deliver(context.Background(), typedNil))
	assert.NotPanics(t, func() { assert.Error(t, eventKey(nil).kit().Validate()) })
	assert.NotPanics(t, func() { assert.Error(t, eventKey(typedNil).kit().Validate()) })
}

// NewTracker refuses a nil Client at once, instead of a Tracker whose every later call
// (and whose Run, on a goroutine of its own) would panic.
func TestNewTrackerRefusesANilClient(t *testing.T) {
	assert.PanicsWithValue(t, "billing: NewTracker needs a Client", func() { NewTracker(nil, TrackerOptions{}) })
}

func TestNilContextErrorNamesTheContext(t *testing.T) {
	c, _ := newMockClient(t)
	//lint:ignore SA1012 a nil context is what the test gives
	_, err := c.Customers.Get(nil, "cust_1")
	v := requireValidationError(t, err)
	assert.Equal(t, "ctx", v.Field)
	assert.True(t, strings.Contains(v.Rule, "context.Background"))
}

// panickingObserver panics at the start of every call, quoting a phone number.
type panickingObserver struct{ routeObserver }

func (*panickingObserver) CallStart(context.Context, *CallInfo) context.Context {
	panic("observer broke on 233241234567")
}

// A panic on a goroutine Run started (here an Observer of the merchant's, told of a
// status check) is recovered: Run returns it as an error, the log says where it was,
// scrubbed, and the process lives on.
func TestRunReturnsAPanicOfItsGoroutinesAsAnError(t *testing.T) {
	c, _ := newMockClient(t, WithObserver(&panickingObserver{}))
	clock := newFakeClock()
	var logs syncBuffer
	tr := NewTracker(c, TrackerOptions{Clock: clock, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, tr.Track(ctx(), KindReceive, "ref1"))
	clock.Advance(time.Hour)
	err := tr.Run(ctx())
	require.ErrorContains(t, err, "recovered a panic in a status check of Run")
	assert.NotContains(t, err.Error(), "233241234567")
	assert.Contains(t, logs.String(), "billing: recovered a panic")
	assert.NotContains(t, logs.String(), "233241234567")
}

// A Store that panics is a failing store call, not a crashed process.
func TestAPanickingStoreIsAnError(t *testing.T) {
	c, _ := newMockClient(t)
	tr := NewTracker(c, TrackerOptions{Store: panickingStore{NewMemoryStore(0)}})
	err := tr.Track(ctx(), KindReceive, "ref1")
	require.ErrorContains(t, err, "recovered a panic in the store's")
}

// panickingStore panics on every Track.
type panickingStore struct{ storekit.Store }

func (panickingStore) Track(context.Context, storekit.Movement) (storekit.Movement, bool, error) {
	panic("store broke")
}

// storeOnlyClient is a Client for a Tracker whose test exercises only its store: it
// points at an address nothing answers.
func storeOnlyClient(t testing.TB) *Client {
	c, err := NewClient(WithBaseURL("http://127.0.0.1:9"), WithClientCredentials("client-id", "client-secret"))
	require.NoError(t, err)
	return c
}

// The helpers that take a context and return no error neither panic on a nil one: the
// claim is absent, and the response meta leaves the nil context to the call, which
// refuses it with a ValidationError.
func TestContextHelpersTakeANilContext(t *testing.T) {
	var nilCtx context.Context
	assert.NotPanics(t, func() {
		_, ok := UnconfirmedClaimFrom(nilCtx)
		assert.False(t, ok)
	})
	var meta ResponseMeta
	var ctx context.Context
	assert.NotPanics(t, func() { ctx = WithResponseMeta(nilCtx, &meta) })
	c, _ := newMockClient(t)
	_, err := c.Customers.Get(ctx, "cus_1")
	var ve *ValidationError
	assert.ErrorAs(t, err, &ve)
}
