package billing

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A secret's name followed by a list, in JSON or in prose, hides every element of the
// list and keeps the text's shape: for every name of a secret the scrubber knows (the
// schemes Basic and Bearer take theirs after a space), a JSON body stays JSON and none
// of its planted values is left.
func TestEveryElementOfAListAfterASecretsNameIsHidden(t *testing.T) {
	plants := []string{"sk_live_4f3a9b2c", "hunter2", "Y2lkOnNlY3JldA=="}
	for _, w := range credentialWords {
		if credentialScheme(w) {
			continue
		}
		for _, body := range []string{
			fmt.Sprintf(`{"%s":["%s","%s"],"n":1}`, w, plants[0], plants[1]),
			fmt.Sprintf(`{"%ss": [ "%s" , "%s" ]}`, w, plants[1], plants[2]),
			fmt.Sprintf(`{"%s":[%q]}`, w, plants[2]),
		} {
			got := Scrub(body)
			for _, p := range plants {
				assert.NotContains(t, got, p, "%s: %s", body, got)
			}
			assert.True(t, json.Valid([]byte(got)), "%s became %s, no longer JSON", body, got)
		}
		prose := fmt.Sprintf("%s=[%s, %s] refused", w, plants[0], plants[1])
		got := Scrub(prose)
		for _, p := range plants[:2] {
			assert.NotContains(t, got, p, "%s: %s", prose, got)
		}
		assert.True(t, strings.HasSuffix(got, "] refused"), "%s became %s", prose, got)
	}
}

// An amount, a date and a time side by side (a table's row, a log line) are no phone
// number: a date never continues the digits before it, whatever separates them.
func TestAnAmountBesideADateIsNoNumber(t *testing.T) {
	for _, amount := range []string{"25.00", "150", "1,500.50", "GHS 25.00", "0"} {
		for _, sep := range []string{" ", "  ", "\t", " - ", "_"} {
			for _, when := range []string{"2026-11-28T19:58:48Z", "2026-11-28", "2026-11-28 19:58"} {
				line := amount + sep + when + sep + "2"
				assert.Equal(t, line, Scrub(line))
			}
		}
	}
	// A phone number before a date is still masked, and the date stays.
	assert.Equal(t, "*********876  2026-11-28", Scrub("233241239876  2026-11-28"))
}
