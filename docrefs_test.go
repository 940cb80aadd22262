package billing

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docReference is a comment's pointer at a section of the documentation: README
// "Two wires", docs/sandbox.md "Products and prices".
var docReference = regexp.MustCompile(`\b(README|docs/[a-z-]+\.md) "([^"]+)"`)

// markdownHeadings returns the titles of a markdown file's headings.
func markdownHeadings(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err, "a comment points at %s", path)
	defer f.Close()
	titles := map[string]bool{}
	fence := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(line, "#") {
			titles[strings.TrimSpace(strings.TrimLeft(line, "#"))] = true
		}
	}
	return titles
}

// Every comment of the module that sends a reader to a section of the README or of a
// page under docs/ names a section that exists: a reader who follows it finds it.
func TestCommentsPointAtSectionsThatExist(t *testing.T) {
	headings := map[string]map[string]bool{}
	found := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, group := range file.Comments {
			text := strings.Join(strings.Fields(group.Text()), " ")
			for _, m := range docReference.FindAllStringSubmatch(text, -1) {
				doc := m[1]
				if doc == "README" {
					doc = "README.md"
				}
				if headings[doc] == nil {
					headings[doc] = markdownHeadings(t, doc)
				}
				found++
				assert.True(t, headings[doc][m[2]], "%s: %s has no section %q", path, doc, m[2])
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.NotZero(t, found, "the pattern finds the module's references")
}
