package billing

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"time"
)

// logResult writes one line per call. It names the method, the path with long digit runs
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

// maskNumbers masks every standalone run of seven or more digits but its last three, so
// MSISDNs and account numbers in paths (mandate cancel, send-to-bank), transport errors
// and the service's messages never reach logs or errors in full. A run joined to letters
// or an underscore is part of an id or a reference, not a number, and stays as it is.
func maskNumbers(s string) string {
	var out []byte
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		joined := (start > 0 && isWordByte(s[start-1])) || (i < len(s) && isWordByte(s[i]))
		if i-start < 7 || joined {
			continue
		}
		if out == nil {
			out = []byte(s)
		}
		for j := start; j < i-3; j++ {
			out[j] = '*'
		}
	}
	if out == nil {
		return s
	}
	return string(out)
}

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
