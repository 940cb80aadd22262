package billing

import (
	"unicode"
	"unicode/utf16"
)

// jsonEscape decodes the JSON escape that s starts with (s[0] is the backslash): its rune
// and its length, or a length of 0 when s does not start with a valid escape. A lone
// surrogate reads as U+FFFD, as encoding/json reads it. The inbound gate's canonical
// form and the scrubber's decoding both read escapes here, so they mean one thing.
func jsonEscape[T ~string | ~[]byte](s T) (rune, int) {
	if len(s) < 2 || s[0] != '\\' {
		return 0, 0
	}
	switch s[1] {
	case '"', '\\', '/':
		return rune(s[1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return 0, 0
		}
		if !utf16.IsSurrogate(r) {
			return r, 6
		}
		if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if lo, ok := hex4(s[8:]); ok {
				if pair := utf16.DecodeRune(r, lo); pair != unicode.ReplacementChar {
					return pair, 12
				}
			}
		}
		return unicode.ReplacementChar, 6
	}
	return 0, 0
}

// hex4 reads the four hex digits s starts with.
func hex4[T ~string | ~[]byte](s T) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for i := range 4 {
		c := s[i]
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c|0x20 && c|0x20 <= 'f':
			d = c | 0x20 - 'a' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
