package billing

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callbackFields are the params of the Tracker's send helpers that carry a callback URL,
// by params type: the Go field and its name on the wire.
var callbackFields = map[reflect.Type][2]string{
	reflect.TypeFor[ReceiveParams]():       {"CallbackURL", "callbackUrl"},
	reflect.TypeFor[SendParams]():          {"CallbackURL", "callbackUrl"},
	reflect.TypeFor[BankTransferParams]():  {"PrimaryCallbackURL", "PrimaryCallbackUrl"},
	reflect.TypeFor[DirectDebitParams]():   {"PrimaryCallbackURL", "PrimaryCallbackURL"},
	reflect.TypeFor[MandateCreateParams](): {"CallbackURL", "callbackUrl"},
}

// Every send helper of the Tracker (found by reflection: a method taking a context and
// params) whose params carry a callback URL, called with it empty: without
// TrackerOptions.CallbackURL it is refused before anything is tracked or sent, saying
// how to set one; with it, the request carries the Tracker's URL and the caller's params
// are unchanged.
func TestTrackerSendHelpersNeedACallbackURL(t *testing.T) {
	const def = "https://shop.example.com/billing/callbacks"
	helpers := 0
	tt := reflect.TypeFor[*Tracker]()
	for m := range tt.NumMethod() {
		mt := tt.Method(m)
		if mt.Type.NumIn() != 3 || validParams[mt.Type.In(2)] == nil {
			continue
		}
		field, ok := callbackFields[mt.Type.In(2).Elem()]
		if !ok {
			if mt.Type.In(2) != reflect.TypeFor[*CheckoutParams]() { // its webhook URL is the business's
				t.Errorf("Tracker.%s takes %s: list its callback URL field in callbackFields", mt.Name, mt.Type.In(2))
			}
			continue
		}
		helpers++
		t.Run(mt.Name, func(t *testing.T) {
			for _, withDefault := range []bool{false, true} {
				c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
				var sent map[string]any
				mock.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
					b, _ := io.ReadAll(r.Body)
					_ = json.Unmarshal(b, &sent)
					return httpmock.NewStringResponse(http.StatusInternalServerError, `{}`), nil
				})
				opts := TrackerOptions{Clock: newFakeClock()}
				if withDefault {
					opts.CallbackURL = def
				}
				tr := NewTracker(c, opts)
				p := reflect.ValueOf(validParams[mt.Type.In(2)]())
				p.Elem().FieldByName(field[0]).SetString("")
				out := reflect.ValueOf(tr).Method(m).Call([]reflect.Value{reflect.ValueOf(context.Background()), p})
				err, _ := out[1].Interface().(error)
				assert.Empty(t, p.Elem().FieldByName(field[0]).String(), "the caller's params were changed")
				if !withDefault {
					var v *ValidationError
					require.True(t, errors.As(err, &v), "want a ValidationError, got %v", err)
					assert.Equal(t, field[1], v.Field)
					assert.Contains(t, v.Rule, "TrackerOptions.CallbackURL")
					assert.Zero(t, mock.GetTotalCallCount(), "a movement without a callback URL was sent")
					stats, serr := tr.Stats(context.Background())
					require.NoError(t, serr)
					assert.Zero(t, stats.Pending, "a movement without a callback URL was tracked")
					continue
				}
				require.Equal(t, 1, mock.GetTotalCallCount(), "error %v", err)
				got := ""
				for k, v := range sent {
					if strings.EqualFold(k, field[1]) {
						got, _ = v.(string)
					}
				}
				assert.Equal(t, def, got, "the request's %s", field[1])
			}
		})
	}
	require.Equal(t, len(callbackFields), helpers)
}
