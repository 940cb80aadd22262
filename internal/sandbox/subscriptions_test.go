package sandbox

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// subscriptionJSON decodes a subscription as a client would see it.
type subscriptionJSON struct {
	ID                 string  `json:"id"`
	CustomerID         string  `json:"customerId"`
	PriceID            string  `json:"priceId"`
	Quantity           int64   `json:"quantity"`
	Status             string  `json:"status"`
	Currency           string  `json:"currency"`
	TrialStart         *string `json:"trialStart"`
	TrialEnd           *string `json:"trialEnd"`
	CurrentPeriodStart *string `json:"currentPeriodStart"`
	CurrentPeriodEnd   *string `json:"currentPeriodEnd"`
	CancelAt           *string `json:"cancelAt"`
	CanceledAt         *string `json:"canceledAt"`
	CreatedAt          string  `json:"createdAt"`
}

// catalog is what a subscription test needs: a customer and prices.
type catalog struct {
	customerID string
	monthly    string // 5000 GHS every month
	trial      string // every month, 14 trial days
	weekly2    string // every 2 weeks
	oneTime    string
}

func newCatalog(tb testing.TB, s *Server) catalog {
	tb.Helper()
	c := createCustomer(tb, s, map[string]any{"email": "ada@example.com", "name": "Ada"})
	p := createProduct(tb, s, map[string]any{"name": "Pro"})
	return catalog{
		customerID: c.ID,
		monthly:    createPrice(tb, s, p.ID, `{"unitAmount":5000,"isRecurring":true,"interval":"MONTH"}`).ID,
		trial:      createPrice(tb, s, p.ID, `{"unitAmount":5000,"currency":"USD","isRecurring":true,"interval":"MONTH","trialPeriodDays":14}`).ID,
		weekly2:    createPrice(tb, s, p.ID, `{"unitAmount":700,"isRecurring":true,"interval":"WEEK","intervalCount":2}`).ID,
		oneTime:    createPrice(tb, s, p.ID, `{"unitAmount":900}`).ID,
	}
}

func subscribe(tb testing.TB, s *Server, body any) subscriptionJSON {
	tb.Helper()
	return decode[subscriptionJSON](tb, serve(tb, s, http.MethodPost, "/v1/subscriptions", basicHeader, body), http.StatusCreated).Data
}

func getSubscription(tb testing.TB, s *Server, id string) subscriptionJSON {
	tb.Helper()
	return decode[subscriptionJSON](tb, serve(tb, s, http.MethodGet, "/v1/subscriptions/"+id, basicHeader, nil), http.StatusOK).Data
}

func patchSubscription(tb testing.TB, s *Server, id, action string, body any) *httptest.ResponseRecorder {
	tb.Helper()
	return serve(tb, s, http.MethodPatch, "/v1/subscriptions/"+id+"/"+action, basicHeader, body)
}

// at writes testStart + d as the wire does.
func at(d time.Duration) *string {
	s := testStart.Add(d).UTC().Format(timeLayout)
	return &s
}

const day = 24 * time.Hour

func TestSubscriptionWithoutTrialStartsActive(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)
	sub := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly})
	assert.Regexp(t, `^sub_[0-9a-f]{24}$`, sub.ID)
	assert.Equal(t, subscriptionJSON{
		ID: sub.ID, CustomerID: cat.customerID, PriceID: cat.monthly, Quantity: 1, Status: "ACTIVE", Currency: "GHS",
		CurrentPeriodStart: at(0), CurrentPeriodEnd: at(31 * day), CreatedAt: *at(0),
	}, sub, "ACTIVE at once, quantity 1, a month from 2 January to 2 February")
	assert.Equal(t, sub, getSubscription(t, s, sub.ID))

	raw := serve(t, s, http.MethodGet, "/v1/subscriptions/"+sub.ID, basicHeader, nil).Body.String()
	assert.Contains(t, raw, `"trialStart":null`, "absent moments are written as null")

	q := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.weekly2, "quantity": 3})
	assert.Equal(t, int64(3), q.Quantity)
	assert.Equal(t, at(14*day), q.CurrentPeriodEnd, "intervalCount × interval")
}

func TestSubscriptionTrial(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)

	fromPrice := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.trial})
	assert.Equal(t, "TRIALING", fromPrice.Status)
	assert.Equal(t, "USD", fromPrice.Currency, "the price's currency")
	assert.Equal(t, at(0), fromPrice.TrialStart)
	assert.Equal(t, at(14*day), fromPrice.TrialEnd, "the price's trialPeriodDays")
	assert.Equal(t, fromPrice.TrialStart, fromPrice.CurrentPeriodStart)
	assert.Equal(t, fromPrice.TrialEnd, fromPrice.CurrentPeriodEnd)

	given := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly, "trialDays": 3})
	assert.Equal(t, "TRIALING", given.Status)
	assert.Equal(t, at(3*day), given.TrialEnd, "trialDays on a price without a trial")

	override := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.trial, "trialDays": 7})
	assert.Equal(t, at(7*day), override.TrialEnd, "trialDays wins over the price's")

	none := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.trial, "trialDays": 0})
	assert.Equal(t, "ACTIVE", none.Status, "trialDays 0 skips the price's trial")
	assert.Nil(t, none.TrialEnd)
}

func TestTrialStartSendsTheWebhook(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var raw json.RawMessage
		require.NoError(t, json.NewDecoder(r.Body).Decode(&raw))
		mu.Lock()
		bodies = append(bodies, raw)
		mu.Unlock()
	}))
	defer hook.Close()
	s := newTestServer(t, Config{WebhookURL: hook.URL})
	cat := newCatalog(t, s)

	subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly})
	sub := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.trial})
	s.Advance(0) // deliveries go out as the sandbox clock allows
	require.Len(t, s.Deliveries(), 1, "only the trial start is an event")
	d := s.Deliveries()[0]
	assert.Equal(t, hook.URL, d.URL)
	assert.Equal(t, http.StatusOK, d.Status)

	var event struct {
		ID        string           `json:"id"`
		Event     string           `json:"event"`
		CreatedAt string           `json:"createdAt"`
		Data      subscriptionJSON `json:"data"`
	}
	require.NoError(t, json.Unmarshal(d.Body, &event))
	assert.Regexp(t, `^evt_[0-9a-f]{24}$`, event.ID)
	assert.Equal(t, "customer.subscription.trial", event.Event)
	assert.Equal(t, *at(0), event.CreatedAt)
	assert.Equal(t, sub, event.Data, "the data is the subscription as created")
	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(d.Body, &keys))
	assert.Len(t, keys, 4, "id, event, createdAt, data")
	mu.Lock()
	assert.Len(t, bodies, 1)
	mu.Unlock()
}

func TestCreateSubscriptionRules(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)
	ok := `"customerId":"` + cat.customerID + `","priceId":"` + cat.monthly + `"`
	for _, tc := range []struct {
		name, body, field, message string
	}{
		{"customerId missing", `{"priceId":"` + cat.monthly + `"}`, "customerId", "customerId is required"},
		{"customerId blank", `{"customerId":" ","priceId":"` + cat.monthly + `"}`, "customerId", "customerId is required"},
		{"priceId missing", `{"customerId":"` + cat.customerID + `"}`, "priceId", "priceId is required"},
		{"priceId type", `{"customerId":"` + cat.customerID + `","priceId":7}`, "priceId", "priceId must be a string"},
		{"quantity zero", `{` + ok + `,"quantity":0}`, "quantity", "quantity must be a positive integer"},
		{"quantity negative", `{` + ok + `,"quantity":-2}`, "quantity", "quantity must be a positive integer"},
		{"quantity decimal", `{` + ok + `,"quantity":1.5}`, "quantity", "quantity must be a positive integer"},
		{"trialDays negative", `{` + ok + `,"trialDays":-1}`, "trialDays", "trialDays must be an integer from 0 to 730"},
		{"trialDays big", `{` + ok + `,"trialDays":731}`, "trialDays", "trialDays must be an integer from 0 to 730"},
		{"trialDays string", `{` + ok + `,"trialDays":"3"}`, "trialDays", "trialDays must be an integer from 0 to 730"},
		{"one-time price", `{"customerId":"` + cat.customerID + `","priceId":"` + cat.oneTime + `"}`, "priceId", "is one-time: a subscription needs a recurring price"},
		{"not an object", `[1]`, "", "request body must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(t, s, http.MethodPost, "/v1/subscriptions", basicHeader, tc.body)
			requireError(t, rec, http.StatusBadRequest, CodeValidation, tc.field, tc.message)
		})
	}
	requireError(t, serve(t, s, http.MethodPost, "/v1/subscriptions", basicHeader, `{"customerId":"cust_missing","priceId":"`+cat.monthly+`"}`),
		http.StatusNotFound, CodeNotFound, "customerId", `customer "cust_missing" not found`)
	requireError(t, serve(t, s, http.MethodPost, "/v1/subscriptions", basicHeader, `{"customerId":"`+cat.customerID+`","priceId":"price_missing"}`),
		http.StatusNotFound, CodeNotFound, "priceId", `price "price_missing" not found`)
	s.mu.Lock()
	assert.Zero(t, s.subscriptions.table.len(), "nothing was written")
	s.mu.Unlock()
}

func TestArchivedPriceRefusesNewSubscriptionsOnly(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)
	existing := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly})
	var productID string
	s.mu.Lock()
	productID = s.products.prices[cat.monthly].productID
	s.mu.Unlock()
	decode[archivedPrice](t, serve(t, s, http.MethodDelete, "/v1/products/"+productID+"/prices/"+cat.monthly, basicHeader, nil), http.StatusOK)

	requireError(t, serve(t, s, http.MethodPost, "/v1/subscriptions", basicHeader, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly}),
		http.StatusConflict, CodePriceArchived, "priceId", "is archived: it cannot be subscribed to")

	s.Advance(31 * day)
	renewed := getSubscription(t, s, existing.ID)
	assert.Equal(t, "ACTIVE", renewed.Status, "existing subscriptions are unaffected")
	assert.Equal(t, at(31*day), renewed.CurrentPeriodStart)
	assert.Equal(t, at(59*day), renewed.CurrentPeriodEnd, "and keep renewing")
}

func TestTrialEndStartsTheFirstPaidPeriod(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)
	sub := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.trial})

	s.Advance(14*day - time.Second)
	assert.Equal(t, "TRIALING", getSubscription(t, s, sub.ID).Status, "a second before the trial ends")

	s.Advance(time.Second)
	got := getSubscription(t, s, sub.ID)
	assert.Equal(t, "ACTIVE", got.Status)
	assert.Equal(t, at(14*day), got.CurrentPeriodStart, "the paid period starts at trialEnd")
	assert.Equal(t, at(45*day), got.CurrentPeriodEnd, "16 January to 16 February")
	assert.Equal(t, sub.TrialStart, got.TrialStart, "the trial stays on record")
	assert.Equal(t, sub.TrialEnd, got.TrialEnd)
}

func TestRenewalsFollowTheInterval(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)
	monthly := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly})
	weekly := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.weekly2})

	s.Advance(100 * day) // several renewals in one move, each at its moment
	m := getSubscription(t, s, monthly.ID)
	assert.Equal(t, "ACTIVE", m.Status)
	assert.Equal(t, *at(90 * day), *m.CurrentPeriodStart, "2 April")
	assert.Equal(t, *at(120 * day), *m.CurrentPeriodEnd, "2 May")

	w := getSubscription(t, s, weekly.ID)
	assert.Equal(t, *at(98 * day), *w.CurrentPeriodStart, "seven fortnights")
	assert.Equal(t, *at(112 * day), *w.CurrentPeriodEnd)
}

func TestAddIntervalsKeepsTheAnchorDay(t *testing.T) {
	jan31 := time.Date(2024, 1, 31, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		interval string
		n        int64
		want     time.Time
	}{
		{"MONTH", 1, time.Date(2024, 2, 29, 10, 0, 0, 0, time.UTC)},
		{"MONTH", 2, time.Date(2024, 3, 31, 10, 0, 0, 0, time.UTC)},
		{"MONTH", 3, time.Date(2024, 4, 30, 10, 0, 0, 0, time.UTC)},
		{"MONTH", 13, time.Date(2025, 2, 28, 10, 0, 0, 0, time.UTC)},
		{"YEAR", 1, time.Date(2025, 1, 31, 10, 0, 0, 0, time.UTC)},
		{"DAY", 1, time.Date(2024, 2, 1, 10, 0, 0, 0, time.UTC)},
		{"WEEK", 2, time.Date(2024, 2, 14, 10, 0, 0, 0, time.UTC)},
	} {
		assert.Equal(t, tc.want, addIntervals(jan31, tc.interval, tc.n), "%s × %d", tc.interval, tc.n)
	}
	leap := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, time.Date(2025, 2, 28, 0, 0, 0, 0, time.UTC), addIntervals(leap, "YEAR", 1))
	assert.Equal(t, time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC), addIntervals(leap, "YEAR", 4))
}

func TestCancelAtPeriodEnd(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)
	sub := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly})
	s.Advance(day)

	got := decode[subscriptionCancellation](t, patchSubscription(t, s, sub.ID, "cancel", `{"atPeriodEnd":true}`), http.StatusOK).Data
	assert.Equal(t, subscriptionCancellation{ID: sub.ID, Status: "ACTIVE", CancelAt: &timestamp{testStart.Add(31 * day)}, CanceledAt: &timestamp{testStart.Add(day)}}, got)

	again := decode[subscriptionCancellation](t, patchSubscription(t, s, sub.ID, "cancel", `{"atPeriodEnd":true}`), http.StatusOK).Data
	assert.Equal(t, got, again, "asking again keeps the first request's moments")

	s.Advance(30*day - time.Second)
	assert.Equal(t, "ACTIVE", getSubscription(t, s, sub.ID).Status)
	s.Advance(time.Second)
	ended := getSubscription(t, s, sub.ID)
	assert.Equal(t, "CANCELED", ended.Status, "reaching cancelAt cancels")
	assert.Equal(t, at(31*day), ended.CancelAt)
	assert.Equal(t, at(day), ended.CanceledAt)
	assert.Equal(t, at(31*day), ended.CurrentPeriodEnd, "no renewal")

	s.Advance(90 * day)
	assert.Equal(t, ended, getSubscription(t, s, sub.ID), "a cancelled subscription stays as it ended")
}

func TestCancelAtOnceFromEveryLiveState(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)
	active := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly}).ID
	trialing := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.trial}).ID
	paused := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly}).ID
	decode[subscriptionStatus](t, patchSubscription(t, s, paused, "pause", nil), http.StatusOK)
	scheduled := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly}).ID
	decode[subscriptionCancellation](t, patchSubscription(t, s, scheduled, "cancel", `{"atPeriodEnd":true}`), http.StatusOK)
	s.Advance(time.Hour)

	for name, id := range map[string]string{"ACTIVE": active, "TRIALING": trialing, "PAUSED": paused, "scheduled": scheduled} {
		body := map[string]string{"ACTIVE": `{"atPeriodEnd":false}`, "TRIALING": `{}`, "PAUSED": ``, "scheduled": `{"atPeriodEnd":null}`}[name]
		got := decode[subscriptionCancellation](t, patchSubscription(t, s, id, "cancel", body), http.StatusOK).Data
		assert.Equal(t, subscriptionCancellation{ID: id, Status: "CANCELED", CanceledAt: &timestamp{testStart.Add(time.Hour)}}, got, name)
	}
	s.Advance(60 * day)
	for _, id := range []string{active, trialing, paused, scheduled} {
		assert.Equal(t, "CANCELED", getSubscription(t, s, id).Status, "no trial end or renewal revives it")
	}
}

func TestPauseAndResume(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)
	sub := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly})

	rec := patchSubscription(t, s, sub.ID, "pause", nil)
	assert.JSONEq(t, `{"success":true,"data":{"id":"`+sub.ID+`","status":"PAUSED"}}`, rec.Body.String())
	again := patchSubscription(t, s, sub.ID, "pause", `{}`)
	assert.Equal(t, rec.Body.String(), again.Body.String(), "pausing a paused subscription changes nothing")

	s.Advance(45 * day)
	paused := getSubscription(t, s, sub.ID)
	assert.Equal(t, "PAUSED", paused.Status, "billing cycles stop")
	assert.Equal(t, sub.CurrentPeriodEnd, paused.CurrentPeriodEnd, "no renewal while paused")

	rec = patchSubscription(t, s, sub.ID, "resume", nil)
	assert.JSONEq(t, `{"success":true,"data":{"id":"`+sub.ID+`","status":"ACTIVE"}}`, rec.Body.String())
	resumed := getSubscription(t, s, sub.ID)
	assert.Equal(t, at(45*day), resumed.CurrentPeriodStart, "a new period from the resume")
	assert.Equal(t, at(73*day), resumed.CurrentPeriodEnd, "16 February to 16 March")

	s.Advance(28 * day)
	assert.Equal(t, at(73*day), getSubscription(t, s, sub.ID).CurrentPeriodStart, "billing cycles resume")
}

func TestPausedTrialResumesIntoActive(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)
	sub := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.trial})
	decode[subscriptionStatus](t, patchSubscription(t, s, sub.ID, "pause", nil), http.StatusOK)
	s.Advance(20 * day)
	assert.Equal(t, "PAUSED", getSubscription(t, s, sub.ID).Status, "the trial end does not apply while paused")

	decode[subscriptionStatus](t, patchSubscription(t, s, sub.ID, "resume", nil), http.StatusOK)
	got := getSubscription(t, s, sub.ID)
	assert.Equal(t, "ACTIVE", got.Status)
	assert.Equal(t, at(20*day), got.CurrentPeriodStart)
}

func TestScheduledCancelHoldsWhilePaused(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)
	sub := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly})
	decode[subscriptionCancellation](t, patchSubscription(t, s, sub.ID, "cancel", `{"atPeriodEnd":true}`), http.StatusOK)
	decode[subscriptionStatus](t, patchSubscription(t, s, sub.ID, "pause", nil), http.StatusOK)
	s.Advance(31 * day)
	got := getSubscription(t, s, sub.ID)
	assert.Equal(t, "CANCELED", got.Status, "reaching cancelAt cancels a paused subscription too")
	assert.Equal(t, at(31*day), got.CancelAt)
}

func TestForbiddenSubscriptionTransitionsChangeNothing(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)
	newSub := func(state string) string {
		price := cat.monthly
		if state == "TRIALING" {
			price = cat.trial
		}
		id := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": price}).ID
		switch state {
		case "PAUSED":
			decode[subscriptionStatus](t, patchSubscription(t, s, id, "pause", nil), http.StatusOK)
		case "CANCELED":
			decode[subscriptionCancellation](t, patchSubscription(t, s, id, "cancel", nil), http.StatusOK)
		}
		return id
	}
	for _, tc := range []struct {
		state, action, body, message string
	}{
		{"CANCELED", "cancel", `{}`, "cannot be cancelled again"},
		{"CANCELED", "cancel", `{"atPeriodEnd":true}`, "cannot be cancelled again"},
		{"CANCELED", "pause", ``, "cannot be paused"},
		{"CANCELED", "resume", ``, "only a paused subscription can be resumed"},
		{"ACTIVE", "resume", ``, "only a paused subscription can be resumed"},
		{"TRIALING", "resume", ``, "only a paused subscription can be resumed"},
		{"TRIALING", "cancel", `{"atPeriodEnd":true}`, "only an active subscription can be cancelled at its period end"},
		{"PAUSED", "cancel", `{"atPeriodEnd":true}`, "only an active subscription can be cancelled at its period end"},
	} {
		t.Run(tc.state+" "+tc.action+" "+tc.body, func(t *testing.T) {
			id := newSub(tc.state)
			before := getSubscription(t, s, id)
			requireError(t, patchSubscription(t, s, id, tc.action, tc.body), http.StatusConflict, CodeInvalidState, "", tc.message)
			assert.Equal(t, before, getSubscription(t, s, id), "nothing changed")
		})
	}

	id := newSub("ACTIVE")
	before := getSubscription(t, s, id)
	requireError(t, patchSubscription(t, s, id, "cancel", `{"atPeriodEnd":"yes"}`), http.StatusBadRequest, CodeValidation, "atPeriodEnd", "atPeriodEnd must be a boolean")
	requireError(t, patchSubscription(t, s, id, "cancel", `[]`), http.StatusBadRequest, CodeValidation, "", "request body must be a JSON object")
	assert.Equal(t, before, getSubscription(t, s, id), "refused cancels write nothing")
	for _, action := range []string{"cancel", "pause", "resume"} {
		requireError(t, patchSubscription(t, s, "sub_missing", action, nil), http.StatusNotFound, CodeNotFound, "", `subscription "sub_missing" not found`)
	}
	requireError(t, serve(t, s, http.MethodGet, "/v1/subscriptions/sub_missing", basicHeader, nil), http.StatusNotFound, CodeNotFound, "", "not found")
}

func TestSubscriptionPathForms(t *testing.T) {
	s := newTestServer(t, Config{Scopes: []string{ScopeCustomersWrite, ScopeProductsWrite}})
	cat := newCatalog(t, s)
	body := map[string]any{"customerId": cat.customerID, "priceId": cat.monthly}

	requireError(t, serve(t, s, http.MethodPost, "/v1/subscriptions", basicHeader, body), http.StatusForbidden, CodeKeysMismatch, "", "scope payments:write")
	requireError(t, serve(t, s, http.MethodPost, "/v1/subscriptions", secretHeader, body), http.StatusUnauthorized, CodeKeysMismatch, "", "Basic client credentials")
	requireError(t, serve(t, s, http.MethodPost, "/subscriptions", basicHeader, body), http.StatusUnauthorized, CodeKeysMismatch, "", "session token or secret key")

	for _, auth := range []string{sessionHeader, secretHeader} {
		sub := decode[subscriptionJSON](t, serve(t, s, http.MethodPost, "/subscriptions", auth, body), http.StatusCreated).Data
		assert.Equal(t, "ACTIVE", sub.Status)
		decode[subscriptionStatus](t, serve(t, s, http.MethodPatch, "/subscriptions/"+sub.ID+"/pause", auth, nil), http.StatusOK)
		decode[subscriptionStatus](t, serve(t, s, http.MethodPatch, "/subscriptions/"+sub.ID+"/resume", auth, nil), http.StatusOK)
		got := decode[subscriptionCancellation](t, serve(t, s, http.MethodPatch, "/subscriptions/"+sub.ID+"/cancel", auth, `{"atPeriodEnd":false}`), http.StatusOK).Data
		assert.Equal(t, "CANCELED", got.Status)
		assert.Equal(t, "CANCELED", decode[subscriptionJSON](t, serve(t, s, http.MethodGet, "/subscriptions/"+sub.ID, auth, nil), http.StatusOK).Data.Status)
	}

	full := newTestServer(t, Config{})
	cat = newCatalog(t, full)
	created := decode[subscriptionJSON](t, serve(t, full, http.MethodPost, "/subscriptions", sessionHeader, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly}), http.StatusCreated).Data
	assert.Equal(t, created, getSubscription(t, full, created.ID), "both forms serve the same subscriptions")
}

func BenchmarkSandboxCreateSubscription(b *testing.B) {
	s := newTestServer(b, Config{})
	cat := newCatalog(b, s)
	body := `{"customerId":"` + cat.customerID + `","priceId":"` + cat.monthly + `","quantity":2}`
	benchmarkRequests(b, s, http.StatusCreated, func() *http.Request {
		return authorized(http.MethodPost, "/v1/subscriptions", strings.NewReader(body))
	})
}
