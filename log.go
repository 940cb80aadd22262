package billing

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"time"
)

// logResult writes one line per call. It names the method, the path with numbers
// masked (phone and account numbers appear in some paths), the status, response code,
// attempts and duration; never headers, bodies or credentials.
func (c *Client) logResult(ctx context.Context, o *op, st *attemptState, res *response, h *envelopeHeader, err error, took time.Duration) {
	level := slog.LevelDebug
	switch {
	case errors.Is(err, ErrOutcomeUnknown), err != nil && !res.done:
		level = slog.LevelWarn
	case err != nil:
		level = slog.LevelInfo
	}
	if !c.logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", o.method),
		slog.String("path", maskNumbers(o.path)),
		slog.Int("attempts", st.attempts),
		slog.Duration("took", took),
	}
	if res.done {
		attrs = append(attrs, slog.Int("status", res.status))
	}
	if code := h.code(); code != "" {
		attrs = append(attrs, slog.String("code", string(code)))
	}
	if o.clientReference != "" {
		attrs = append(attrs, slog.String("clientReference", o.clientReference))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	c.logger.LogAttrs(ctx, level, "billing request", attrs...)
}

// maskNumbers masks every number of seven or more digits but its last three, so MSISDNs
// and account numbers in paths (mandate cancel, send-to-bank), transport errors and the
// service's messages never reach logs or errors in full.
//
// A number may be written in groups joined by single spaces or hyphens ("+233 55 777
// 1234", "233-557-771-234"); its digits are counted together. An ISO date
// (2025-01-15) is not a number. A run joined to letters or an underscore is part of an
// id or a reference ("cus_01H…", "ref0001234567") and stays as it is, unless the
// letters before it name a number ("msisdn233…", "ACC998…", "customerMsisdn233…").
func maskNumbers(s string) string {
	var out []byte
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		start := i
		digits := 0
		for {
			for i < len(s) && isDigit(s[i]) {
				i++
				digits++
			}
			// Another group follows a single separator.
			if i+1 < len(s) && (s[i] == ' ' || s[i] == '-') && isDigit(s[i+1]) {
				i++
				continue
			}
			break
		}
		joinedBefore := start > 0 && isWordByte(s[start-1]) && !numberLabelBefore(s, start)
		joinedAfter := i < len(s) && isWordByte(s[i])
		if digits < 7 || joinedBefore || joinedAfter || isoDate(s[start:i]) {
			continue
		}
		if out == nil {
			out = []byte(s)
		}
		for j, left := start, digits-3; left > 0; j++ {
			if isDigit(out[j]) {
				out[j] = '*'
				left--
			}
		}
	}
	if out == nil {
		return s
	}
	return string(out)
}

// numberLabels are words that, written right before a digit run, say it is a phone or
// account number.
var numberLabels = []string{"msisdn", "phone", "mobile", "tel", "momo", "wallet", "acc", "acct", "account", "iban", "card", "number", "num", "no", "nr"}

// numberLabelBefore reports whether the letters right before s[end] end with a number
// label, in any case.
func numberLabelBefore(s string, end int) bool {
	start := end
	for start > 0 && isLetter(s[start-1]) {
		start--
	}
	word := strings.ToLower(s[start:end])
	for _, label := range numberLabels {
		if strings.HasSuffix(word, label) {
			return true
		}
	}
	return false
}

// isoDate reports whether s is a date written YYYY-MM-DD.
func isoDate(s string) bool {
	return len(s) == 10 && s[4] == '-' && s[7] == '-' && isDigits(s[:4]) && isDigits(s[5:7]) && isDigits(s[8:])
}

func isLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isWordByte(b byte) bool {
	return b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
}

// scrubURL masks the digit runs of the URL inside a transport error, which net/http
// writes into the error text.
func scrubURL(err error) {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = maskNumbers(ue.URL)
	}
}
