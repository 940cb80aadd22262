package otelbilling

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/internal/scrubcorpus"
)

// Every planted value of the scrub corpus, in every encoding, from every producer (a
// service's error message on 400, 401, 403, 409 and a 500 to a receive; the path and the
// query of a call quoted back or hung up on) reaches no span, as OpenTelemetry's
// in-memory exporter holds them. A fixed budget in CI; SCRUB_CORPUS_N and
// SCRUB_CORPUS_SEED draw more or others, and the seed is printed.
func TestSpansCarryNoPlantedCorpusValue(t *testing.T) {
	seed, n := scrubcorpus.Budget(t, 40)
	r := rand.New(rand.NewPCG(seed, seed))
	creds := scrubcorpus.NewCredentials(r)
	plants := scrubcorpus.Plants(r, creds, n)

	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	echo := &scrubcorpus.EchoServer{}
	srv := httptest.NewServer(echo)
	t.Cleanup(srv.Close)
	client := func(base string) *billing.Client {
		c, err := billing.NewClient(billing.WithBaseURL(base), billing.WithClientCredentials(creds.ClientID, creds.ClientSecret),
			billing.WithSecretKey(creds.SecretKey), billing.WithSessionToken(creds.SessionToken),
			billing.WithRetry(1, time.Millisecond, time.Millisecond), billing.WithObserver(NewObserver(WithTracerProvider(tp))))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	answering, hungUp := client(srv.URL), client(scrubcorpus.HangUp(t))
	ctx := context.Background()
	get := func(c *billing.Client, _ string) error { _, err := c.Customers.Get(ctx, "cus_1"); return err }
	byPath := func(c *billing.Client, planted string) error { _, err := c.Customers.Get(ctx, planted); return err }
	byQuery := func(c *billing.Client, planted string) error {
		_, err := c.Customers.ListPage(ctx, &billing.CustomerListParams{Email: planted})
		return err
	}
	producers := []struct {
		name   string
		status int // 0: the call goes to the server that hangs up
		say    string
		call   func(c *billing.Client, planted string) error
	}{
		{"400 message", http.StatusBadRequest, scrubcorpus.Help + " {plant}", get},
		{"401 message", http.StatusUnauthorized, scrubcorpus.Help + " {plant}", get},
		{"403 message", http.StatusForbidden, scrubcorpus.Help + " {plant}", get},
		{"409 message", http.StatusConflict, scrubcorpus.Help + " {plant}", get},
		{"500 message to a receive", http.StatusInternalServerError, scrubcorpus.Help + " {plant}", func(c *billing.Client, _ string) error {
			_, err := c.Payments.Receive(ctx, &billing.ReceiveParams{Amount: 100, Phone: "233241234567", Provider: billing.ProviderMTN,
				Description: "Order", ClientReference: "corpus1"})
			return err
		}},
		{"path quoted in a 404", http.StatusNotFound, "no customer at {path}", byPath},
		{"query quoted in a 400", http.StatusBadRequest, "bad query {query}", byQuery},
		{"path to a hang-up", 0, "", byPath},
		{"query to a hang-up", 0, "", byQuery},
	}
	for _, p := range plants {
		for _, pr := range producers {
			exporter.Reset()
			c := hungUp
			if pr.status != 0 {
				c = answering
				echo.Set(pr.status, strings.ReplaceAll(pr.say, "{plant}", p.Text))
			}
			err := pr.call(c, p.Text)
			if err == nil {
				t.Fatalf("%s: %v: no error", pr.name, p)
			}
			var refused *billing.ValidationError
			if errors.As(err, &refused) {
				continue // the path builder refused it: no call, no span
			}
			var text strings.Builder
			for _, s := range exporter.GetSpans().Snapshots() {
				text.WriteString(spanText(s) + "\n")
			}
			if text.Len() == 0 {
				t.Fatalf("%s: %v: no span recorded", pr.name, p)
			}
			if leaked := scrubcorpus.Leaked(text.String(), []scrubcorpus.Plant{p}); len(leaked) > 0 {
				t.Errorf("seed %d: %v from %s reached a span:\n%s", seed, p, pr.name, text.String())
			}
		}
	}
}
