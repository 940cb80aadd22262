package main

import (
	"bytes"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest/sandboxctl"
)

// Everything the command writes, to stdout and to stderr, passes through one
// scrubbing writer: the secrets it was given (credentials in flags and the
// environment, URL passwords and query values) by exact match in every
// encoding, then the personal data the SDK's scrubber masks. The command
// itself quotes a URL only through quoteURL, so a password never reaches the
// writer in the first place; the writer is the gate nothing passes beside.

// urlEnv are the variables holding a URL that may carry a password or a
// token; secretEnv those holding a credential.
var (
	urlEnv    = []string{"BILLING_BASE_URL", "DATABASE_URL"}
	secretEnv = []string{"BILLING_CLIENT_ID", "BILLING_CLIENT_SECRET", "BILLING_SECRET_KEY", "BILLING_SESSION_TOKEN"}
	// secretFlags are the flags whose value is a credential.
	secretFlags = map[string]bool{"client-id": true, "client-secret": true}
	// public are the standalone sandbox's own credentials: printed in its banner
	// and in the docs, never a secret.
	public = map[string]bool{sandboxctl.DefaultClientID: true, sandboxctl.DefaultClientSecret: true}
)

// commandSecrets returns the secrets the command was given in args and the
// environment.
func commandSecrets(args []string, getenv func(string) string) []string {
	var secrets []string
	add := func(v string) {
		if v != "" && !public[v] {
			secrets = append(secrets, v)
		}
	}
	for _, name := range secretEnv {
		add(getenv(name))
	}
	for _, name := range urlEnv {
		for _, s := range urlSecrets(getenv(name)) {
			add(s)
		}
	}
	for i, arg := range args {
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if strings.HasPrefix(arg, "-") && secretFlags[name] {
			if hasValue {
				add(value)
			} else if i+1 < len(args) {
				add(args[i+1])
			}
		}
		for _, s := range urlSecrets(arg) {
			add(s)
		}
	}
	return secrets
}

// userinfo finds the userinfo of a URL of any scheme, read as leniently as a
// person writes it: everything between "://" and the last "@" before the path's
// end, so that a password holding '/', '?' or '#' is found whole.
var userinfo = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.\-]*://)(.*)@`)

// minQuerySecret is the shortest query value taken for a secret: shorter ones
// (limit=10, state=overdue) are parameters, and would redact ordinary words.
const minQuerySecret = 8

// urlSecrets returns what in text, read as a URL, is a secret: the userinfo's
// password (and the userinfo whole), and the long query values.
func urlSecrets(text string) []string {
	if !strings.Contains(text, "://") {
		return nil
	}
	var secrets []string
	rest := text
	if m := userinfo.FindStringSubmatch(text); m != nil {
		info := m[2]
		secrets = append(secrets, info)
		if _, password, ok := strings.Cut(info, ":"); ok && password != "" {
			secrets = append(secrets, password)
			if p, err := url.PathUnescape(password); err == nil && p != password {
				secrets = append(secrets, p)
			}
		}
		rest = text[len(m[0]):]
	}
	if _, query, ok := strings.Cut(rest, "?"); ok {
		query, _, _ = strings.Cut(query, "#")
		for part := range strings.SplitSeq(query, "&") {
			_, value, _ := strings.Cut(part, "=")
			if len(value) >= minQuerySecret {
				secrets = append(secrets, value)
				if v, err := url.QueryUnescape(value); err == nil && v != value {
					secrets = append(secrets, v)
				}
			}
		}
	}
	return secrets
}

// redactURL returns raw with the password of its userinfo and its long query
// values replaced by [redacted], whatever its scheme.
func redactURL(raw string) string {
	out := raw
	if m := userinfo.FindStringSubmatch(raw); m != nil {
		user, _, hasPassword := strings.Cut(m[2], ":")
		replacement := "[redacted]"
		if hasPassword {
			replacement = user + ":[redacted]"
		}
		out = m[1] + replacement + "@" + raw[len(m[0]):]
	}
	head, query, ok := strings.Cut(out, "?")
	if !ok {
		return out
	}
	query, fragment, hasFragment := strings.Cut(query, "#")
	parts := strings.Split(query, "&")
	for i, part := range parts {
		if key, value, _ := strings.Cut(part, "="); len(value) >= minQuerySecret {
			parts[i] = key + "=[redacted]"
		}
	}
	out = head + "?" + strings.Join(parts, "&")
	if hasFragment {
		out += "#" + fragment
	}
	return out
}

// quoteURL is how the command quotes a URL it was given: redacted, then quoted.
func quoteURL(raw string) string { return strconv.Quote(redactURL(raw)) }

// newTextScrubber returns the function every line of output passes through:
// the SDK's scrubber, knowing the command's own secrets, given each column of
// a line apart (columns are set off by two spaces or more, or a tab), so that
// an amount beside a date is not read as one long number. A secret that holds
// such a gap itself has each line scrubbed whole.
func newTextScrubber(secrets []string) func(string) string {
	text := billing.NewScrubber(secrets...).Text
	for _, secret := range secrets {
		if columnGap.MatchString(secret) {
			return text
		}
	}
	return func(line string) string {
		var b strings.Builder
		last := 0
		for _, gap := range columnGap.FindAllStringIndex(line, -1) {
			b.WriteString(text(line[last:gap[0]]))
			b.WriteString(line[gap[0]:gap[1]])
			last = gap[1]
		}
		b.WriteString(text(line[last:]))
		return b.String()
	}
}

// columnGap is what sets off two columns of a line of output.
var columnGap = regexp.MustCompile(`  +|\t+|\n`)

// scrubWriter scrubs what is written to w, a line at a time: a secret split
// across two writes is still found whole. Flush writes what is left of a last
// line without its newline.
type scrubWriter struct {
	mu    sync.Mutex
	w     io.Writer
	scrub func(string) string
	line  []byte
}

func (s *scrubWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.line = append(s.line, p...)
	end := bytes.LastIndexByte(s.line, '\n')
	if end < 0 {
		return len(p), nil
	}
	whole := string(s.line[:end+1])
	s.line = append(s.line[:0], s.line[end+1:]...)
	if _, err := io.WriteString(s.w, s.scrub(whole)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the rest of a last line that had no newline.
func (s *scrubWriter) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.line) == 0 {
		return nil
	}
	rest := string(s.line)
	s.line = s.line[:0]
	_, err := io.WriteString(s.w, s.scrub(rest))
	return err
}
