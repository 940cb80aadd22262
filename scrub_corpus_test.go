package billing_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/internal/scrubcorpus"
)

// teeHandler writes every record to each of its handlers: the log in JSON and in text.
type teeHandler []slog.Handler

func (h teeHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h teeHandler) Handle(ctx context.Context, r slog.Record) error {
	for _, x := range h {
		if err := x.Handle(ctx, r.Clone()); err != nil {
			return err
		}
	}
	return nil
}
func (h teeHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make(teeHandler, len(h))
	for i, x := range h {
		out[i] = x.WithAttrs(attrs)
	}
	return out
}
func (h teeHandler) WithGroup(name string) slog.Handler {
	out := make(teeHandler, len(h))
	for i, x := range h {
		out[i] = x.WithGroup(name)
	}
	return out
}

// errorSinks prints err as every sink of a returned error does: its five verbs, a %w
// wrap under them, and errors.Join.
func errorSinks(err error) string {
	var b strings.Builder
	wrapped := fmt.Errorf("order 1: %w", err)
	joined := errors.Join(errors.New("first"), err)
	b.WriteString(err.Error() + "\n")
	for _, e := range []error{err, wrapped, joined} {
		for _, verb := range []string{"%v", "%+v", "%s", "%q", "%#v"} {
			fmt.Fprintf(&b, verb+"\n", e)
		}
	}
	return b.String()
}

// Every planted secret and personal datum of the corpus (the Client's own credentials,
// MSISDNs in every form of every country of the phone table, accounts, emails with tags,
// dots and Unicode domains) in every encoding, from every producer (a service's error
// message on 400, 401, 403, 409 and a 500 to a receive, the path and the query of a call
// the service quotes back or hangs up on) into every sink (the returned error under every
// verb, wrapped and joined; the debug log in JSON and text; a recording Observer): none
// is shown, and the service's help text beside it reaches the merchant unchanged.
func TestNoPlantedValueReachesAnySinkFromAnyProducer(t *testing.T) {
	seed, n := scrubcorpus.Budget(t, 60)
	r := rand.New(rand.NewPCG(seed, seed))
	creds := scrubcorpus.NewCredentials(r)
	plants := scrubcorpus.Plants(r, creds, n)

	echo := &scrubcorpus.EchoServer{}
	srv := httptest.NewServer(echo)
	t.Cleanup(srv.Close)
	var logs strings.Builder
	var logMu sync.Mutex
	logger := slog.New(teeHandler{
		slog.NewJSONHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}),
		slog.NewTextHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}),
	})
	obs := &sinkObserver{}
	client := func(base string) *billing.Client {
		c, err := billing.NewClient(billing.WithBaseURL(base), billing.WithClientCredentials(creds.ClientID, creds.ClientSecret),
			billing.WithSecretKey(creds.SecretKey), billing.WithSessionToken(creds.SessionToken),
			billing.WithRetry(1, time.Millisecond, time.Millisecond), billing.WithLogger(logger), billing.WithObserver(obs))
		require.NoError(t, err)
		return c
	}
	answering, hungUp := client(srv.URL), client(scrubcorpus.HangUp(t))
	ctx := context.Background()

	type producer struct {
		name   string
		status int    // the service's answer; 0: the call goes to the server that hangs up
		help   bool   // the service's message carries scrubcorpus.Help, which must reach the error
		say    string // the service's message, with {plant}
		call   func(c *billing.Client, planted string) error
	}
	get := func(c *billing.Client, _ string) error { _, err := c.Customers.Get(ctx, "cus_1"); return err }
	producers := []producer{
		{"400 message", http.StatusBadRequest, true, "{plant}", get},
		{"401 message", http.StatusUnauthorized, true, "{plant}", get},
		{"403 message", http.StatusForbidden, true, "{plant}", get},
		{"409 message", http.StatusConflict, true, "{plant}", get},
		{"500 message to a receive", http.StatusInternalServerError, true, "{plant}", func(c *billing.Client, _ string) error {
			_, err := c.Payments.Receive(ctx, &billing.ReceiveParams{Amount: 100, Phone: "233241234567", Provider: billing.ProviderMTN,
				Description: "Order", ClientReference: "corpus1"})
			return err
		}},
		{"path quoted in a 404", http.StatusNotFound, false, "no customer at {path}", func(c *billing.Client, planted string) error {
			_, err := c.Customers.Get(ctx, planted)
			return err
		}},
		{"query quoted in a 400", http.StatusBadRequest, false, "bad query {query}", func(c *billing.Client, planted string) error {
			_, err := c.Customers.ListPage(ctx, &billing.CustomerListParams{Email: planted})
			return err
		}},
		{"path to a hang-up", 0, false, "", func(c *billing.Client, planted string) error {
			_, err := c.Customers.Get(ctx, planted)
			return err
		}},
		{"query to a hang-up", 0, false, "", func(c *billing.Client, planted string) error {
			_, err := c.Customers.ListPage(ctx, &billing.CustomerListParams{Email: planted})
			return err
		}},
	}
	for _, p := range plants {
		for _, pr := range producers {
			logMu.Lock()
			logs.Reset()
			logMu.Unlock()
			obs.mu.Lock()
			obs.out.Reset()
			obs.mu.Unlock()
			c := hungUp
			if pr.status != 0 {
				c = answering
				message := strings.ReplaceAll(pr.say, "{plant}", p.Text)
				if pr.help {
					message = scrubcorpus.Help + " " + message
				}
				echo.Set(pr.status, message)
			}
			err := pr.call(c, p.Text)
			require.Error(t, err, "%s: %v", pr.name, p)
			logMu.Lock()
			logged := logs.String()
			logMu.Unlock()
			for sink, out := range map[string]string{"error": errorSinks(err), "log": logged, "observer": obs.String()} {
				if leaked := scrubcorpus.Leaked(out, []scrubcorpus.Plant{p}); len(leaked) > 0 {
					t.Errorf("seed %d: %v from %s reached the %s:\n%s", seed, p, pr.name, sink, out)
				}
			}
			if pr.help && !strings.Contains(err.Error(), scrubcorpus.Help) {
				t.Errorf("seed %d: %s: the help text changed: %s", seed, pr.name, err)
			}
		}
	}
}

// lockedWriter writes to w under mu: the log handlers share one buffer.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
