package billing

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestGHSIsCedisInPesewas(t *testing.T) {
	cases := map[int64]int64{0: 0, 1: 100, 50: 5000, -3: -300, math.MaxInt64 / 100: math.MaxInt64 / 100 * 100}
	for cedis, want := range cases {
		if got := GHS(cedis); got != want {
			t.Errorf("GHS(%d) = %d, want %d", cedis, got, want)
		}
	}
	if got := GHS(49) + Minor(99); (Money{Amount: got, Currency: "GHS"}).String() != "GHS 49.99" {
		t.Errorf("GHS(49)+Minor(99) prints %s", Money{Amount: got, Currency: "GHS"})
	}
	for _, over := range []int64{math.MaxInt64/100 + 1, math.MinInt64/100 - 1, math.MaxInt64, math.MinInt64} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("GHS(%d) did not panic on overflow", over)
				}
			}()
			GHS(over)
		}()
	}
}

// Every amount Money prints is read back by ParseMajor as the same minor units, for every
// currency whose decimal places the SDK knows, and for GHS as the common case.
func TestParseMajorReadsWhatMoneyPrints(t *testing.T) {
	seed := uint64(20261127)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	currencies := []string{"GHS", "USD"}
	for code := range minorUnitExceptions {
		currencies = append(currencies, code)
	}
	for _, code := range currencies {
		values := []int64{0, 1, 9, 10, 99, 100, 101, 4999, math.MaxInt64, -1, -4999, math.MinInt64 + 1}
		for range 200 {
			values = append(values, rng.Int64N(math.MaxInt64))
		}
		for _, v := range values {
			text := strings.ReplaceAll(strings.TrimPrefix(Money{Amount: v, Currency: code}.String(), code+" "), ",", "")
			got, err := ParseMajor(code, text)
			if err != nil || got != v {
				t.Fatalf("ParseMajor(%q, %q) = %d, %v; want %d", code, text, got, err, v)
			}
		}
	}
}

func TestParseMajorRefusesWhatIsNotAnAmount(t *testing.T) {
	good := map[[2]string]int64{
		{"GHS", "50"}: 5000, {"GHS", "49.99"}: 4999, {"GHS", "49.9"}: 4990, {"ghs", "0.01"}: 1,
		{"GHS", "49.990"}: 4999, {"XOF", "5000"}: 5000, {"XOF", "5000.00"}: 5000, {"KWD", "1.25"}: 1250,
		{"GHS", "92233720368547758.07"}: math.MaxInt64,
	}
	for in, want := range good {
		if got, err := ParseMajor(in[0], in[1]); err != nil || got != want {
			t.Errorf("ParseMajor(%q, %q) = %d, %v; want %d", in[0], in[1], got, err, want)
		}
	}
	bad := [][2]string{
		{"GHS", ""}, {"GHS", "-"}, {"GHS", "."}, {"GHS", "1."}, {"GHS", ".5"}, {"GHS", "1,000.00"},
		{"GHS", "49.999"}, {"XOF", "5000.5"}, {"GHS", "01"}, {"GHS", "1e3"}, {"GHS", " 5"}, {"GHS", "+5"},
		{"GHS", "92233720368547758.08"}, {"GHS", "92233720368547759"}, {"GHS", strconv.FormatUint(math.MaxUint64, 10)},
		{"GHS", "٥"}, {"GHS", "0x10"},
	}
	for _, in := range bad {
		got, err := ParseMajor(in[0], in[1])
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "amount" || got != 0 {
			t.Errorf("ParseMajor(%q, %q) = %d, %v; want a ValidationError of field amount", in[0], in[1], got, err)
		}
	}
}
