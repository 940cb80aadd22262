package opsview_test

import (
	"context"
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/internal/scrubcorpus"
	"github.com/billingsdk/billing-go/opsview"
	"github.com/billingsdk/billing-go/storekit"
)

// No value of the scrubber's corpus (the Client's credentials, phone and account
// numbers, emails, in every encoding) planted where the store keeps text a sender or an
// operator chose (callback bodies, a contradiction's body, an untracked outcome's code,
// an operator's reason) is shown by any page, JSON answer or export of the view.
func TestNoPlantedValueLeavesTheView(t *testing.T) {
	seed, n := scrubcorpus.Budget(t, 60)
	r := rand.New(rand.NewPCG(seed, seed))
	creds := scrubcorpus.NewCredentials(r)
	plants := scrubcorpus.Plants(r, creds, n)
	client, err := billing.NewClient(billing.WithBaseURL(scrubcorpus.HangUp(t)), billing.WithClientCredentials(creds.ClientID, creds.ClientSecret),
		billing.WithSecretKey(creds.SecretKey), billing.WithSessionToken(creds.SessionToken))
	require.NoError(t, err)
	store := billing.NewMemoryStore(0)
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	clock := fixedClock{now}
	tr := billing.NewTracker(client, billing.TrackerOptions{Store: store, Clock: clock, CallbackURL: "https://shop.example/cb"})
	ctx := context.Background()
	kit := tr.Store()
	for i, p := range plants {
		ref := fmt.Sprintf("plant%d", i)
		require.NoError(t, tr.Track(ctx, billing.KindSend, ref))
		key := storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: ref}
		_, err := kit.BeginCallback(ctx, storekit.Callback{Key: key, DedupeKey: ref, Body: []byte(`{"Data":{"Note":"` + p.Text + `"}}`), At: now}, "o", now.Add(time.Minute))
		require.NoError(t, err)
		switch i % 3 {
		case 0:
			_, err := store.(storekit.ContradictionRecorder).RecordContradiction(ctx, storekit.Contradiction{Key: key, Claimed: "succeeded", Body: []byte(p.Text), At: now})
			require.NoError(t, err)
		case 1:
			if len(p.Text) <= storekit.MaxReason {
				_, err := tr.Resolve(ctx, "ops", "as told: "+p.Text, billing.KindSend, ref, billing.EventFailed)
				require.NoError(t, err)
			}
		case 2:
			untracked := storekit.MovementKey{Callback: storekit.CallbackTransaction, ClientReference: ref}
			_, _, err := kit.Settle(ctx, untracked, storekit.Outcome{Kind: storekit.KindReceive, State: storekit.StateSucceeded,
				Source: storekit.SourceStatusCheck, Code: p.Text, At: now}, nil)
			require.NoError(t, err)
		}
	}
	h := opsview.NewHandler(opsview.Options{Tracker: tr, Resolve: true,
		Authorize: func(*http.Request, opsview.Action, opsview.Movement) (string, error) { return "ops", nil }})

	var out strings.Builder
	read := func(target string) string {
		w := get(h, target)
		require.Equal(t, http.StatusOK, w.Code, "%s: %s", target, w.Body)
		body := w.Body.String()
		out.WriteString(html.UnescapeString(body))
		out.WriteString("\n")
		return body
	}
	var l listAnswer
	for next := "api-movements"; next != ""; {
		require.NoError(t, jsonOf(read(next), &l))
		for _, it := range l.Items {
			read("movement?id=" + url.QueryEscape(it.ID))
			read("api-movement?id=" + url.QueryEscape(it.ID))
		}
		next = ""
		if l.Next != "" {
			next = "api-movements?" + l.Next
		}
	}
	for _, target := range []string{"", "api-overview", "movements", "movements.csv", "reconcile", "api-reconcile",
		"movements?state=untracked", "movements?state=contradicted"} {
		read(target)
	}
	if leaked := scrubcorpus.Leaked(out.String(), plants); len(leaked) > 0 {
		t.Fatalf("%d of %d planted values shown, first %v", len(leaked), len(plants), leaked[0])
	}
}

type fixedClock struct{ now time.Time }

func (c fixedClock) Now() time.Time                         { return c.now }
func (c fixedClock) After(d time.Duration) <-chan time.Time { return make(chan time.Time) }
