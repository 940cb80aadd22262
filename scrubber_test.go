package billing

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Scrubber removes each secret it was given in every encoding text can carry it in,
// the Basic pair of two of them included.
func TestScrubberRemovesEverySecretForm(t *testing.T) {
	const id, secret = "cid-7f3a9", "Pa/ss w0rd+&é"
	s := NewScrubber(id, secret)
	pair := []byte(id + ":" + secret)
	forms := map[string]string{
		"raw":           secret,
		"query":         url.QueryEscape(secret),
		"path":          url.PathEscape(secret),
		"query lower":   lowerHex(url.QueryEscape(secret)),
		"json":          `Pa/ss w0rd+\u0026é`,
		"basic std":     base64.StdEncoding.EncodeToString(pair),
		"basic url raw": base64.RawURLEncoding.EncodeToString(pair),
	}
	for name, form := range forms {
		got := s.Text("refused: " + form + " (end)")
		assert.Equal(t, "refused: [redacted] (end)", got, name)
	}
	err := s.Error(fmt.Errorf("wrapped: %w", errors.New("key "+secret)))
	assert.Equal(t, "wrapped: key [redacted]", err.Error())
	assert.Equal(t, `"wrapped: key [redacted]"`, fmt.Sprintf("%q", err))
	assert.Nil(t, s.Error(nil))
}

// A nil Scrubber knows no secrets but still masks personal data.
func TestNilScrubberMasksPersonalData(t *testing.T) {
	var s *Scrubber
	assert.Equal(t, "call *********567", s.Text("call 233241234567"))
	assert.Equal(t, "call *********567", s.Error(errors.New("call 233241234567")).Error())
}

// The Client's Scrubber knows the credentials the Client was given.
func TestClientScrubberKnowsItsCredentials(t *testing.T) {
	c, err := NewClient(WithBaseURL("https://api.example.com"), WithClientCredentials("cid-7f3a9", "opaque-9Xq2"), WithSecretKey("sk_live_4242abcd"))
	require.NoError(t, err)
	basic := base64.StdEncoding.EncodeToString([]byte("cid-7f3a9:opaque-9Xq2"))
	got := c.Scrubber().Text("unknown key sk_live_4242abcd for cid-7f3a9 (" + basic + ") / opaque-9Xq2")
	for _, secret := range []string{"sk_live_4242abcd", "cid-7f3a9", basic, "opaque-9Xq2"} {
		assert.NotContains(t, got, secret)
	}
	assert.Nil(t, (*Client)(nil).Scrubber())
}

// A credential's value that ends inside a secret, and the secret, are hidden together.
func TestOverlappingFindsHideTheirUnion(t *testing.T) {
	s := NewScrubber("Pa/ss w0rd+&é")
	got := s.Text("token=xPa/ss w0rd+&é and more")
	assert.Equal(t, "token=[redacted] and more", got)
}
