package billing_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// misspellings are common slips of English and of this domain, each with its spelling.
var misspellings = map[string]string{
	"accomodate":  "accommodate",
	"adress":      "address",
	"begining":    "beginning",
	"calender":    "calendar",
	"definately":  "definitely",
	"enviroment":  "environment",
	"existant":    "existent",
	"idempotant":  "idempotent",
	"independant": "independent",
	"lenght":      "length",
	"neccessary":  "necessary",
	"occured":     "occurred",
	"occurence":   "occurrence",
	"paramter":    "parameter",
	"persistant":  "persistent",
	"recieve":     "receive",
	"recieved":    "received",
	"reciept":     "receipt",
	"refered":     "referred",
	"responce":    "response",
	"retreive":    "retrieve",
	"seperate":    "separate",
	"similiar":    "similar",
	"succesful":   "successful",
	"successfull": "successful",
	"sucess":      "success",
	"teh":         "the",
	"thier":       "their",
	"transfered":  "transferred",
	"untill":      "until",
	"wich":        "which",
	"withold":     "withhold",
	"asyncronous": "asynchronous",
	"acknowlegde": "acknowledge",
}

var (
	docWord    = regexp.MustCompile(`[A-Za-z]+(?:'[a-z]+)?`)
	fencedCode = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```\\s*$")
)

// docsProse returns the Markdown files CI checks, with their fenced code blocks left out
// (code repeats words on purpose: `go test ./... && go test`).
func docsProse(t *testing.T) map[string]string {
	t.Helper()
	names, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	names = append(names, "README.md")
	prose := map[string]string{}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		// A fenced block becomes blank lines, so line numbers still match the file.
		prose[name] = fencedCode.ReplaceAllStringFunc(string(b), func(block string) string {
			return strings.Repeat("\n", strings.Count(block, "\n"))
		})
	}
	return prose
}

// docSlip is a word written twice in a row or misspelt, at a line of its text.
type docSlip struct {
	line int
	what string
}

// docSlips finds the words of text written twice in a row (across a line break too,
// in any case) and the listed misspellings.
func docSlips(text string) []docSlip {
	var slips []docSlip
	prev, prevEnd := "", 0
	for _, loc := range docWord.FindAllStringIndex(text, -1) {
		word := text[loc[0]:loc[1]]
		line := strings.Count(text[:loc[0]], "\n") + 1
		if prev != "" && strings.EqualFold(prev, word) && strings.TrimSpace(text[prevEnd:loc[0]]) == "" {
			slips = append(slips, docSlip{line, fmt.Sprintf("%q is written twice in a row", word)})
		}
		if right, ok := misspellings[strings.ToLower(word)]; ok {
			slips = append(slips, docSlip{line, fmt.Sprintf("%q is spelled %q", word, right)})
		}
		prev, prevEnd = word, loc[1]
	}
	return slips
}

// No word of the README or of docs/ is written twice in a row ("each each", "the the"),
// and none is a listed misspelling.
func TestDocsHaveNoRepeatedWordsOrMisspellings(t *testing.T) {
	for name, text := range docsProse(t) {
		for _, slip := range docSlips(text) {
			t.Errorf("%s:%d: %s", name, slip.line, slip.what)
		}
	}
}

// The check finds what it is for: a repeat across a line break, a misspelling in any
// case, and nothing in a fenced block.
func TestDocsCheckFindsItsSlips(t *testing.T) {
	text := "Four tables, each\neach against its own sandbox.\n```sh\ngo go\n```\nRecieve it.\n"
	text = fencedCode.ReplaceAllStringFunc(text, func(block string) string {
		return strings.Repeat("\n", strings.Count(block, "\n"))
	})
	want := []docSlip{{2, `"each" is written twice in a row`}, {6, `"Recieve" is spelled "receive"`}}
	if got := docSlips(text); !reflect.DeepEqual(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
}
