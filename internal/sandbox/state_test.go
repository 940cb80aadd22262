package sandbox

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statusReceiver answers every post to a path ending in /fail with 500 and
// any other with 200, so two sandboxes posting to it hear the same.
func statusReceiver(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/fail") {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// seededEntropy makes the sandbox's ids come from a stream seeded with seed
// until the test ends.
func seededEntropy(t *testing.T, seed uint64) {
	t.Helper()
	saved := entropy
	entropy = rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24)})
	t.Cleanup(func() { entropy = saved })
}

// populate gives s one of every record in every state that schedules work:
// subscriptions in trial, renewing and cancelling, an expiring license and
// grant, meter events, checkout sessions open, paid and started by the web
// SDK, movements pending, slow, silent and failing, mandates pending and
// approved with a charge, an SMS, a delivery held back by a fault and one
// refused, so redelivered.
func populate(t *testing.T, s *Server, hooks string) {
	t.Helper()
	c := newCatalog(t, s)
	subscribe(t, s, map[string]any{"customerId": c.customerID, "priceId": c.trial})
	renewing := subscribe(t, s, map[string]any{"customerId": c.customerID, "priceId": c.weekly2, "metadata": map[string]any{"seats": 3.5}})
	cancelling := subscribe(t, s, map[string]any{"customerId": c.customerID, "priceId": c.monthly})
	decode[subscriptionCancellation](t, patchSubscription(t, s, cancelling.ID, "cancel", `{"atPeriodEnd":true}`), http.StatusOK)
	_ = renewing

	holder, product := licenseHolder2(t, s)
	issueLicense(t, s, map[string]any{"customerId": holder, "productId": product, "expiresAt": "2025-03-01T00:00:00Z", "maxActivations": 2})
	postGrant(t, s, holder, map[string]any{"amount": 100, "expiresAt": "2025-02-01T00:00:00Z", "metadata": map[string]any{"k": "v"}})
	postGrant(t, s, holder, map[string]any{"amount": 50})
	postDeduct(t, s, holder, map[string]any{"amount": 30})
	meter := postMeter(t, s, map[string]any{"name": "Searches", "eventName": "search"})
	postMeterEvent(t, s, meter.ID, map[string]any{"customerId": holder, "value": 2, "idempotencyKey": "req-1"}, http.StatusCreated)

	openSession(t, s, "order-open")
	paid := openSession(t, s, "order-paid")
	require.NoError(t, s.CompleteCheckout(paid, "CARD", "succeeded"))
	openSession(t, s, "order-web")
	serve(t, s, http.MethodPost, "/sdk/sessions", "", sdkStart("5000", "order-web", DefaultPublicKey, hooks+"/web"))

	serve(t, s, http.MethodPost, "/sandbox/callbacks/faults", basicHeader, `{"kind":"delay","reference":"rcv-held","delaySeconds":420}`)
	for _, rc := range []struct{ phone, ref, path string }{
		{"+233241234567", "rcv-ok", "/ok"}, {"+233241230004", "rcv-slow", "/ok"}, {"+233241230002", "rcv-silent", "/ok"},
		{"+233241234567", "rcv-refused", "/fail"}, {"+233241234567", "rcv-held", "/ok"},
	} {
		answer(t, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody(rc.phone, rc.ref, hooks+rc.path)), http.StatusOK)
	}
	answer(t, serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("+233201234567", "snd1", hooks+"/ok", "5000")), http.StatusOK)
	answer(t, serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("+233201230001", "snd-failed", hooks+"/ok", "700")), http.StatusOK)
	answer(t, serve(t, s, http.MethodPost, bankPath, basicHeader, bankBody("12.50", "1234567890", "bank1", hooks+"/ok")), http.StatusOK)

	createMandate(t, s, "mandotp", "233201230000", vodafoneDebit, hooks+"/ok")
	createMandate(t, s, "mandok", "233241239999", mtnDebit, "http://127.0.0.1:1/mandates")
	s.Advance(s.cfg.ResolveAfter) // approved: the debit below needs it
	answer(t, serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233241239999", mtnDebit, "20.00", "debit1", hooks+"/ok")), http.StatusOK)
	createMandate(t, s, "mandpending", "233241238888", mtnDebit, hooks+"/ok")
	s.Advance(0) // the refused callback's first attempt: a redelivery is due
}

// licenseHolder2 is licenseHolder for a sandbox that already holds ada@example.com.
func licenseHolder2(t *testing.T, s *Server) (customerID, productID string) {
	t.Helper()
	c := createCustomer(t, s, map[string]any{"email": "grace@example.com", "name": "Grace", "metadata": map[string]any{"tier": 2}})
	p := createProduct(t, s, map[string]any{"name": "Editor"})
	return c.ID, p.ID
}

func savedBytes(t *testing.T, s *Server) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, s.SaveState(&buf))
	return buf.Bytes()
}

// TestStateTwinsMoveOnAlike saves a sandbox holding one of every record and
// every kind of job, loads the state into a new one, and moves both on
// through every renewal, expiry, resolution and redelivery: they hold the
// same at each step, what a restart must give. It runs on every wire.
func TestStateTwinsMoveOnAlike(t *testing.T) {
	for _, wire := range WireNames() {
		t.Run(wire, func(t *testing.T) { twinsMoveOnAlike(t, Wire(wire)) })
	}
}

func twinsMoveOnAlike(t *testing.T, wire Wire) {
	hooks := statusReceiver(t)
	cfg := Config{ResolveAfter: time.Minute, WebhookURL: hooks + "/webhooks", Wire: wire}
	seededEntropy(t, 1)
	a := newTestServer(t, cfg)
	populate(t, a, hooks)
	a.Advance(30 * time.Second)

	saved := savedBytes(t, a)
	var st savedState
	require.NoError(t, json.Unmarshal(saved, &st))
	scheduled := map[string]bool{}
	for _, j := range st.Jobs {
		scheduled[j.Kind] = true
	}
	for kind := range jobKinds {
		assert.True(t, scheduled[kind], "the populated sandbox schedules no %s job: populate must cover every kind", kind)
	}

	b := newTestServer(t, cfg)
	require.NoError(t, b.LoadState(bytes.NewReader(saved)))
	require.Equal(t, string(saved), string(savedBytes(t, b)), "a loaded state saves as it was read")

	for i, d := range []time.Duration{0, 30 * time.Second, time.Minute, 10 * time.Minute, time.Hour, 15 * 24 * time.Hour, 40 * 24 * time.Hour, 90 * 24 * time.Hour} {
		seed := uint64(100 + i)
		seededEntropy(t, seed)
		a.Advance(d)
		seededEntropy(t, seed)
		b.Advance(d)
		require.Equal(t, string(savedBytes(t, a)), string(savedBytes(t, b)), "after advancing %s", d)
	}
	var final savedState
	require.NoError(t, json.Unmarshal(savedBytes(t, b), &final))
	for _, m := range final.Ledger.Movements {
		if m.Record.ClientReference == "mandotp" {
			continue // its customer never entered the code
		}
		assert.NotEqual(t, StatePending, m.Record.State, "%s %s is still pending", m.Record.Kind, m.Record.ClientReference)
	}
}

// TestStateAnswersAsBeforeARestart compares what the resources answer before
// and after a restart, through every list and status path.
func TestStateAnswersAsBeforeARestart(t *testing.T) {
	hooks := statusReceiver(t)
	a := newTestServer(t, Config{ResolveAfter: time.Minute})
	populate(t, a, hooks)
	b := newTestServer(t, Config{ResolveAfter: time.Minute})
	require.NoError(t, b.LoadState(bytes.NewReader(savedBytes(t, a))))
	assert.Equal(t, a.Now(), b.Now())
	for _, path := range []string{
		"/v1/customers", "/v1/products", "/sandbox/movements", "/sandbox/deliveries",
		"/v1/payments/rcv-ok", "/v1/payments/direct-debit/status/debit1",
		"/v1/merchants/2020202/transactions/status?clientReference=bank1",
	} {
		want := serve(t, a, http.MethodGet, path, basicHeader, nil)
		got := serve(t, b, http.MethodGet, path, basicHeader, nil)
		assert.Equal(t, want.Code, got.Code, path)
		assert.JSONEq(t, want.Body.String(), got.Body.String(), path)
	}
	assert.Equal(t, a.SMS("233201230000"), b.SMS("233201230000"))
}

// TestEveryServerFieldIsKeptOrPerRun makes a field added to Server decide
// whether a restart keeps it.
func TestEveryServerFieldIsKeptOrPerRun(t *testing.T) {
	kept := []string{"deliveries", "customers", "products", "subscriptions", "licenses", "credits", "meters", "money", "payments", "payouts", "mandates", "sms", "sched"}
	perRun := []string{"cfg", "mux", "creds", "granted", "shapes", "forward", "instance", "startedAt", "faults", "callbackFaults", "waiters", "mu", "keeper"}
	known := map[string]bool{}
	for _, name := range append(kept, perRun...) {
		known[name] = true
	}
	server := reflect.TypeFor[Server]()
	for i := range server.NumField() {
		f := server.Field(i)
		assert.True(t, known[f.Name], "Server.%s is new: keep it in the state file (state.go) and list it as kept here, or list it as per run", f.Name)
	}
}

// TestEveryRecordFieldIsSaved makes a field added to a record that the wire
// does not carry find its place in the saved form of the record.
func TestEveryRecordFieldIsSaved(t *testing.T) {
	elsewhere := map[string]string{
		"creditWallet.walletView": "Record", "creditWallet.ledger": "Transactions",
		"meterRecord.meter": "Record", "meterRecord.events": "Events",
		"checkoutPayment.sdk": "WebStart", "movement.Movement": "Record",
	}
	rebound := map[string]bool{"movement.callback": true} // bound again at load (rebindCallbacks)
	for _, pair := range []struct{ record, saved reflect.Type }{
		{reflect.TypeFor[customer](), reflect.TypeFor[savedCustomer]()},
		{reflect.TypeFor[product](), reflect.TypeFor[savedProduct]()},
		{reflect.TypeFor[price](), reflect.TypeFor[savedPrice]()},
		{reflect.TypeFor[subscription](), reflect.TypeFor[savedSubscription]()},
		{reflect.TypeFor[license](), reflect.TypeFor[savedLicense]()},
		{reflect.TypeFor[creditWallet](), reflect.TypeFor[savedWallet]()},
		{reflect.TypeFor[creditLot](), reflect.TypeFor[savedLot]()},
		{reflect.TypeFor[meterRecord](), reflect.TypeFor[savedMeter]()},
		{reflect.TypeFor[movement](), reflect.TypeFor[savedMovement]()},
		{reflect.TypeFor[checkoutPayment](), reflect.TypeFor[savedCheckout]()},
		{reflect.TypeFor[receipt](), reflect.TypeFor[savedReceipt]()},
		{reflect.TypeFor[payout](), reflect.TypeFor[savedPayout]()},
		{reflect.TypeFor[mandate](), reflect.TypeFor[savedMandate]()},
		{reflect.TypeFor[charge](), reflect.TypeFor[savedCharge]()},
	} {
		for i := range pair.record.NumField() {
			f := pair.record.Field(i)
			name := pair.record.Name() + "." + f.Name
			if (f.IsExported() || f.Anonymous) && elsewhere[name] == "" || rebound[name] {
				continue // the wire's fields, embedded ones too, travel in Record
			}
			want := elsewhere[name]
			if want == "" {
				want = f.Name
			}
			_, found := pair.saved.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, want) })
			assert.True(t, found, "%s has no place in %s", name, pair.saved.Name())
		}
	}
}

func TestLoadStateRefusesWhatItDidNotWrite(t *testing.T) {
	defer func(limit int) { stateLimit = limit }(stateLimit)
	stateLimit = 1 << 20
	a := newTestServer(t, Config{})
	populate(t, a, statusReceiver(t))
	saved := savedBytes(t, a)
	for _, tc := range []struct {
		name, state, reason string
	}{
		{"not JSON", "{\"version\":1,", "not JSON"},
		{"another version", `{"version":2}`, "version 2"},
		{"no version", `{}`, "version 0"},
		{"an unknown field", strings.Replace(string(saved), `"version":1,`, `"version":1,"extra":true,`, 1), "unknown field"},
		{"an unknown job", strings.Replace(string(saved), `"kind":"expire-checkout"`, `"kind":"launch-rocket"`, 1), "launch-rocket"},
		{"a movement its ledger lacks", strings.Replace(string(saved), `"reference":"snd1"`, `"reference":"snd404"`, 1), "does not hold"},
		{"two values", string(saved) + "{}", "not JSON"},
		{"too large", `{"version":1,"sms":{"x":[` + strings.Repeat(" ", stateLimit) + `]}}`, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newTestServer(t, Config{})
			err := b.LoadState(strings.NewReader(tc.state))
			var refused *StateError
			require.ErrorAs(t, err, &refused)
			assert.Contains(t, err.Error(), tc.reason)
			assert.True(t, b.holdsNothingNow(), "a refused state changes nothing")
		})
	}

	// A state cut anywhere, as by a disk that filled up under a writer that did not
	// rename: never read as a smaller state.
	for cut := 0; cut < len(saved)-1; cut += max(1, len(saved)/300) {
		b := newTestServer(t, Config{})
		require.Error(t, b.LoadState(bytes.NewReader(saved[:cut])), "cut at %d of %d", cut, len(saved))
		require.True(t, b.holdsNothingNow(), "cut at %d", cut)
	}

	full := newTestServer(t, Config{})
	createCustomer(t, full, map[string]any{"email": "x@example.com", "name": "X"})
	err := full.LoadState(bytes.NewReader(saved))
	require.ErrorContains(t, err, "already holds records")
	assert.Len(t, listAll(t, full, nil), 1)
}

// holdsNothingNow is holdsNothing with s.mu taken.
func (s *Server) holdsNothingNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holdsNothing()
}

func TestKeepStateWritesBeforeAnsweringAndRestoresOnStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.json")
	a := newTestServer(t, Config{ResolveAfter: time.Minute})
	loaded, err := a.KeepState(path)
	require.NoError(t, err)
	assert.False(t, loaded, "no file yet")
	info, err := os.Stat(path)
	require.NoError(t, err, "an empty state is written at once")
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	created := createCustomer(t, a, map[string]any{"email": "ama@example.com", "name": "Ama"})
	answer(t, serve(t, a, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("+233201234567", "snd1", "http://127.0.0.1:1/cb", "5000")), http.StatusOK)
	// What the file holds now is what a process killed right after the answer leaves.
	crashed, err := os.ReadFile(path)
	require.NoError(t, err)

	b := newTestServer(t, Config{ResolveAfter: time.Minute})
	loaded, err = b.KeepState(path)
	require.NoError(t, err)
	assert.True(t, loaded)
	assert.Equal(t, a.Now(), b.Now())
	got := decode[customerJSON](t, serve(t, b, http.MethodGet, "/v1/customers/"+created.ID, basicHeader, nil), http.StatusOK).Data
	assert.Equal(t, created, got)
	require.Len(t, b.Movements("snd1"), 1)
	assert.Equal(t, StatePending, b.Movements("snd1")[0].State)
	b.Advance(time.Minute)
	assert.Equal(t, StateSucceeded, b.Movements("snd1")[0].State, "the resolution scheduled before the restart runs after it")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotEqual(t, string(crashed), string(after), "the job's outcome is kept too")

	identity := decode[identityView](t, serve(t, b, http.MethodGet, "/sandbox/identity", basicHeader, nil), http.StatusOK).Data
	require.NotNil(t, identity.State)
	assert.Equal(t, stateView{File: path, Restored: true}, *identity.State)
	plain := decode[identityView](t, serve(t, newTestServer(t, Config{}), http.MethodGet, "/sandbox/identity", basicHeader, nil), http.StatusOK).Data
	assert.Nil(t, plain.State, "no state file, none named")
}

func TestKeepStateRefusesAFileItDidNotWriteAndLeavesIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version":99}`), 0o600))
	s := newTestServer(t, Config{})
	_, err := s.KeepState(path)
	var refused *StateError
	require.ErrorAs(t, err, &refused)
	assert.Contains(t, err.Error(), path)
	kept, _ := os.ReadFile(path)
	assert.Equal(t, `{"version":99}`, string(kept), "a refused file is never overwritten")
	createCustomer(t, s, map[string]any{"email": "x@example.com", "name": "X"})
	kept, _ = os.ReadFile(path)
	assert.Equal(t, `{"version":99}`, string(kept), "nor by the requests that follow")
}

func TestKeepStateSaysWhenItCannotWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sandbox.json")
	s := newTestServer(t, Config{})
	_, err := s.KeepState(path)
	require.NoError(t, err)
	defer func(limit int) { stateLimit = limit }(stateLimit)
	stateLimit = 600
	createCustomer(t, s, map[string]any{"email": "x@example.com", "name": "X", "description": strings.Repeat("d", 600)})
	identity := decode[identityView](t, serve(t, s, http.MethodGet, "/sandbox/identity", basicHeader, nil), http.StatusOK).Data
	require.NotNil(t, identity.State)
	assert.Contains(t, identity.State.Error, "outgrown")
}
