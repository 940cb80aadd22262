package billing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalizePhone(t *testing.T) {
	for in, want := range map[string]string{
		"+233 24 123 4567":   "233241234567",
		"233241234567":       "233241234567",
		"00233241234567":     "233241234567",
		"+233-24-123-4567":   "233241234567",
		"(+233) 24.123.4567": "",
		"+254 712 345678":    "254712345678",
	} {
		got, err := NormalizePhone(in)
		if want == "" {
			assert.Error(t, err, in)
			continue
		}
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
}

func TestNormalizePhoneRefusesLocalAndMalformedNumbers(t *testing.T) {
	for _, in := range []string{"0241234567", "024 123 4567", "", "+", "12345", "2332412345678901", "+233 24 123 456a", "+0233241234567"} {
		_, err := NormalizePhone(in)
		var v *ValidationError
		require.ErrorAs(t, err, &v, in)
		assert.Equal(t, "phone", v.Field)
	}
	_, err := NormalizePhone("0241234567")
	assert.ErrorContains(t, err, "international form with the country code")
}

func FuzzNormalizePhone(f *testing.F) {
	for _, seed := range []string{"+233 24 123 4567", "0241234567", "00233241234567", "+(1) 555-0100"} {
		f.Add(seed)
	}
	for _, seed := range fixturePhones(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		digits, err := NormalizePhone(s)
		if err != nil {
			return
		}
		again, err := NormalizePhone(digits)
		if err != nil || again != digits {
			t.Fatalf("%q normalised to %q, which normalises to %q (%v)", s, digits, again, err)
		}
	})
}
