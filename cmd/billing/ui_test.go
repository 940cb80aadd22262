package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
)

// billing ui serves its view only under its token and only to requests naming its own
// loopback host: a page of another site whose name resolves to 127.0.0.1 is refused.
func TestUIServesOnlyItsTokenOnItsOwnHost(t *testing.T) {
	view := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "view at "+r.URL.Path) })
	h := uiHandler("tok123", 4567, view)
	for _, tc := range []struct {
		host, path string
		want       int
	}{
		{"127.0.0.1:4567", "/tok123/", http.StatusOK},
		{"localhost:4567", "/tok123/movements", http.StatusOK},
		{"127.0.0.1:4567", "/tok123", http.StatusFound},
		{"evil.example:4567", "/tok123/", http.StatusMisdirectedRequest},
		{"127.0.0.1:80", "/tok123/", http.StatusMisdirectedRequest},
		{"127.0.0.1:4567", "/", http.StatusNotFound},
		{"127.0.0.1:4567", "/tok1234/", http.StatusNotFound},
		{"127.0.0.1:4567", "/movements", http.StatusNotFound},
	} {
		r := httptest.NewRequest(http.MethodGet, "http://"+tc.host+tc.path, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, tc.want, w.Code, "%s%s", tc.host, tc.path)
		if tc.want == http.StatusOK {
			assert.Equal(t, "view at "+strings.TrimPrefix(tc.path, "/tok123"), w.Body.String())
		}
	}
}

func TestUIRefusesAnAddressOffLoopback(t *testing.T) {
	_, stderr, code := billingOnce(t, "ui", "--database-url", "postgres://x@127.0.0.1/db", "--addr", "0.0.0.0:0")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "loopback only")
}

// billing movements resolve and recheck act through the Tracker's methods, need a
// reason, never override a settled outcome, and are audited; billing movements lists
// the money no one tracked.
func TestMovementActionsOnPostgres(t *testing.T) {
	databaseURL, srv, store := trackedOnPostgres(t, "opslost")
	ctx := context.Background()
	trig := storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "opstrig"}
	_, _, err := store.Settle(ctx, trig, storekit.Outcome{Kind: storekit.KindSend, State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, At: srv.Now()}, nil)
	require.NoError(t, err)
	conn := []string{"--database-url", databaseURL, "--sandbox", srv.URL, "--client-id", srv.ClientID, "--client-secret", srv.ClientSecret, "--actor", "alice"}

	_, stderr, code := billingOnce(t, append([]string{"movements", "resolve", "--kind", "send", "--reference", "opslost", "--state", "failed"}, conn...)...)
	assert.Equal(t, 2, code, "a resolve needs a reason")
	assert.Contains(t, stderr, "--reason")

	stdout, stderr, code := billingOnce(t, append([]string{"movements", "recheck", "--kind", "send", "--reference", "opslost", "--reason", "is it there?", "--json"}, conn...)...)
	require.Equal(t, 1, code, "the service never saw it: the status check says so\n%s", stderr)
	var out struct{ Before, After, Error string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &out), stdout)
	assert.Equal(t, "pending", out.After)

	stdout, stderr, code = billingOnce(t, append([]string{"movements", "resolve", "--kind", "send", "--reference", "opslost", "--state", "failed", "--reason", "the service has no record"}, conn...)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "pending -> failed")
	_, stderr, code = billingOnce(t, append([]string{"movements", "resolve", "--kind", "send", "--reference", "opslost", "--state", "succeeded", "--reason", "again"}, conn...)...)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "already settled")

	key := storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "opslost"}
	audits, err := store.Audits(ctx, key)
	require.NoError(t, err)
	require.Len(t, audits, 2)
	assert.Equal(t, "recheck", audits[0].Action)
	assert.Equal(t, "resolve", audits[1].Action)
	assert.Equal(t, "alice", audits[1].Actor)
	assert.Equal(t, "the service has no record", audits[1].Reason)

	stdout, stderr, code = billingOnce(t, "movements", "--database-url", databaseURL, "--state", "untracked", "--json")
	require.Equal(t, 0, code, stderr)
	var m trackedMovement
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(stdout)), &m), stdout)
	assert.Equal(t, "opstrig", m.ClientReference)
	assert.Equal(t, stateUntracked, m.State)
	assert.Equal(t, "send", m.Kind)

	stdout, stderr, code = billingOnce(t, "reconcile", "--database-url", databaseURL)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "1 untracked")
	assert.Contains(t, stdout, "untracked: money no Tracker tracked")
	assert.Regexp(t, `(?m)^\s+send\s+opstrig\s+succeeded`, stdout)
	stdout, stderr, code = billingOnce(t, "reconcile", "--database-url", databaseURL, "--json")
	require.Equal(t, 0, code, stderr)
	var page reconcilePage
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(stdout, "\n", 2)[0]), &page), stdout)
	require.Len(t, page.Untracked, 1)
	assert.Equal(t, "opstrig", page.Untracked[0].ClientReference)
}

// billing ui serves the view of the database at the URL it prints, read-only: the view
// lists the movement, a request naming another host is refused, and an action is not on.
func TestUIServesTheViewItPrints(t *testing.T) {
	databaseURL, _, _ := trackedOnPostgres(t, "uiref1")

	p := start(t, "ui", "--database-url", databaseURL)
	line := p.next(t)
	require.Contains(t, line, "read-only")
	open := line[strings.Index(line, "http://"):]
	resp, err := http.Get(open + "api-movements")
	require.NoError(t, err)
	var l struct{ Items []struct{ Reference string } }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&l))
	resp.Body.Close()
	require.Len(t, l.Items, 1)
	assert.Equal(t, "uiref1", l.Items[0].Reference)

	req, err := http.NewRequest(http.MethodGet, open, nil)
	require.NoError(t, err)
	req.Host = "rebound.example" // a name an attacker's DNS points at 127.0.0.1
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)

	resp, err = http.Post(open+"api-act", "application/json", strings.NewReader(`{"action":"recheck","id":"x"}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "read-only without --actions")
	p.interrupt(t)
}

// trackedOnPostgres tracks a payout under reference with a Tracker on the sandbox and a
// pgstore in a schema of its own, and returns the application role's URL of that store.
func trackedOnPostgres(t *testing.T, reference string) (string, *billingtest.Server, *pgstore.Store) {
	t.Helper()
	databaseURL, appDB, _ := appDatabase(t)
	srv := billingtest.NewServer(t)
	store, err := pgstore.New(context.Background(), appDB)
	require.NoError(t, err)
	tracker := billing.NewTracker(srv.Client(), billing.TrackerOptions{Store: store})
	require.NoError(t, tracker.Track(context.Background(), billing.KindSend, reference))
	return databaseURL, srv, store
}
