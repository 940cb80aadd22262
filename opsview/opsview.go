// Package opsview is an operator's view of the money a billing.Tracker tracks: an
// http.Handler a merchant's app mounts under any prefix, behind its own authentication.
// It shows what the Tracker's store knows (an overview of counts by state, a list with
// filters, keyset pages and CSV export, each movement's timeline, the reconciliation),
// server-rendered with html/template and no script, under a strict
// Content-Security-Policy, with a JSON API beside every page. Every text it shows or
// answers passes through the Tracker's scrubber (phones, accounts, emails masked; no
// secret rendered).
//
// It is read-only unless actions are switched on, each by its own option. An action
// (recheck, report again, resolve, release) is a Tracker method: none moves money or
// deletes a record, each names its actor from Options.Authorize and is audited in the
// store. Every state change is refused cross-site (Sec-Fetch-Site, or Origin against
// Host) and, on the JSON API, without a JSON content type.
package opsview

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/storekit"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets/style.css
var styleCSS []byte

// Action is an operator's action on a movement.
type Action = billing.Action

// The actions, and the bulk recheck of up to billing.MaxBulkRecheck movements.
const (
	ActionRecheck            = billing.ActionRecheck
	ActionReportAgain        = billing.ActionReportAgain
	ActionResolve            = billing.ActionResolve
	ActionRelease            = billing.ActionRelease
	ActionRecheckAll  Action = "recheck_all"
)

// Movement names the movement an action is asked for: its kind and client reference
// (empty for ActionRecheckAll, which Authorize is asked once for, and then for each
// movement).
type Movement struct {
	Kind            billing.Kind
	ClientReference string
}

// Options configures NewHandler.
type Options struct {
	// Tracker is the Tracker whose store is shown and through whose methods actions are
	// taken. Required.
	Tracker *billing.Tracker

	// Recheck, ReportAgain, Resolve and Release switch each action on. All are off by
	// default: the view is read-only.
	Recheck, ReportAgain, Resolve, Release bool

	// Authorize is asked before every action, with the request, the action and the
	// movement; it returns the actor (who the audit names) or an error, which refuses
	// the action (403). Required when any action is on: NewHandler panics without it.
	Authorize func(r *http.Request, action Action, m Movement) (actor string, err error)

	// Refresh is how often the overview and the list reload themselves (a meta refresh,
	// pausable from the page); default 15 seconds, negative for never.
	Refresh time.Duration

	// Key encrypts the movement ids in links and API answers (16, 24 or 32 bytes), so
	// that a reference that looks like a phone or account number never appears in a URL.
	// Nil is a random key: ids then last as long as the handler.
	Key []byte
}

// NewHandler returns the operator's view. It panics when Tracker is nil, when an action
// is on without Authorize, or when Key is not a valid AES key: mistakes in the caller's
// code, found at start.
func NewHandler(o Options) http.Handler {
	if o.Tracker == nil {
		panic("opsview: NewHandler needs a Tracker")
	}
	h := &handler{o: o}
	for _, a := range []struct {
		on bool
		a  Action
	}{{o.Recheck, ActionRecheck}, {o.ReportAgain, ActionReportAgain}, {o.Resolve, ActionResolve}, {o.Release, ActionRelease}} {
		if a.on {
			h.enabled = append(h.enabled, a.a)
		}
	}
	if len(h.enabled) > 0 && o.Authorize == nil {
		panic("opsview: actions are on, but Options.Authorize is nil")
	}
	key := o.Key
	if key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(fmt.Errorf("opsview: Options.Key: %w", err))
	}
	if h.ids, err = cipher.NewGCM(block); err != nil {
		panic(fmt.Errorf("opsview: Options.Key: %w", err))
	}
	h.tmpl = template.Must(template.New("").Funcs(template.FuncMap{"fmtTime": fmtTime, "money": money}).ParseFS(templateFS, "templates/*.html"))
	return h
}

type handler struct {
	o       Options
	enabled []Action
	ids     cipher.AEAD
	tmpl    *template.Template
}

// contentSecurityPolicy allows the page's own stylesheet and nothing else: no script,
// no frame, no form posted elsewhere.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// maxFormBytes bounds the body of a state change.
const maxFormBytes = 64 << 10

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Frame-Options", "DENY")
	page := path.Base(r.URL.Path)
	if strings.HasSuffix(r.URL.Path, "/") || page == "." || page == "/" {
		page = ""
	}
	rt, ok := routes[page]
	switch {
	case !ok:
		h.fail(w, r, http.StatusNotFound, errors.New("no such page"))
		return
	case rt.post && r.Method != http.MethodPost:
		hd.Set("Allow", http.MethodPost)
		h.fail(w, r, http.StatusMethodNotAllowed, errors.New("state changes are POSTed"))
		return
	case !rt.post && r.Method != http.MethodGet && r.Method != http.MethodHead:
		hd.Set("Allow", "GET, HEAD")
		h.fail(w, r, http.StatusMethodNotAllowed, errors.New("this page is read with GET"))
		return
	}
	if rt.post {
		if err := crossOrigin(r); err != nil {
			h.fail(w, r, http.StatusForbidden, err)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	}
	rt.serve(h, w, r, page)
}

// route is one page of the view: post says it changes state (POST only, same origin
// only); every other page is read with GET.
type route struct {
	post  bool
	serve func(h *handler, w http.ResponseWriter, r *http.Request, page string)
}

// routes are the view's pages, by the last segment of their path, so that the view
// works under any prefix, with or without http.StripPrefix.
var routes = map[string]route{
	"":              {serve: func(h *handler, w http.ResponseWriter, r *http.Request, _ string) { h.overview(w, r) }},
	"api-overview":  {serve: func(h *handler, w http.ResponseWriter, r *http.Request, _ string) { h.overview(w, r) }},
	"movements":     {serve: (*handler).movements},
	"api-movements": {serve: (*handler).movements},
	"movements.csv": {serve: (*handler).movements},
	"movement":      {serve: func(h *handler, w http.ResponseWriter, r *http.Request, _ string) { h.movement(w, r) }},
	"api-movement":  {serve: func(h *handler, w http.ResponseWriter, r *http.Request, _ string) { h.movement(w, r) }},
	"reconcile":     {serve: func(h *handler, w http.ResponseWriter, r *http.Request, _ string) { h.reconcile(w, r) }},
	"api-reconcile": {serve: func(h *handler, w http.ResponseWriter, r *http.Request, _ string) { h.reconcile(w, r) }},
	"act":           {post: true, serve: func(h *handler, w http.ResponseWriter, r *http.Request, _ string) { h.act(w, r, false) }},
	"api-act":       {post: true, serve: func(h *handler, w http.ResponseWriter, r *http.Request, _ string) { h.act(w, r, true) }},
	"style.css": {serve: func(_ *handler, w http.ResponseWriter, _ *http.Request, _ string) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		_, _ = w.Write(styleCSS)
	}},
}

// crossOrigin refuses a request a browser sent from another origin: Sec-Fetch-Site
// other than same-origin or none (typed in), or, from a browser that sends no
// Sec-Fetch-Site, an Origin whose host is not the request's. A request with neither
// (not from a browser) passes: the app's own authentication decides.
func crossOrigin(r *http.Request) error {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "same-origin", "none":
		return nil
	case "":
	default:
		return fmt.Errorf("a %s request may not change state", site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host != r.Host {
		return errors.New("a cross-origin request may not change state")
	}
	return nil
}

// api reports whether r asks for the JSON API.
func api(r *http.Request) bool { return strings.HasPrefix(path.Base(r.URL.Path), "api-") }

// view is what every page template gets.
type view struct {
	Title          string
	ReadOnly       bool
	Enabled        []Action
	AsOf           time.Time
	RefreshSeconds int
	PauseURL       template.URL
	Notice, Error  string
	BulkRecheck    bool
	Kinds          []string
	States         []string
	Outcomes       []string
	Data           any
}

func (h *handler) page(w http.ResponseWriter, r *http.Request, status int, name, title string, data any, refresh bool) {
	h.render(w, r, status, name, title, data, refresh, "")
}

// render writes a page, or the JSON API's answer; errMsg (scrubbed) is shown above it.
func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any, refresh bool, errMsg string) {
	if api(r) {
		writeJSON(w, status, data)
		return
	}
	v := view{Title: title, ReadOnly: len(h.enabled) == 0, Enabled: h.enabled, AsOf: h.o.Tracker.Now(), Data: data,
		Kinds:    []string{storekit.KindReceive, storekit.KindDirectDebit, storekit.KindSend, storekit.KindBankTransfer, storekit.KindMandate, storekit.KindCheckout},
		States:   []string{storekit.ListPending, storekit.ListOverdue, storekit.ListUnreported, storekit.ListFailing, storekit.ListSettled, storekit.ListContradicted, storekit.ListUntracked},
		Outcomes: []string{storekit.StateSucceeded, storekit.StateMismatched, storekit.StateFailed, storekit.StateExpired, storekit.StateUnknown},
	}
	v.BulkRecheck = slices.Contains(h.enabled, ActionRecheck)
	v.Error = errMsg
	if done := Action(r.URL.Query().Get("done")); slices.Contains(h.enabled, done) {
		v.Notice = "Done: " + string(done) + ". The audit line is on the timeline."
	}
	if refresh && h.o.Refresh >= 0 {
		q := h.safeQuery(r.URL.Query())
		paused := q.Get("refresh") == "off"
		if !paused {
			v.RefreshSeconds = max(1, int(cmpOr(h.o.Refresh, 15*time.Second)/time.Second))
			q.Set("refresh", "off")
		} else {
			q.Del("refresh")
		}
		v.PauseURL = template.URL("?" + q.Encode())
	}
	var buf bytes.Buffer
	if err := h.tmpl.ExecuteTemplate(&buf, name, v); err != nil {
		http.Error(w, "opsview: rendering the page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// apiError is the JSON API's answer to a refused or failed request.
type apiError struct {
	Error string `json:"error"`
}

func (h *handler) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	msg := h.o.Tracker.Scrub(err.Error())
	if api(r) || path.Base(r.URL.Path) == "movements.csv" {
		writeJSON(w, status, apiError{msg})
		return
	}
	h.render(w, r, status, "done.html", http.StatusText(status), doneView{Title: http.StatusText(status), Back: "./"}, false, msg)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// statusOf is the HTTP status of an error of the Tracker.
func statusOf(err error) int {
	var v *billing.ValidationError
	switch {
	case errors.As(err, &v):
		return http.StatusBadRequest
	case errors.Is(err, billing.ErrNotTracked):
		return http.StatusNotFound
	case errors.Is(err, billing.ErrAlreadySettled), errors.Is(err, billing.ErrNotSettled), errors.Is(err, billing.ErrNotReleasable):
		return http.StatusConflict
	case errors.Is(err, billing.ErrActionUnsupported), errors.Is(err, billing.ErrInspectUnsupported):
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}

// movementID is the opaque id of key in links and answers.
func (h *handler) movementID(key storekit.MovementKey) string {
	return h.seal(key.Callback + "/" + key.ClientReference)
}

// seal encrypts text into an opaque id.
func (h *handler) seal(text string) string {
	nonce := make([]byte, h.ids.NonceSize())
	_, _ = rand.Read(nonce)
	sealed := h.ids.Seal(nonce, nonce, []byte(text), nil)
	return base64.RawURLEncoding.EncodeToString(sealed)
}

// keyOf opens a movement id.
func (h *handler) keyOf(id string) (storekit.MovementKey, error) {
	raw, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil || len(raw) < h.ids.NonceSize() {
		return storekit.MovementKey{}, errors.New("not a movement id of this view")
	}
	plain, err := h.ids.Open(nil, raw[:h.ids.NonceSize()], raw[h.ids.NonceSize():], nil)
	if err != nil {
		return storekit.MovementKey{}, errors.New("not a movement id of this view")
	}
	cb, ref, _ := strings.Cut(string(plain), "/")
	key := storekit.MovementKey{Callback: cb, ClientReference: ref}
	if cb == refFilter {
		return key, nil
	}
	return key, key.Validate()
}

// MovementView is a movement as the view shows it and the JSON API answers it, every
// text scrubbed.
type MovementView struct {
	ID               string     `json:"id"`
	Kind             string     `json:"kind"`
	Reference        string     `json:"reference"`
	State            string     `json:"state"`
	Outcome          string     `json:"outcome,omitempty"`
	OutcomeID        string     `json:"outcomeId,omitempty"`
	Source           string     `json:"source,omitempty"`
	Code             string     `json:"code,omitempty"`
	Amount           int64      `json:"amount,omitempty"`
	Currency         string     `json:"currency,omitempty"`
	ServiceReference string     `json:"serviceReference,omitempty"`
	StartedAt        *time.Time `json:"startedAt,omitempty"`
	Deadline         *time.Time `json:"deadline,omitempty"`
	NextCheckAt      *time.Time `json:"nextCheckAt,omitempty"`
	Checks           int        `json:"checks"`
	SettledAt        *time.Time `json:"settledAt,omitempty"`
	ReportedAt       *time.Time `json:"reportedAt,omitempty"`
	ReportAttempts   int        `json:"reportAttempts"`
	Disagreed        bool       `json:"disagreed,omitempty"`
	Contradicted     bool       `json:"contradicted,omitempty"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func fmtTime(v any) string {
	switch t := v.(type) {
	case *time.Time:
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	case time.Time:
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	return ""
}

func (h *handler) movementView(it storekit.ListItem, now time.Time) MovementView {
	s := h.o.Tracker.Scrub
	e := it.Entry
	v := MovementView{ID: h.movementID(it.Key), Reference: s(it.Key.ClientReference), State: it.State(now), Contradicted: it.Contradicted}
	if e.Tracked {
		m := e.Movement
		v.Kind, v.Amount, v.Currency, v.ServiceReference = m.Kind, m.Amount, s(m.Currency), s(m.ServiceReference)
		v.StartedAt, v.Deadline, v.Checks = timePtr(m.StartedAt), timePtr(m.Deadline), m.Checks
		if e.Final == nil {
			v.NextCheckAt = timePtr(m.NextCheckAt)
		}
	}
	if f := e.Final; f != nil {
		if v.Kind == "" {
			v.Kind = f.Outcome.Kind
		}
		if !e.Tracked {
			v.Amount, v.Currency = f.Outcome.Amount, s(f.Outcome.Currency)
		}
		v.Outcome, v.OutcomeID, v.Source, v.Code = f.Outcome.State, s(f.ID), f.Outcome.Source, s(f.Outcome.Code)
		v.SettledAt, v.ReportedAt, v.ReportAttempts, v.Disagreed = timePtr(f.Outcome.At), timePtr(f.ReportedAt), f.ReportAttempts, f.Disagreed
	}
	return v
}

// overviewView is the overview's data.
type overviewView struct {
	Pending       int            `json:"pending"`
	Overdue       int            `json:"overdue"`
	Unreported    int            `json:"unreported"`
	Failing       int            `json:"reportsFailing"`
	Contradicted  int            `json:"contradicted"`
	Untracked     int            `json:"untrackedMoney"`
	Settled       []stateCount   `json:"settled"`
	OldestOverdue *time.Time     `json:"oldestOverdue,omitempty"`
	AsOf          time.Time      `json:"asOf"`
	SettledBy     map[string]int `json:"-"`
}

type stateCount struct {
	State string `json:"state"`
	Count int    `json:"count"`
}

func (h *handler) overview(w http.ResponseWriter, r *http.Request) {
	sum, err := h.o.Tracker.Summarize(r.Context())
	if err != nil {
		h.fail(w, r, statusOf(err), err)
		return
	}
	v := overviewView{Pending: sum.Pending, Overdue: sum.Overdue, Unreported: sum.Unreported, Failing: sum.Failing,
		Contradicted: sum.Contradicted, Untracked: sum.Untracked, OldestOverdue: timePtr(sum.OldestOverdue), AsOf: h.o.Tracker.Now().UTC()}
	for _, st := range []string{storekit.StateSucceeded, storekit.StateMismatched, storekit.StateFailed, storekit.StateExpired, storekit.StateUnknown} {
		if n := sum.Settled[st]; n > 0 {
			v.Settled = append(v.Settled, stateCount{st, n})
		}
	}
	h.page(w, r, http.StatusOK, "overview.html", "Overview", v, true)
}

// queryView is a list's filters as given.
type queryView struct {
	Kind      string `json:"kind,omitempty"`
	State     string `json:"state,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	Reference string `json:"reference,omitempty"`
	From      string `json:"from,omitempty"`
	To        string `json:"to,omitempty"`
}

type listView struct {
	Query       queryView      `json:"query"`
	QueryString template.URL   `json:"-"`
	Items       []MovementView `json:"items"`
	// Next is the query of the next page, empty on the last.
	Next template.URL `json:"next,omitempty"`
	// Cursor is the after= value of the next page.
	Cursor string    `json:"cursor,omitempty"`
	AsOf   time.Time `json:"asOf"`
}

// listQuery reads a list's filters from r.
func (h *handler) listQuery(r *http.Request) (storekit.ListQuery, queryView, error) {
	f := r.URL.Query()
	qv := queryView{Kind: f.Get("kind"), State: f.Get("state"), Outcome: f.Get("outcome"), Reference: f.Get("reference"), From: f.Get("from"), To: f.Get("to")}
	if rid := f.Get("rid"); rid != "" {
		key, err := h.keyOf(rid)
		if err != nil || key.Callback != refFilter {
			return storekit.ListQuery{}, qv, errors.New("rid is not a reference filter of this view")
		}
		qv.Reference = key.ClientReference
	}
	q := storekit.ListQuery{Kind: qv.Kind, State: qv.State, Outcome: qv.Outcome, Reference: qv.Reference, Now: h.o.Tracker.Now()}
	var err error
	if q.From, err = parseTime("from", qv.From); err != nil {
		return q, qv, err
	}
	if q.To, err = parseTime("to", qv.To); err != nil {
		return q, qv, err
	}
	if n := f.Get("limit"); n != "" {
		if q.Limit, err = strconv.Atoi(n); err != nil || q.Limit < 1 || q.Limit > storekit.MaxList {
			return q, qv, fmt.Errorf("limit must be 1 to %d", storekit.MaxList)
		}
	}
	if after := f.Get("after"); after != "" {
		if q.After, err = h.cursorOf(after); err != nil {
			return q, qv, err
		}
	}
	return q, qv, q.Validate()
}

// refFilter marks a sealed reference filter (rid), for a reference the scrubber masks.
const refFilter = "reference"

// safeQuery is q with a reference filter the scrubber would mask sealed (rid), so that
// the links of a page carry no personal data.
func (h *handler) safeQuery(q url.Values) url.Values {
	ref := q.Get("reference")
	if ref == "" || h.o.Tracker.Scrub(ref) == ref {
		return q
	}
	q.Del("reference")
	q.Set("rid", h.seal(refFilter+"/"+ref))
	return q
}

func parseTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%s must be a time such as 2006-01-02T15:04:05Z", field)
}

// cursor is the after= value for the item at c: its time, and its key as an id.
func (h *handler) cursor(c storekit.Cursor) string {
	return strconv.FormatInt(c.At.UnixNano(), 10) + "." + h.movementID(storekit.MovementKey{Callback: c.Callback, ClientReference: c.ClientReference})
}

func (h *handler) cursorOf(s string) (storekit.Cursor, error) {
	at, id, ok := strings.Cut(s, ".")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil {
		return storekit.Cursor{}, errors.New("after is not a cursor of this view")
	}
	key, err := h.keyOf(id)
	if err != nil {
		return storekit.Cursor{}, err
	}
	return storekit.Cursor{At: time.Unix(0, n).UTC(), Callback: key.Callback, ClientReference: key.ClientReference}, nil
}

// maxExport bounds the rows of a CSV export.
const maxExport = 10_000

func (h *handler) movements(w http.ResponseWriter, r *http.Request, page string) {
	q, qv, err := h.listQuery(r)
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	if page == "movements.csv" {
		h.export(w, r, q)
		return
	}
	items, more, err := h.o.Tracker.List(r.Context(), q)
	if err != nil {
		h.fail(w, r, statusOf(err), err)
		return
	}
	sc := h.o.Tracker.Scrub
	qv.Reference, qv.From, qv.To = sc(qv.Reference), sc(qv.From), sc(qv.To)
	v := listView{Query: qv, Items: []MovementView{}, AsOf: q.Now.UTC()}
	for _, it := range items {
		v.Items = append(v.Items, h.movementView(it, q.Now))
	}
	base := r.URL.Query()
	base.Del("after")
	base.Del("refresh")
	base = h.safeQuery(base)
	v.QueryString = template.URL(base.Encode())
	if more && len(items) > 0 {
		v.Cursor = h.cursor(items[len(items)-1].Cursor)
		base.Set("after", v.Cursor)
		v.Next = template.URL(base.Encode())
	}
	h.page(w, r, http.StatusOK, "movements.html", "Movements", v, q.After.IsZero())
}

// csvSafe keeps a spreadsheet from reading a cell as a formula.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func (h *handler) export(w http.ResponseWriter, r *http.Request, q storekit.ListQuery) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="movements.csv"`)
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"kind", "reference", "state", "outcome", "source", "code", "amount", "currency", "started_at", "deadline", "settled_at", "reported_at", "report_attempts", "contradicted"})
	rows := 0
	for rows < maxExport {
		items, more, err := h.o.Tracker.List(r.Context(), q)
		if err != nil {
			_ = cw.Write([]string{"error", csvSafe(h.o.Tracker.Scrub(err.Error()))})
			break
		}
		for _, it := range items {
			v := h.movementView(it, q.Now)
			_ = cw.Write([]string{v.Kind, csvSafe(v.Reference), v.State, v.Outcome, v.Source, csvSafe(v.Code), strconv.FormatInt(v.Amount, 10), csvSafe(v.Currency),
				fmtTime(v.StartedAt), fmtTime(v.Deadline), fmtTime(v.SettledAt), fmtTime(v.ReportedAt), strconv.Itoa(v.ReportAttempts), strconv.FormatBool(v.Contradicted || v.Disagreed)})
			rows++
		}
		if !more || len(items) == 0 {
			break
		}
		q.After = items[len(items)-1].Cursor
	}
	cw.Flush()
}

// TimelineEvent is one line of a movement's timeline.
type TimelineEvent struct {
	At     time.Time `json:"at"`
	What   string    `json:"what"`
	Detail string    `json:"detail,omitempty"`
	Body   string    `json:"body,omitempty"`
	Audit  bool      `json:"audit,omitempty"`
}

type detailView struct {
	Movement MovementView    `json:"movement"`
	Timeline []TimelineEvent `json:"timeline"`
	Actions  []Action        `json:"actions"`
}

// maxShownBody bounds a body shown on the timeline.
const maxShownBody = 4 << 10

func (h *handler) body(b []byte) string {
	if len(b) > maxShownBody {
		return h.o.Tracker.Scrub(string(b[:maxShownBody])) + "\n… (cut)"
	}
	return h.o.Tracker.Scrub(string(b))
}

func (h *handler) movement(w http.ResponseWriter, r *http.Request) {
	key, err := h.keyOf(r.URL.Query().Get("id"))
	if err != nil {
		h.fail(w, r, http.StatusNotFound, err)
		return
	}
	in, err := h.o.Tracker.Inspect(r.Context(), key)
	if err != nil {
		h.fail(w, r, statusOf(err), err)
		return
	}
	if !in.Entry.Tracked && in.Entry.Final == nil {
		h.fail(w, r, http.StatusNotFound, errors.New("the store holds nothing under this movement"))
		return
	}
	now := h.o.Tracker.Now()
	d := detailView{Movement: h.movementView(storekit.ListItem{Key: key, Entry: in.Entry, Contradicted: in.Contradiction != nil}, now), Actions: []Action{}}
	d.Timeline = h.timeline(in)
	d.Actions = h.applicable(in)
	h.page(w, r, http.StatusOK, "movement.html", "Movement", d, false)
}

// money writes an amount in minor units as a person reads it, with its currency:
// "GHS 5.00" for 500.
func money(amount int64, currency string) string {
	return billing.Money{Amount: amount, Currency: currency}.String()
}

// timeline lists what the store knows of a movement, in order of time.
func (h *handler) timeline(in billing.Inspection) []TimelineEvent {
	s := h.o.Tracker.Scrub
	var t []TimelineEvent
	e := in.Entry
	if e.Tracked {
		m := e.Movement
		detail := "the request is sent right after"
		if m.Amount > 0 {
			detail = money(m.Amount, s(m.Currency)) + " asked; " + detail
		}
		t = append(t, TimelineEvent{At: m.StartedAt, What: "tracked", Detail: detail})
		if m.ServiceReference != "" {
			t = append(t, TimelineEvent{At: m.StartedAt, What: "accepted", Detail: "service reference " + s(m.ServiceReference)})
		}
		t = append(t, TimelineEvent{At: m.Deadline, What: "callback due", Detail: "the status check is asked from here on"})
		if e.Final == nil && m.Checks > 0 {
			t = append(t, TimelineEvent{At: m.NextCheckAt, What: "next status check", Detail: fmt.Sprintf("%d left it pending or failed", m.Checks)})
		}
	}
	t = append(t, h.attempts(in)...)
	for _, c := range in.Callbacks {
		detail := fmt.Sprintf("%d deliveries", c.Deliveries)
		if c.Deliveries <= 1 {
			detail = "one delivery"
		}
		t = append(t, TimelineEvent{At: c.At, What: "callback received", Detail: detail + ", last " + fmtTime(c.LastAt), Body: h.body(c.Body)})
	}
	if c := in.Contradiction; c != nil {
		t = append(t, TimelineEvent{At: c.At, What: "callback contradicted",
			Detail: fmt.Sprintf("claimed %s; the status check denied it (%d times, last %s): settled nothing", s(c.Claimed), c.Count, fmtTime(c.LastAt)), Body: h.body(c.Body)})
	}
	if f := e.Final; f != nil {
		by := []string{}
		if f.ByCallback {
			by = append(by, "callback")
		}
		if f.ByStatusCheck {
			by = append(by, "status check")
		}
		detail := "by " + f.Outcome.Source
		if f.Outcome.Code != "" {
			detail += "; code " + s(f.Outcome.Code)
		}
		if len(by) > 0 {
			detail += "; final states came from: " + strings.Join(by, ", ")
		}
		if f.Disagreed {
			detail += "; the callback and the status check disagreed"
		}
		ev := TimelineEvent{At: f.Outcome.At, What: "settled " + f.Outcome.State, Detail: detail}
		if f.Outcome.Source == storekit.SourceCallback && len(f.Body) > 0 {
			ev.Body = h.body(f.Body)
		}
		t = append(t, ev)
		switch {
		case !f.ReportedAt.IsZero():
			t = append(t, TimelineEvent{At: f.ReportedAt, What: "reported", Detail: fmt.Sprintf("OnOutcome accepted %s after %d failed attempts", s(f.ID), f.ReportAttempts)})
		case f.ReportAttempts > 0:
			t = append(t, TimelineEvent{At: f.Outcome.At, What: "report failing", Detail: fmt.Sprintf("%d attempts failed; Run tries again", f.ReportAttempts)})
		}
	}
	for _, a := range in.Audits {
		detail := fmt.Sprintf("by %s: %s → %s", s(a.Actor), a.Before, a.After)
		if a.Reason != "" {
			detail += "; reason: " + s(a.Reason)
		}
		t = append(t, TimelineEvent{At: a.At, What: "operator " + a.Action, Detail: detail, Audit: true})
	}
	slices.SortStableFunc(t, func(a, b TimelineEvent) int { return a.At.Compare(b.At) })
	for i := range t {
		t[i].At = t[i].At.UTC()
	}
	return t
}

// attempts lists the Tracker's unsuccessful tries kept for the movement, oldest first:
// what each status check answered, why each report failed, and, beside the first of
// each kind, how many earlier ones the store no longer keeps.
func (h *handler) attempts(in billing.Inspection) []TimelineEvent {
	s := h.o.Tracker.Scrub
	var t []TimelineEvent
	seen := map[string]bool{}
	for _, a := range in.Attempts {
		ev := TimelineEvent{At: a.At, Detail: "by " + s(a.Owner)}
		earlier := "status checks"
		switch a.What {
		case storekit.AttemptStatusCheck:
			ev.What = fmt.Sprintf("status check %d", a.N)
			if a.Answer != "" {
				ev.Detail = "answered " + s(a.Answer) + "; " + ev.Detail
			}
		case storekit.AttemptReport:
			ev.What, earlier = fmt.Sprintf("report attempt %d failed", a.N), "report attempts"
		default:
			continue
		}
		if a.Error != "" {
			ev.Detail += "; " + s(a.Error)
		}
		if !seen[a.What] && a.N > 1 {
			ev.Detail += fmt.Sprintf(" (%d earlier %s not kept)", a.N-1, earlier)
		}
		seen[a.What] = true
		t = append(t, ev)
	}
	return t
}

// applicable lists the enabled actions that apply to the movement now.
func (h *handler) applicable(in billing.Inspection) []Action {
	out := []Action{}
	e := in.Entry
	if !e.Tracked {
		return out
	}
	for _, a := range h.enabled {
		switch {
		case (a == ActionRecheck || a == ActionResolve) && e.Final == nil,
			a == ActionRelease && e.Final == nil && len(in.Callbacks) == 0,
			a == ActionReportAgain && e.Final != nil && !e.Final.ReportedAt.IsZero():
			out = append(out, a)
		}
	}
	return out
}

// reconcileView is a reconciliation, each list as movements.
type reconcileView struct {
	From            string         `json:"from"`
	To              string         `json:"to"`
	Untracked       []MovementView `json:"untracked"`
	Overdue         []MovementView `json:"overdue"`
	Disagreed       []MovementView `json:"disagreed"`
	Contradicted    []MovementView `json:"contradicted"`
	StatusCheckOnly []MovementView `json:"statusCheckOnly"`
	Truncated       bool           `json:"truncated"`
}

func (h *handler) reconcile(w http.ResponseWriter, r *http.Request) {
	now := h.o.Tracker.Now()
	from, err := parseTime("from", r.URL.Query().Get("from"))
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	to, err := parseTime("to", r.URL.Query().Get("to"))
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	if to.IsZero() {
		to = now.Add(time.Minute)
	}
	if from.IsZero() {
		from = to.Add(-7 * 24 * time.Hour)
	}
	rec, err := h.o.Tracker.Reconcile(r.Context(), from, to)
	if err != nil {
		h.fail(w, r, statusOf(err), err)
		return
	}
	v := reconcileView{From: from.UTC().Format(time.RFC3339), To: to.UTC().Format(time.RFC3339), Truncated: rec.Truncated,
		Untracked: []MovementView{}, Overdue: []MovementView{}, Disagreed: []MovementView{}, Contradicted: []MovementView{}, StatusCheckOnly: []MovementView{}}
	// Each line is made from what the reconciliation holds, with no read of its own: a
	// window of thousands costs one Reconcile.
	view := func(key storekit.MovementKey, e storekit.Entry, contradicted bool) MovementView {
		return h.movementView(storekit.ListItem{Key: key, Entry: e, Contradicted: contradicted}, now)
	}
	settled := func(st storekit.Settlement) storekit.Entry {
		return storekit.Entry{Tracked: true, Final: &st, Movement: storekit.Movement{Kind: st.Outcome.Kind, ClientReference: st.Key.ClientReference}}
	}
	for _, st := range rec.Untracked {
		v.Untracked = append(v.Untracked, view(st.Key, storekit.Entry{Final: &st}, false))
	}
	for _, m := range rec.Overdue {
		v.Overdue = append(v.Overdue, view(m.Key(), storekit.Entry{Tracked: true, Movement: m}, false))
	}
	for _, st := range rec.Disagreed {
		v.Disagreed = append(v.Disagreed, view(st.Key, settled(st), false))
	}
	for _, c := range rec.Contradicted {
		v.Contradicted = append(v.Contradicted, view(c.Key, storekit.Entry{Tracked: true, Movement: storekit.Movement{ClientReference: c.Key.ClientReference}}, true))
	}
	for _, st := range rec.StatusCheckOnly {
		v.StatusCheckOnly = append(v.StatusCheckOnly, view(st.Key, settled(st), false))
	}
	h.page(w, r, http.StatusOK, "reconcile.html", "Reconciliation", v, false)
}

// actRequest is a state change: the JSON API's body, or the page's form.
type actRequest struct {
	Action string   `json:"action"`
	ID     string   `json:"id"`
	IDs    []string `json:"ids"`
	Reason string   `json:"reason"`
	State  string   `json:"state"`
	// DryRun, for recheck_all, counts without acting; Confirm is the count the operator
	// confirmed (the page's second step).
	DryRun  bool `json:"dryRun"`
	Confirm int  `json:"confirm"`
}

// ActionView is the answer to an action.
type ActionView struct {
	ID        string `json:"id,omitempty"`
	Action    string `json:"action"`
	Reference string `json:"reference"`
	Before    string `json:"before,omitempty"`
	After     string `json:"after,omitempty"`
	Error     string `json:"error,omitempty"`
}

type doneView struct {
	Title   string
	Confirm string
	Count   int
	IDs     []string
	Results []ActionView
	Back    string
}

func (h *handler) readAct(r *http.Request, asJSON bool) (actRequest, error) {
	var req actRequest
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if asJSON {
		if ct != "application/json" {
			return req, errors.New("the API takes application/json")
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return req, errors.New("the body is not an action: " + err.Error())
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return req, errors.New("the body holds more than one action")
		}
		return req, nil
	}
	if ct != "application/x-www-form-urlencoded" {
		return req, errors.New("the form is posted as application/x-www-form-urlencoded")
	}
	if err := r.ParseForm(); err != nil {
		return req, errors.New("the form cannot be read")
	}
	f := r.PostForm
	req = actRequest{Action: f.Get("action"), Reason: f.Get("reason"), State: f.Get("state")}
	ids := f["id"]
	if req.Action == string(ActionRecheckAll) {
		req.IDs = ids
		if c := f.Get("confirm"); c != "" {
			req.Confirm, _ = strconv.Atoi(c)
		} else {
			req.DryRun = true
		}
	} else if len(ids) > 0 {
		req.ID = ids[0]
	}
	return req, nil
}

func (h *handler) act(w http.ResponseWriter, r *http.Request, asJSON bool) {
	req, err := h.readAct(r, asJSON)
	if err != nil {
		status := http.StatusBadRequest
		if strings.Contains(err.Error(), "application/") {
			status = http.StatusUnsupportedMediaType
		}
		h.fail(w, r, status, err)
		return
	}
	action := Action(req.Action)
	need := action
	if action == ActionRecheckAll {
		need = ActionRecheck
	}
	if !slices.Contains(h.enabled, need) {
		h.fail(w, r, http.StatusForbidden, fmt.Errorf("the action %q is not switched on", req.Action))
		return
	}
	if action == ActionRecheckAll {
		h.recheckAll(w, r, req)
		return
	}
	key, err := h.keyOf(req.ID)
	if err != nil {
		h.fail(w, r, http.StatusNotFound, err)
		return
	}
	mv, err := h.target(r.Context(), key)
	if err != nil {
		h.fail(w, r, statusOf(err), err)
		return
	}
	actor, err := h.o.Authorize(r, action, mv)
	if err != nil || strings.TrimSpace(actor) == "" {
		h.fail(w, r, http.StatusForbidden, errors.New("not authorized"))
		return
	}
	t := h.o.Tracker
	var res billing.ActionResult
	switch action {
	case ActionRecheck:
		res, err = t.Recheck(r.Context(), actor, req.Reason, mv.Kind, mv.ClientReference)
	case ActionReportAgain:
		res, err = t.ReportAgain(r.Context(), actor, req.Reason, mv.Kind, mv.ClientReference)
	case ActionResolve:
		res, err = t.Resolve(r.Context(), actor, req.Reason, mv.Kind, mv.ClientReference, billing.EventState(req.State))
	case ActionRelease:
		res, err = t.Release(r.Context(), actor, req.Reason, mv.Kind, mv.ClientReference)
	}
	v := ActionView{ID: req.ID, Action: req.Action, Reference: t.Scrub(key.ClientReference), Before: res.Before, After: res.After}
	// A refusal changed nothing; a recheck whose status check failed was taken (and
	// audited), and says why it learnt nothing.
	if err != nil && (statusOf(err) != http.StatusInternalServerError || action != ActionRecheck || res.After == "") {
		h.fail(w, r, statusOf(err), err)
		return
	}
	if err != nil {
		v.Error = t.Scrub(err.Error())
	}
	if asJSON {
		writeJSON(w, http.StatusOK, v)
		return
	}
	id := req.ID
	if action == ActionRelease {
		h.page(w, r, http.StatusOK, "done.html", "Released", doneView{Title: "Released", Results: []ActionView{v}, Back: "movements"}, false)
		return
	}
	http.Redirect(w, r, "movement?id="+url.QueryEscape(id)+"&done="+url.QueryEscape(string(action)), http.StatusSeeOther)
}

// target is the tracked movement key names, for an action.
func (h *handler) target(ctx context.Context, key storekit.MovementKey) (Movement, error) {
	in, err := h.o.Tracker.Inspect(ctx, key)
	if err != nil {
		return Movement{}, err
	}
	if !in.Entry.Tracked {
		return Movement{}, fmt.Errorf("%w: no tracked movement under this id", billing.ErrNotTracked)
	}
	return Movement{Kind: billing.Kind(in.Entry.Movement.Kind), ClientReference: key.ClientReference}, nil
}

// recheckAll rechecks at most billing.MaxBulkRecheck movements: a dry run first, which
// counts, then the count confirmed.
func (h *handler) recheckAll(w http.ResponseWriter, r *http.Request, req actRequest) {
	if len(req.IDs) > billing.MaxBulkRecheck {
		req.IDs = req.IDs[:billing.MaxBulkRecheck]
	}
	actor, err := h.o.Authorize(r, ActionRecheckAll, Movement{})
	if err != nil || strings.TrimSpace(actor) == "" {
		h.fail(w, r, http.StatusForbidden, errors.New("not authorized"))
		return
	}
	var refs []billing.MovementRef
	var ids []string
	for _, id := range req.IDs {
		key, err := h.keyOf(id)
		if err != nil {
			h.fail(w, r, http.StatusBadRequest, err)
			return
		}
		mv, err := h.target(r.Context(), key)
		if err != nil {
			continue
		}
		if _, err := h.o.Authorize(r, ActionRecheck, mv); err != nil {
			h.fail(w, r, http.StatusForbidden, errors.New("not authorized"))
			return
		}
		refs, ids = append(refs, billing.MovementRef{Kind: mv.Kind, ClientReference: mv.ClientReference}), append(ids, id)
	}
	t := h.o.Tracker
	dry, err := t.RecheckAll(r.Context(), actor, req.Reason, refs, true)
	if err != nil {
		h.fail(w, r, statusOf(err), err)
		return
	}
	if req.DryRun || req.Confirm != len(dry) {
		msg := fmt.Sprintf("%d of these movements are pending and would be rechecked, one status check each.", len(dry))
		if !req.DryRun {
			msg = "The count changed since it was confirmed. " + msg
		}
		if api(r) {
			writeJSON(w, http.StatusOK, map[string]any{"dryRun": true, "count": len(dry)})
			return
		}
		h.page(w, r, http.StatusOK, "done.html", "Recheck", doneView{Title: "Recheck", Confirm: msg, Count: len(dry), IDs: ids, Back: "movements"}, false)
		return
	}
	done, err := t.RecheckAll(r.Context(), actor, req.Reason, refs, false)
	var out []ActionView
	for _, d := range done {
		v := ActionView{Action: string(d.Action), Reference: t.Scrub(d.ClientReference), Before: d.Before, After: d.After}
		if k, err := storekitKey(d.Kind, d.ClientReference); err == nil {
			v.ID = h.movementID(k)
		}
		out = append(out, v)
	}
	if err != nil {
		out = append(out, ActionView{Action: string(ActionRecheck), Error: t.Scrub(err.Error())})
	}
	if api(r) {
		writeJSON(w, http.StatusOK, map[string]any{"count": len(done), "results": out})
		return
	}
	h.page(w, r, http.StatusOK, "done.html", "Rechecked", doneView{Title: fmt.Sprintf("Rechecked %d", len(done)), Results: out, Back: "movements?state=overdue"}, false)
}

func storekitKey(kind billing.Kind, ref string) (storekit.MovementKey, error) {
	cb, ok := storekit.CallbackOf(string(kind))
	if !ok {
		return storekit.MovementKey{}, errors.New("unknown kind")
	}
	return storekit.MovementKey{Callback: cb, ClientReference: ref}, nil
}
