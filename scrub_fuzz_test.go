package billing

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/billingsdk/billing-go/internal/scrubcorpus"
)

// The corpus's decoder reads as deep as the scrubber does: a leak it reports is one the
// scrubber claims to catch.
func TestCorpusDecodesAsDeepAsTheScrubber(t *testing.T) {
	if scrubcorpus.DecodeLayers != maxDecodePasses {
		t.Fatalf("scrubcorpus.DecodeLayers = %d, the scrubber peels %d", scrubcorpus.DecodeLayers, maxDecodePasses)
	}
}

// FuzzScrub plants a secret of the Scrubber, in one of its encodings, between any two
// texts: the scrubbed text never shows it, read as decoded as the scrubber reads, and
// scrubbing never panics.
func FuzzScrub(f *testing.F) {
	r := rand.New(rand.NewPCG(35, 35))
	creds := scrubcorpus.NewCredentials(r)
	for _, p := range scrubcorpus.Plants(r, creds, 60) {
		f.Add("message: ", p.Text, " (end)", uint8(0))
	}
	f.Add("token=abc,", "", "", uint8(1))
	f.Add("%2", "", "", uint8(2))
	s := NewScrubber(creds.All()...)
	basic := creds.ClientID + ":" + creds.ClientSecret
	secrets := append(creds.All(), basic)
	f.Fuzz(func(t *testing.T, prefix, middle, suffix string, which uint8) {
		secret := secrets[int(which)%len(secrets)]
		enc := scrubcorpus.Encodings[int(which/8)%len(scrubcorpus.Encodings)]
		planted := scrubcorpus.Encode(rand.New(rand.NewPCG(uint64(which), 0)), secret, enc)
		text := prefix + planted + middle + suffix
		out := s.Text(text)
		_ = Scrub(text)
		if strings.Contains(out, secret) || strings.Contains(scrubcorpus.Decode(out), secret) {
			t.Fatalf("%q scrubbed to %q shows %q", text, out, secret)
		}
	})
}
