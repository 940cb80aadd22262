package opsview_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/opsview"
	"github.com/billingsdk/billing-go/storekit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The personal data planted in references and callback bodies: none of it may appear
// whole in a page, an answer or an export.
const (
	phoneRef  = "233241234567"
	email     = "jane.doe@example.com"
	accountNo = "0123456789012"
)

type fixture struct {
	srv   *billingtest.Server
	tr    *billing.Tracker
	h     http.Handler
	store storekit.Store
}

// newFixture is a Tracker on the sandbox with a paid payout (paid1), a movement the
// service never saw (lost1), one under a phone-like reference with a callback body full
// of personal data, all overdue, and the view with every action on for "alice".
func newFixture(t *testing.T, mod func(*opsview.Options)) *fixture {
	t.Helper()
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	store := billing.NewMemoryStore(0)
	tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{Store: store, Clock: srv.Clock(), CallbackURL: "http://127.0.0.1:9/cb",
		OnOutcome: func(context.Context, *billing.Outcome) error { return nil }})
	ctx := context.Background()
	_, err := tr.Send(ctx, &billing.SendParams{Amount: 2000, Phone: "233201234567", Provider: billing.ProviderTelecel,
		Name: "Ama", Description: "refund", ClientReference: "paid1"})
	require.NoError(t, err)
	require.NoError(t, tr.TrackAmount(ctx, billing.KindSend, "lost1", billing.Money{Amount: 500, Currency: "GHS"}))
	require.NoError(t, tr.TrackAmount(ctx, billing.KindReceive, phoneRef, billing.Money{Amount: 700, Currency: "GHS"}))
	body := `{"ResponseCode":"0001","Data":{"ClientReference":"` + phoneRef + `","CustomerMsisdn":"233241234567","Email":"` + email +
		`","AccountNumber":"` + accountNo + `"}}`
	_, err = store.BeginCallback(ctx, storekit.Callback{Key: storekit.MovementKey{Callback: storekit.CallbackTransaction, ClientReference: phoneRef},
		DedupeKey: "d1", Body: []byte(body), At: srv.Now()}, "test", srv.Now().Add(time.Minute))
	require.NoError(t, err)
	srv.Advance(10 * time.Minute)
	o := opsview.Options{Tracker: tr, Recheck: true, Resolve: true, Release: true, ReportAgain: true,
		Authorize: func(r *http.Request, _ opsview.Action, _ opsview.Movement) (string, error) {
			if r.Header.Get("X-User") == "" {
				return "", errors.New("who are you")
			}
			return r.Header.Get("X-User"), nil
		}}
	if mod != nil {
		mod(&o)
	}
	return &fixture{srv: srv, tr: tr, h: opsview.NewHandler(o), store: store}
}

func (f *fixture) get(t *testing.T, target string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://ops.example/ops/"+target, nil))
	return w
}

func (f *fixture) getJSON(t *testing.T, target string, v any) {
	t.Helper()
	w := f.get(t, target)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), v))
}

// act posts a JSON action as a same-origin browser would, as user.
func (f *fixture) act(t *testing.T, user string, body map[string]any, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	b, _ := json.Marshal(body)
	r := httptest.NewRequest(http.MethodPost, "http://ops.example/ops/api-act", strings.NewReader(string(b)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	if user != "" {
		r.Header.Set("X-User", user)
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w
}

type listAnswer struct {
	Items []opsview.MovementView `json:"items"`
	Next  string                 `json:"next"`
}

func (f *fixture) idOf(t *testing.T, ref string) string {
	t.Helper()
	var l listAnswer
	f.getJSON(t, "api-movements", &l)
	for _, it := range l.Items {
		if it.Reference == ref {
			return it.ID
		}
	}
	t.Fatalf("%s is not listed", ref)
	return ""
}

func TestOverviewCountsAndStrictHeaders(t *testing.T) {
	f := newFixture(t, nil)
	w := f.get(t, "")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Header().Get("Content-Security-Policy"), "default-src 'none'")
	assert.NotContains(t, w.Body.String(), "<script", "no script at all")
	assert.Contains(t, w.Body.String(), `http-equiv="refresh"`)
	assert.Contains(t, f.get(t, "?refresh=off").Body.String(), "resume refresh", "refresh can be paused")
	var ov struct {
		Overdue, Pending int
	}
	f.getJSON(t, "api-overview", &ov)
	assert.Equal(t, 3, ov.Overdue)
	assert.Zero(t, ov.Pending)
	css := f.get(t, "style.css")
	assert.Equal(t, "text/css; charset=utf-8", css.Header().Get("Content-Type"))
}

func TestListFiltersPagesAndExports(t *testing.T) {
	f := newFixture(t, nil)
	var l listAnswer
	f.getJSON(t, "api-movements?state=overdue&kind=send", &l)
	require.Len(t, l.Items, 2)
	f.getJSON(t, "api-movements?reference=lost", &l)
	require.Len(t, l.Items, 1)
	assert.Equal(t, "lost1", l.Items[0].Reference)

	seen := map[string]bool{}
	next := "api-movements?limit=1"
	for range 5 {
		var page listAnswer
		f.getJSON(t, next, &page)
		for _, it := range page.Items {
			assert.False(t, seen[it.Reference], "no item twice")
			seen[it.Reference] = true
		}
		if page.Next == "" {
			break
		}
		next = "api-movements?" + page.Next
	}
	assert.Len(t, seen, 3, "keyset pages walk every movement")

	w := f.get(t, "api-movements?state=bogus")
	assert.Equal(t, http.StatusBadRequest, w.Code)
	assert.Equal(t, http.StatusBadRequest, f.get(t, "api-movements?after=nonsense").Code)

	csv := f.get(t, "movements.csv?state=overdue")
	require.Equal(t, http.StatusOK, csv.Code)
	lines := strings.Split(strings.TrimSpace(csv.Body.String()), "\n")
	assert.Len(t, lines, 4)
	assert.True(t, strings.HasPrefix(lines[0], "kind,reference,state"))
	overdue := f.get(t, "movements?state=overdue").Body.String()
	assert.Contains(t, overdue, "lost1")
	assert.Contains(t, overdue, "GHS 5.00", "an amount reads as a person reads it, not in minor units")
	assert.Contains(t, f.get(t, "movement?id="+url.QueryEscape(f.idOf(t, "lost1"))).Body.String(), "GHS 5.00 asked")

	var rc struct {
		Overdue   []opsview.MovementView `json:"overdue"`
		Untracked []opsview.MovementView `json:"untracked"`
	}
	f.getJSON(t, "api-reconcile", &rc)
	assert.Len(t, rc.Overdue, 3)
	for _, m := range rc.Overdue {
		assert.Equal(t, "overdue", m.State)
	}
	_, _, err := f.store.Settle(context.Background(), storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "trig1"},
		storekit.Outcome{Kind: storekit.KindSend, State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, Amount: 900, Currency: "GHS", At: f.srv.Now()}, nil)
	require.NoError(t, err)
	f.getJSON(t, "api-reconcile", &rc)
	require.Len(t, rc.Untracked, 1, "money no one tracked is listed")
	assert.Equal(t, "untracked", rc.Untracked[0].State)
	assert.Equal(t, int64(900), rc.Untracked[0].Amount)
	var ov struct{ UntrackedMoney int }
	f.getJSON(t, "api-overview", &ov)
	assert.Equal(t, 1, ov.UntrackedMoney)
}

// An operator rechecks a paid payout (settled by its status check), resolves a movement
// the service never saw with a reason, and reads both audit lines on the timelines.
func TestActionsAreTakenThroughTheTrackerAndAudited(t *testing.T) {
	f := newFixture(t, nil)
	w := f.act(t, "alice", map[string]any{"action": "recheck", "id": f.idOf(t, "paid1")}, nil)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var a opsview.ActionView
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &a))
	assert.Equal(t, "pending", a.Before)
	assert.Equal(t, "succeeded", a.After)

	lost := f.idOf(t, "lost1")
	w = f.act(t, "alice", map[string]any{"action": "resolve", "id": lost, "state": "failed"}, nil)
	assert.Equal(t, http.StatusBadRequest, w.Code, "a resolve needs a reason")
	w = f.act(t, "alice", map[string]any{"action": "resolve", "id": lost, "state": "failed", "reason": "the service has no record"}, nil)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	w = f.act(t, "alice", map[string]any{"action": "resolve", "id": lost, "state": "succeeded", "reason": "again"}, nil)
	assert.Equal(t, http.StatusConflict, w.Code, "never over a settled outcome")

	var d struct {
		Movement opsview.MovementView    `json:"movement"`
		Timeline []opsview.TimelineEvent `json:"timeline"`
	}
	f.getJSON(t, "api-movement?id="+url.QueryEscape(lost), &d)
	assert.Equal(t, "failed", d.Movement.Outcome)
	assert.Equal(t, "operator", d.Movement.Source)
	var audit *opsview.TimelineEvent
	for i := range d.Timeline {
		if d.Timeline[i].Audit {
			audit = &d.Timeline[i]
		}
	}
	require.NotNil(t, audit)
	assert.Equal(t, "operator resolve", audit.What)
	assert.Contains(t, audit.Detail, "alice")
	assert.Contains(t, audit.Detail, "the service has no record")
	page := f.get(t, "movement?id="+url.QueryEscape(lost)).Body.String()
	assert.Contains(t, page, "the service has no record")
}

func TestFormPostRecheckAllCountsFirst(t *testing.T) {
	f := newFixture(t, nil)
	var l listAnswer
	f.getJSON(t, "api-movements?state=overdue", &l)
	form := url.Values{"action": {"recheck_all"}}
	for _, it := range l.Items {
		form.Add("id", it.ID)
	}
	post := func(v url.Values) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://ops.example/ops/act", strings.NewReader(v.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Origin", "http://ops.example")
		r.Header.Set("X-User", "alice")
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		return w
	}
	w := post(form)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Contains(t, w.Body.String(), "3 of these movements are pending")
	var ov struct{ Overdue int }
	f.getJSON(t, "api-overview", &ov)
	assert.Equal(t, 3, ov.Overdue, "a dry run checks nothing")
	form.Set("confirm", "3")
	w = post(form)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Contains(t, w.Body.String(), "Rechecked 3")
	f.getJSON(t, "api-overview", &ov)
	assert.Equal(t, 2, ov.Overdue, "the paid payout settled")
}

func TestStateChangesAreRefusedUnlessSameOriginAuthorizedJSONAndOn(t *testing.T) {
	f := newFixture(t, nil)
	id := f.idOf(t, "lost1")
	body := map[string]any{"action": "resolve", "id": id, "state": "failed", "reason": "r"}
	for name, tc := range map[string]struct {
		user   string
		header map[string]string
		want   int
	}{
		"cross-site":             {"alice", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		"same-site":              {"alice", map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		"foreign origin":         {"alice", map[string]string{"Sec-Fetch-Site": "", "Origin": "https://evil.example"}, http.StatusForbidden},
		"not authorized":         {"", nil, http.StatusForbidden},
		"not JSON":               {"alice", map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType},
		"form to the JSON route": {"alice", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
	} {
		w := f.act(t, tc.user, body, tc.header)
		assert.Equal(t, tc.want, w.Code, name)
	}
	var d struct{ Movement opsview.MovementView }
	f.getJSON(t, "api-movement?id="+url.QueryEscape(id), &d)
	assert.Empty(t, d.Movement.Outcome, "nothing was resolved")

	r := httptest.NewRequest(http.MethodGet, "http://ops.example/ops/api-act", nil)
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusMethodNotAllowed, w.Code)

	ro := newFixture(t, func(o *opsview.Options) {
		o.Recheck, o.Resolve, o.Release, o.ReportAgain = false, false, false, false
		o.Authorize = nil
	})
	w = ro.act(t, "alice", map[string]any{"action": "recheck", "id": ro.idOf(t, "lost1")}, nil)
	assert.Equal(t, http.StatusForbidden, w.Code, "read-only by default")
	assert.Contains(t, ro.get(t, "").Body.String(), "read-only")
	assert.Panics(t, func() { opsview.NewHandler(opsview.Options{Tracker: f.tr, Recheck: true}) }, "an action needs Authorize")
}

// No page, answer or export holds a whole phone number, email or account number, from
// a reference or a callback body.
func TestNothingPersonalLeavesTheView(t *testing.T) {
	f := newFixture(t, nil)
	var l listAnswer
	f.getJSON(t, "api-movements", &l)
	var targets []string
	for _, it := range l.Items {
		targets = append(targets, "movement?id="+url.QueryEscape(it.ID), "api-movement?id="+url.QueryEscape(it.ID))
		assert.NotContains(t, it.ID, phoneRef)
	}
	targets = append(targets, "", "api-overview", "movements", "api-movements", "movements.csv", "reconcile", "api-reconcile",
		"movements?reference="+phoneRef, "api-movements?reference="+phoneRef[:8], "api-nothing")
	for _, target := range targets {
		w := f.get(t, target)
		b, _ := io.ReadAll(w.Body)
		for _, secret := range []string{phoneRef, "241234567", email, "jane.doe", accountNo} {
			assert.NotContains(t, string(b), secret, "%s shows %s", target, secret)
		}
	}
	w := f.get(t, "api-movements?reference="+phoneRef)
	assert.NotContains(t, w.Body.String(), phoneRef, "the API does not echo the filter whole")
}

// get reads target from h as a browser on the same origin would.
func get(h http.Handler, target string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://ops.example/ops/"+target, nil))
	return w
}

func jsonOf(body string, v any) error { return json.Unmarshal([]byte(body), v) }

// Each status check that left a movement pending, and each failed report, is a line of
// its timeline with what it answered or why it failed, scrubbed, in the page and the
// JSON answer; the first line kept says how many earlier ones the store dropped.
func TestTheTimelineShowsEveryStatusCheckAnswer(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	log := f.store.(storekit.AttemptLog)
	key := storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "lost1"}
	n := storekit.MaxAttempts + 2
	for i := range n {
		now := f.srv.Now().Add(time.Duration(i) * time.Hour)
		due, err := f.store.ClaimDue(ctx, "instance-a", now, now.Add(time.Minute), 100)
		require.NoError(t, err)
		require.NotEmpty(t, due)
		a := storekit.Attempt{At: now, Answer: storekit.StatePending}
		if i == n-1 {
			a = storekit.Attempt{At: now, Error: "status check: 502 from the gateway for " + email}
		}
		for _, m := range due {
			if m.Key() == key {
				require.NoError(t, log.RescheduleAfter(ctx, key, "instance-a", now.Add(time.Second), a))
				continue
			}
			require.NoError(t, f.store.ReleaseClaim(ctx, m.Key(), "instance-a"))
		}
	}
	id := f.idOf(t, "lost1")
	var d struct {
		Timeline []opsview.TimelineEvent `json:"timeline"`
	}
	f.getJSON(t, "api-movement?id="+url.QueryEscape(id), &d)
	var checks []opsview.TimelineEvent
	for _, e := range d.Timeline {
		if strings.HasPrefix(e.What, "status check ") {
			checks = append(checks, e)
		}
	}
	require.Len(t, checks, storekit.MaxAttempts)
	assert.Equal(t, "status check 3", checks[0].What)
	assert.Contains(t, checks[0].Detail, "answered pending")
	assert.Contains(t, checks[0].Detail, "2 earlier status checks not kept")
	last := checks[len(checks)-1]
	assert.Equal(t, fmt.Sprintf("status check %d", n), last.What)
	assert.Contains(t, last.Detail, "502 from the gateway")
	assert.NotContains(t, last.Detail, "jane.doe")
	page := f.get(t, "movement?id="+url.QueryEscape(id)).Body.String()
	assert.Contains(t, page, "502 from the gateway")
	assert.Contains(t, page, "answered pending")
	assert.NotContains(t, page, email)
}
