package scrubcorpus

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Leaked finds every plant in its own Text, whatever its encoding: the oracle sees what
// it is asked to look for.
func TestLeakedFindsEveryPlantInItsText(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	creds := NewCredentials(r)
	plants := Plants(r, creds, 200)
	seen := map[Kind]map[Encoding]bool{}
	for _, p := range plants {
		if len(Leaked("message: "+p.Text+" (end)", []Plant{p})) != 1 {
			t.Errorf("%v: not found in its own text", p)
		}
		if seen[p.Kind] == nil {
			seen[p.Kind] = map[Encoding]bool{}
		}
		seen[p.Kind][p.Encoding] = true
	}
	for _, k := range Kinds {
		for _, e := range Encodings {
			if applies(k, e) && !seen[k][e] {
				t.Errorf("no plant of kind %s in encoding %s", k, e)
			}
		}
	}
}

// Leaked finds nothing in a text the plant was masked in as the scrubber masks.
func TestLeakedIgnoresMaskedPlants(t *testing.T) {
	for _, tc := range []struct {
		p   Plant
		out string
	}{
		{Plant{Kind: MSISDN, Value: "+233 24 123 9876"}, "call %2B***+**+***+*876 failed"},
		{Plant{Kind: Email, Value: "ama.mensah+vip@例え.jp"}, "customer a***%40例え.jp exists"},
		{Plant{Kind: Secret, Value: "sk_live_abcdef"}, "key [redacted]"},
		{Plant{Kind: Account, Value: "1441000123456"}, "account **********456 on port 127.0.0.1:41441"},
	} {
		if got := Leaked(tc.out, []Plant{tc.p}); len(got) != 0 {
			t.Errorf("%v reported in %q", tc.p, tc.out)
		}
	}
	if !strings.Contains(Decode(`\u0032%2533`), "23") {
		t.Error("Decode peels nested escapes")
	}
}
