package billing

import (
	"os"
	"regexp"
	"strings"
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

// The numbering rules of the providers' countries, read from phoneCountries: for each
// country, a number of its length passes; a trunk 0 after the code, a digit too few or too
// many, and the national number alone are each refused with a rule naming the country
// and an example.
func TestPhoneRulesOfTheProvidersCountries(t *testing.T) {
	for _, c := range phoneCountries {
		national := strings.Repeat("7", c.national)
		got, err := NormalizePhone("+" + c.code + " " + national)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.code+national, got)
		got, err = NormalizePhone(c.example)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.example, got)
		for name, bad := range map[string]string{
			"trunk 0":       "+" + c.code + " 0" + national,
			"a digit short": "+" + c.code + national[1:],
			"a digit more":  "+" + c.code + national + "7",
		} {
			_, err := NormalizePhone(bad)
			v := requireValidationError(t, err)
			assert.Equal(t, "phone", v.Field, "%s %s", c.name, name)
			assert.Contains(t, v.Rule, c.code, "%s %s", c.name, name)
			assert.Contains(t, v.Rule, c.example, "the rule gives an example")
			assert.NotContains(t, v.Rule, national, "the rule never quotes the number")
		}
		// The national number alone is no international number.
		_, err = NormalizePhone(national)
		requireValidationError(t, err)
	}
	// The cases.
	for _, in := range []string{"+233 024 123 4567", "24 123 4567", "+233 24 123 456", "2330241234567"} {
		_, err := NormalizePhone(in)
		requireValidationError(t, err)
	}
	for _, in := range []string{"+1 415 555 0100", "+44 20 7946 0958", "+234 803 123 4567", "+683 4002", "+49 1512 345 678 901"} {
		_, err := NormalizePhone(in)
		require.NoError(t, err, in)
	}
}

// The README's sentence about phones is what NormalizePhone does: every number it says is
// sent as another is sent so, and every number it says is refused is refused.
func TestReadmePhonesSentenceIsTrue(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "**Phones**")
	if start < 0 {
		t.Fatal("the README no longer has its Phones paragraph")
	}
	para := strings.Join(strings.Fields(text[start:start+strings.Index(text[start:], "**Fields")]), " ")
	sent, refused, ok := strings.Cut(para, "refused")
	if !ok {
		t.Fatalf("the Phones paragraph says nothing is refused: %q", para)
	}
	quoted := regexp.MustCompile("`([^`]+)`")
	pairs := quoted.FindAllStringSubmatch(sent, -1)
	// Before "refused": a number and what it is sent as, then the refused ones.
	if len(pairs) < 3 {
		t.Fatalf("the Phones paragraph names %d numbers: %q", len(pairs), para)
	}
	got, err := NormalizePhone(pairs[0][1])
	if err != nil || got != pairs[1][1] {
		t.Errorf("the README says %q is sent as %q; NormalizePhone gives %q, %v", pairs[0][1], pairs[1][1], got, err)
	}
	refusedNumbers := append(pairs[2:], quoted.FindAllStringSubmatch(refused, -1)...)
	for _, m := range refusedNumbers {
		if got, err := NormalizePhone(m[1]); err == nil {
			t.Errorf("the README says %q is refused; NormalizePhone sends it as %q", m[1], got)
		}
	}
	if len(refusedNumbers) < 3 {
		t.Errorf("the README names %d refused numbers; want the local ones and the trunk 0", len(refusedNumbers))
	}
}

// A phone sent to the service is "+" and its digits, whatever spelling the merchant
// gave; one given that way already is kept as it is, with no copy.
func TestInternationalPhoneKeepsANormalNumber(t *testing.T) {
	for in, want := range map[string]string{
		"+233241234567":    "+233241234567",
		"233241234567":     "+233241234567",
		"+233 24 123 4567": "+233241234567",
		"00233241234567":   "+233241234567",
		"":                 "",
	} {
		got := in
		require.NoError(t, internationalPhone("phone", &got), in)
		assert.Equal(t, want, got, in)
	}
	normal := "+233241234567"
	allocs := testing.AllocsPerRun(100, func() {
		p := normal
		_ = internationalPhone("phone", &p)
	})
	assert.Zero(t, allocs, "a normal number is kept without a copy")
}
