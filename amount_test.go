package billing

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecimalAmountWritesExactlyTwoDecimals(t *testing.T) {
	for amount, want := range map[DecimalAmount]string{
		0: "0.00", 1: "0.01", 10: "0.10", 1050: "10.50", 100: "1.00", -1050: "-10.50", -5: "-0.05",
		math.MaxInt64: "92233720368547758.07", math.MinInt64: "-92233720368547758.08",
	} {
		assert.Equal(t, want, amount.String())
		b, err := json.Marshal(amount)
		require.NoError(t, err)
		assert.Equal(t, want, string(b))
	}
	b, err := json.Marshal(struct {
		Amount DecimalAmount `json:"Amount"`
	}{1010})
	require.NoError(t, err)
	assert.Equal(t, `{"Amount":10.10}`, string(b), "10.1 must never reach the wire")
}

func TestDecimalAmountDecodesLeniently(t *testing.T) {
	for in, want := range map[string]DecimalAmount{
		`10`: 1000, `10.5`: 1050, `10.50`: 1050, `"10.50"`: 1050, `10.500`: 1050, `0.01`: 1, `-2.5`: -250, `0`: 0,
	} {
		var got DecimalAmount
		require.NoError(t, json.Unmarshal([]byte(in), &got), in)
		assert.Equal(t, want, got, in)
	}
}

func TestDecimalAmountRefusesWhatItCannotHoldExactly(t *testing.T) {
	for _, in := range []string{`10.555`, `1e3`, `"abc"`, `"10."`, `".5"`, `01.00`, `"1,000.00"`, `true`, `99999999999999999999`, `"+1"`} {
		var got DecimalAmount
		assert.Error(t, json.Unmarshal([]byte(in), &got), in)
	}
}

func FuzzDecimalAmount(f *testing.F) {
	for _, seed := range []string{"10.50", "0", "-3.1", "10.555", "1e3", "00.1", "92233720368547758.07", "-92233720368547758.08", "92233720368547758.08", "-0.00"} {
		f.Add(seed)
	}
	for _, seed := range fixtureAmounts(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseDecimalAmount(s)
		if err != nil {
			return
		}
		again, err := ParseDecimalAmount(a.String())
		if err != nil || again != a {
			t.Fatalf("%q parsed to %d, formatted %q, parsed back to %d (%v)", s, a, a.String(), again, err)
		}
	})
}

func TestNullableThreeStates(t *testing.T) {
	type body struct {
		Phone Nullable[string] `json:"phone,omitzero"`
	}
	for want, v := range map[string]body{
		`{}`:                      {},
		`{"phone":null}`:          {Phone: Null[string]()},
		`{"phone":"+2332412345"}`: {Phone: Value("+2332412345")},
	} {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		assert.Equal(t, want, string(b))

		var back body
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, v, back)
	}
	got, ok := Value(7).Get()
	assert.True(t, ok)
	assert.Equal(t, 7, got)
	_, ok = Null[int]().Get()
	assert.False(t, ok)
	assert.True(t, Null[int]().IsNull())
	assert.True(t, Nullable[int]{}.IsZero())
}

// Writer and reader accept the same set at the int64 edges: every amount String writes
// parses back to itself, and one minor unit beyond either end is refused.
func TestDecimalAmountEdges(t *testing.T) {
	for _, v := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 99, math.MaxInt64 - 100, math.MinInt64, math.MinInt64 + 1,
		math.MinInt64 + 99, math.MinInt64 + 100, -1, 0, 1, -100, 100} {
		a := DecimalAmount(v)
		back, err := ParseDecimalAmount(a.String())
		require.NoError(t, err, a.String())
		assert.Equal(t, a, back, a.String())
		b, err := json.Marshal(a)
		require.NoError(t, err)
		var decoded DecimalAmount
		require.NoError(t, json.Unmarshal(b, &decoded), string(b))
		assert.Equal(t, a, decoded)
	}
	for _, s := range []string{"92233720368547758.08", "-92233720368547758.09", "92233720368547759", "-92233720368547759", "184467440737095516.16"} {
		_, err := ParseDecimalAmount(s)
		assert.ErrorContains(t, err, "out of range", s)
	}
}
