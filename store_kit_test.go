package billing

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/storekit"
)

// The store's vocabulary is the SDK's, value for value: every kind, its callback shape,
// every final state and its rank, every source, and the bounds the two share, so that a
// value added to one side and not the other fails here.
func TestStorekitSpeaksTheSDKsValues(t *testing.T) {
	for _, kind := range movementKinds {
		callback, ok := storekit.CallbackOf(string(kind))
		assert.True(t, ok, "storekit knows no kind %q", kind)
		assert.Equal(t, string(movements[kind].callback), callback, "the callback shape of %s", kind)
	}
	_, ok := storekit.CallbackOf("refund")
	assert.False(t, ok)
	states := []EventState{EventSucceeded, EventMismatched, EventFailed, EventExpired, EventUnknown, EventPending, "", "bogus"}
	for _, s := range states {
		o := Outcome{State: s}
		assert.Equal(t, o.IsFinal(), storekit.IsFinal(string(s)), "final %q", s)
		assert.Equal(t, finalRank[s], storekit.Rank(string(s)), "rank of %q", s)
	}
	for _, src := range []OutcomeSource{SourceCallback, SourceStatusCheck, SourceRequest} {
		o := outcomeKit(Outcome{State: EventSucceeded, Source: src, At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
		_, _, err := storekit.MergeOutcome(nil, storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "r1"}, o, nil)
		assert.NoError(t, err, "source %q", src)
	}
	assert.Equal(t, MaxEventBytes, storekit.MaxBodyBytes)
	assert.Equal(t, DefaultMaxTracked, storekit.DefaultMaxMovements)
	assert.Equal(t, DefaultMaxBytes, storekit.DefaultMaxBytes)
	for c := range 256 {
		assert.Equal(t, isLetter(byte(c)) || isDigit(byte(c)) || c == '-' || c == '_', storekit.ReferenceByte(byte(c)), "byte %#x", c)
	}
}

// fill sets every exported field of the struct v points to a value of its own, derived
// from the field's name, so that a conversion that drops or swaps a field shows.
func fill(v reflect.Value) {
	v = v.Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString("v-" + name)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(len(name)) * 7)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]byte("b-" + name)).Convert(f.Type()))
		case reflect.Struct:
			if f.Type() == reflect.TypeOf(time.Time{}) {
				f.Set(reflect.ValueOf(time.Date(2026, 1, 1, 0, 0, len(name), 0, time.UTC)))
			} else {
				fill(f.Addr())
			}
		case reflect.Pointer:
			p := reflect.New(f.Type().Elem())
			fill(p)
			f.Set(p)
		}
	}
}

// exported lists the exported fields of t, but those in skip.
func exported(t reflect.Type, skip ...string) []string {
	var names []string
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && !slices.Contains(skip, f.Name) {
			names = append(names, f.Name)
		}
	}
	return names
}

// The gate carries every field both ways: each record of the Tracker's has the fields
// of the store's record it converts to, no more and no fewer (Outcome's ID and Event
// aside: the Tracker names and derives them), and a value of every field comes back as
// it went.
func TestTheStoreGateCarriesEveryField(t *testing.T) {
	pairs := []struct {
		ours, kit reflect.Type
		skip      []string
	}{
		{reflect.TypeOf(movement{}), reflect.TypeOf(storekit.Movement{}), nil},
		{reflect.TypeOf(movementKey{}), reflect.TypeOf(storekit.MovementKey{}), nil},
		{reflect.TypeOf(Outcome{}), reflect.TypeOf(storekit.Outcome{}), []string{"ID", "Event"}},
		{reflect.TypeOf(settlement{}), reflect.TypeOf(storekit.Settlement{}), nil},
		{reflect.TypeOf(entry{}), reflect.TypeOf(storekit.Entry{}), nil},
		{reflect.TypeOf(callbackRecord{}), reflect.TypeOf(storekit.Callback{}), nil},
	}
	for _, p := range pairs {
		assert.Equal(t, exported(p.kit), exported(p.ours, p.skip...), "the fields of %s and %s", p.ours, p.kit)
	}

	var m movement
	fill(reflect.ValueOf(&m))
	assert.Equal(t, m, movementFromKit(m.kit()))
	var k storekit.MovementKey
	fill(reflect.ValueOf(&k))
	assert.Equal(t, k, keyFromKit(k).kit())
	var o storekit.Outcome
	fill(reflect.ValueOf(&o))
	assert.Equal(t, o, outcomeKit(outcomeFromKit(o)))
	var e storekit.Entry
	fill(reflect.ValueOf(&e))
	got := entryFromKit(e)
	assert.Equal(t, e.Movement, got.Movement.kit())
	assert.Equal(t, e.Final.Key, got.Final.Key.kit())
	assert.Equal(t, e.Final.Outcome, outcomeKit(got.Final.Outcome))
	assert.Equal(t, fmt.Sprint(e.Final.Body, e.Final.ID, e.Final.ByCallback, e.Final.ByStatusCheck, e.Final.Disagreed, e.Final.ReportedAt, e.Final.ReportAttempts),
		fmt.Sprint(got.Final.Body, got.Final.ID, got.Final.ByCallback, got.Final.ByStatusCheck, got.Final.Disagreed, got.Final.ReportedAt, got.Final.ReportAttempts))
	assert.Equal(t, e.Tracked, got.Tracked)
	assert.Equal(t, e.Forgotten, got.Forgotten)
	var c storekit.Callback
	fill(reflect.ValueOf(&c))
	assert.Equal(t, c, callbackFromKit(c).kit())
}

// refusingStore refuses every Track with the store's own ValidationError, wrapped.
type refusingStore struct{ storekit.Store }

func (refusingStore) Track(context.Context, storekit.Movement) (storekit.Movement, bool, error) {
	return storekit.Movement{}, false, fmt.Errorf("mystore: %w", &storekit.ValidationError{Field: "trackID", Rule: "must be at most 64 characters"})
}

// A store's refusal reaches the merchant as the SDK's ValidationError, same field and
// rule, with the store's own error still in the chain.
func TestAStoresRefusalIsAValidationError(t *testing.T) {
	tr := NewTracker(storeOnlyClient(t), TrackerOptions{Store: refusingStore{NewMemoryStore(0)}})
	err := tr.Track(context.Background(), KindSend, "refused1")
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "trackID", ve.Field)
	assert.Equal(t, "must be at most 64 characters", ve.Rule)
	var kit *storekit.ValidationError
	assert.ErrorAs(t, err, &kit)
	assert.Contains(t, err.Error(), "mystore")
}

// The gate passes a store's nil error on without allocating: every write of a
// resolution goes through it.
func TestStoreGatePassesNilErrorsWithoutAllocating(t *testing.T) {
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = gateErr(nil) }))
	err := gateErr(&storekit.ValidationError{Field: "clientReference", Rule: "is required"})
	var v *ValidationError
	require.ErrorAs(t, err, &v, "a store's validation error still reads as the SDK's")
	assert.Equal(t, "clientReference", v.Field)
}
