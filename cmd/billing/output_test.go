package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The columns of a line are scrubbed apart: an amount beside a date is no
// number, while a secret in any column is removed, and one holding a gap of
// its own is found whole.
func TestScrubberReadsColumnsApart(t *testing.T) {
	scrub := newTextScrubber([]string{"Pw0rdXyz"})
	line := "overdue  receive  pgover     GHS 25.00  2026-11-28T19:42:00Z  2026-11-28T19:42:00Z  2  -\n"
	assert.Equal(t, line, scrub(line))
	assert.NotContains(t, scrub("a  b Pw0rdXyz  c\n"), "Pw0rdXyz")
	assert.NotContains(t, newTextScrubber([]string{"two  spaced"})("x two  spaced y\n"), "two  spaced")
	assert.NotContains(t, scrub("call  233241234567  now\n"), "233241234567", "a number alone in its column is masked")
}
