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
		slog.String("path", redactPath(o.path)),
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

// redactPath masks every run of seven or more digits but its last three, so MSISDNs and
// account numbers in paths (mandate cancel, send-to-bank) never reach logs or errors in
// full.
func redactPath(p string) string {
	var out []byte
	runStart := -1
	flush := func(end int) {
		if runStart >= 0 && end-runStart >= 7 {
			if out == nil {
				out = []byte(p)
			}
			for i := runStart; i < end-3; i++ {
				out[i] = '*'
			}
		}
		runStart = -1
	}
	for i := 0; i < len(p); i++ {
		if p[i] >= '0' && p[i] <= '9' {
			if runStart < 0 {
				runStart = i
			}
			continue
		}
		flush(i)
	}
	flush(len(p))
	if out == nil {
		return p
	}
	return string(out)
}

// scrubURL masks the digit runs of the URL inside a transport error, which net/http
// writes into the error text.
func scrubURL(err error) {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = redactPath(ue.URL)
	}
}
