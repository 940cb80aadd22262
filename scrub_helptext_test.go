package billing

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// helpTextDirs are the packages whose messages reach a merchant: the SDK's and its
// sandbox's (the service's words as the sandbox writes them).
var helpTextDirs = []string{".", "internal/sandbox", "billingtest"}

// helpTexts returns every string literal of the non-test sources of dirs that reads as a
// sentence (two words or more): the errors, refusals and help the SDK and the sandbox
// write. Read from the sources, so a message added later is in the list at once.
func helpTexts(t testing.TB, dirs ...string) map[string]string {
	t.Helper()
	texts := map[string]string{}
	for _, dir := range dirs {
		fset := token.NewFileSet()
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			path := filepath.Join(dir, name)
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err == nil && sentence(s) {
					texts[s] = fset.Position(lit.Pos()).String()
				}
				return true
			})
		}
	}
	return texts
}

// Every message the SDK and the sandbox write passes the scrubber unchanged: the
// scrubber masks data, never the words that explain it.
func TestScrubLeavesEveryHelpTextAsWritten(t *testing.T) {
	texts := helpTexts(t, helpTextDirs...)
	require.Greater(t, len(texts), 200, "the sources hold the SDK's messages")
	s := NewScrubber("cid-7f3a9c21", "cs-Qm4xT9vLp2", "sk_live_9d8c7b6a5f4e")
	for text, at := range texts {
		if got := s.Text(text); got != text {
			t.Errorf("%s: %q\n  scrubbed to %q", at, text, got)
		}
	}
}

// sentence reports whether s holds two words of letters or more: a message, not a
// value (a default card number, a layout).
func sentence(s string) bool {
	words := 0
	for _, w := range strings.Fields(s) {
		letters := 0
		for _, r := range w {
			if unicode.IsLetter(r) {
				letters++
			}
		}
		if letters >= 2 && letters*2 >= len([]rune(w)) {
			words++
		}
	}
	return words >= 2
}
