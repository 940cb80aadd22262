package sandbox

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
)

// StateVersion is the version of the state SaveState writes. LoadState
// refuses any other: a state written by another release is never guessed at.
const StateVersion = 1

// MaxStateBytes bounds a saved state. SaveState refuses to write more, so a
// state it wrote is one LoadState reads.
const MaxStateBytes = 64 << 20

// stateLimit is MaxStateBytes, lowered by tests.
var stateLimit = MaxStateBytes

// ErrStateTooLarge is SaveState's answer when the state has outgrown
// MaxStateBytes.
var ErrStateTooLarge = errors.New("sandbox: the state has outgrown MaxStateBytes")

// savedState is everything a sandbox holds that a restart must not lose: its
// time, every record, the delivery log and the scheduled jobs. What belongs
// to one run only is left out: the forward target (billing listen registers
// again with the new instance), armed faults (flags arm them) and waiters of
// After.
type savedState struct {
	Version int `json:"version"`
	// Now is the sandbox's time when saved, Offset how far it was ahead of
	// its clock: a restart keeps the offset and never moves time back.
	Now    time.Time     `json:"now"`
	Offset time.Duration `json:"offset"`

	Customers     []savedCustomer      `json:"customers"`
	Products      []savedProduct       `json:"products"`
	Subscriptions []savedSubscription  `json:"subscriptions"`
	Invoices      map[string][]Invoice `json:"invoices"`
	Licenses      []savedLicense       `json:"licenses"`
	Wallets       []savedWallet        `json:"wallets"`
	Meters        []savedMeter         `json:"meters"`
	Ledger        savedLedger          `json:"ledger"`
	Checkouts     []savedCheckout      `json:"checkouts"`
	Receives      []savedReceipt       `json:"receives"`
	Sends         []savedPayout        `json:"sends"`
	Banks         []savedPayout        `json:"banks"`
	Mandates      []savedMandate       `json:"mandates"`
	Charges       []savedCharge        `json:"charges"`
	SMS           smsOutbox            `json:"sms"`
	Deliveries    savedDeliveries      `json:"deliveries"`
	Jobs          []savedJob           `json:"jobs"`
}

type savedCustomer struct {
	Record   customer `json:"record"`
	EmailKey string   `json:"emailKey"`
}

type savedProduct struct {
	Record product      `json:"record"`
	Prices []savedPrice `json:"prices"`
}

type savedPrice struct {
	Record    price  `json:"record"`
	ProductID string `json:"productId"`
}

type savedSubscription struct {
	Record        subscription `json:"record"`
	Interval      string       `json:"interval"`
	IntervalCount int64        `json:"intervalCount"`
	Amount        int64        `json:"amount"`
	Anchor        time.Time    `json:"anchor"`
	Periods       int64        `json:"periods"`
	Epoch         int          `json:"epoch"`
}

type savedLicense struct {
	Record     license `json:"record"`
	CustomerID string  `json:"customerId"`
	ProductID  string  `json:"productId"`
}

type savedWallet struct {
	Record       walletView          `json:"record"`
	CustomerID   string              `json:"customerId"`
	Transactions []creditTransaction `json:"transactions"`
	Lots         []savedLot          `json:"lots"`
}

type savedLot struct {
	GrantID   string    `json:"grantId"`
	Remaining int64     `json:"remaining"`
	ExpiresAt time.Time `json:"expiresAt"`
}

type savedMeter struct {
	Record meter             `json:"record"`
	Events []meterEvent      `json:"events"`
	ByKey  map[string]string `json:"byKey"`
}

// savedLedger names each movement by its key; the records that hold a
// movement name it the same way.
type savedLedger struct {
	Balance   int64                    `json:"balance"`
	Movements []savedMovement          `json:"movements"`
	ByRef     map[string][]movementRef `json:"byRef"`
}

type savedMovement struct {
	Record      Movement `json:"record"`
	ExternalID  string   `json:"externalId"`
	Payout      bool     `json:"payout"`
	Debited     bool     `json:"debited"`
	CallbackURL string   `json:"callbackUrl"`
}

// movementRef names a movement of the ledger.
type movementRef struct {
	Kind      string `json:"kind"`
	Reference string `json:"reference"`
}

func refOf(m *movement) movementRef { return movementRef{m.Kind, m.ClientReference} }

func (r movementRef) key() movementKey { return movementKey{movementKind(r.Kind), r.Reference} }

type savedCheckout struct {
	Record     checkoutPayment `json:"record"`
	Key        string          `json:"key"`
	Movement   movementRef     `json:"movement"`
	WebStart   *webStart       `json:"webStart"`
	WebhookURL string          `json:"webhookUrl"`
}

type savedReceipt struct {
	Record   receipt     `json:"record"`
	Movement movementRef `json:"movement"`
}

type savedPayout struct {
	Record   payout      `json:"record"`
	Provider string      `json:"provider"`
	Movement movementRef `json:"movement"`
}

type savedMandate struct {
	Record      mandate      `json:"record"`
	CallbackURL string       `json:"callbackUrl"`
	OTP         string       `json:"otp"`
	Verified    bool         `json:"verified"`
	Request     int          `json:"request"`
	Movement    *movementRef `json:"movement"`
}

type savedCharge struct {
	Record   charge      `json:"record"`
	Network  string      `json:"network"`
	Movement movementRef `json:"movement"`
}

type savedDeliveries struct {
	Dropped int        `json:"dropped"`
	Log     []Delivery `json:"log"`
}

type savedJob struct {
	At   timestamp       `json:"at"`
	Kind string          `json:"kind"`
	Job  json.RawMessage `json:"job"`
}

// SaveState writes the sandbox's state as JSON to w, at most MaxStateBytes
// (ErrStateTooLarge beyond). It takes the same lock as a request, briefly.
func (s *Server) SaveState(w io.Writer) error {
	b, err := s.marshalState()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// marshalState returns the state as SaveState writes it.
func (s *Server) marshalState() ([]byte, error) {
	st := s.snapshot()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(st); err != nil {
		return nil, fmt.Errorf("sandbox: encoding the state: %w", err)
	}
	if buf.Len() > stateLimit {
		return nil, fmt.Errorf("%w (%d bytes, at most %d)", ErrStateTooLarge, buf.Len(), stateLimit)
	}
	return buf.Bytes(), nil
}

// snapshot copies the state out under the locks that guard it, all held at
// once: work is scheduled under s.mu with the record it is for, and a job
// taken from the queue stays in jobs until it has run, so the records and
// the jobs agree.
func (s *Server) snapshot() *savedState {
	s.mu.Lock()
	defer s.mu.Unlock()
	jobs := s.sched.jobs()
	st := &savedState{Version: StateVersion}
	s.sched.mu.Lock()
	st.Offset, st.Now = s.sched.offset, s.sched.nowLocked()
	s.sched.mu.Unlock()
	for _, sj := range jobs {
		raw, err := json.Marshal(sj.job)
		if err != nil {
			panic("sandbox: a job does not encode: " + err.Error()) // our own types: a bug
		}
		st.Jobs = append(st.Jobs, savedJob{At: timestamp{sj.at}, Kind: sj.job.kind(), Job: raw})
	}
	s.deliveries.mu.Lock()
	st.Deliveries = savedDeliveries{Dropped: s.deliveries.dropped, Log: slices.Clone(s.deliveries.log)}
	s.deliveries.mu.Unlock()

	for _, c := range s.customers.table.rows {
		st.Customers = append(st.Customers, savedCustomer{Record: *c, EmailKey: c.emailKey})
	}
	for _, p := range s.products.table.rows {
		sp := savedProduct{Record: *p, Prices: []savedPrice{}}
		sp.Record.prices = nil
		for _, pr := range p.prices {
			sp.Prices = append(sp.Prices, savedPrice{Record: *pr, ProductID: pr.productID})
		}
		st.Products = append(st.Products, sp)
	}
	for _, sub := range s.subscriptions.table.rows {
		st.Subscriptions = append(st.Subscriptions, savedSubscription{Record: *sub, Interval: sub.interval, IntervalCount: sub.intervalCount,
			Amount: sub.amount, Anchor: sub.anchor, Periods: sub.periods, Epoch: sub.epoch})
	}
	st.Invoices = maps.Clone(s.subscriptions.invoices)
	for _, l := range s.licenses.table.rows {
		st.Licenses = append(st.Licenses, savedLicense{Record: *l, CustomerID: l.customerID, ProductID: l.productID})
	}
	for _, customerID := range slices.Sorted(maps.Keys(s.credits.byCustomer)) {
		w := s.credits.byCustomer[customerID]
		sw := savedWallet{Record: w.walletView, CustomerID: customerID, Transactions: []creditTransaction{}, Lots: []savedLot{}}
		for _, tx := range w.ledger.rows {
			sw.Transactions = append(sw.Transactions, *tx)
		}
		for _, lot := range w.lots {
			sw.Lots = append(sw.Lots, savedLot{GrantID: lot.grantID, Remaining: lot.remaining, ExpiresAt: lot.expiresAt})
		}
		st.Wallets = append(st.Wallets, sw)
	}
	for _, m := range s.meters.table.rows {
		sm := savedMeter{Record: m.meter, Events: []meterEvent{}, ByKey: maps.Clone(m.byKey)}
		for _, ev := range m.events.rows {
			sm.Events = append(sm.Events, *ev)
		}
		st.Meters = append(st.Meters, sm)
	}

	st.Ledger = savedLedger{Balance: s.money.balance, ByRef: map[string][]movementRef{}}
	for _, m := range s.money.byKey {
		st.Ledger.Movements = append(st.Ledger.Movements, savedMovement{Record: m.Movement, ExternalID: m.externalID,
			Payout: m.payout, Debited: m.debited, CallbackURL: m.callbackURL})
	}
	slices.SortFunc(st.Ledger.Movements, func(a, b savedMovement) int {
		return cmp.Or(cmp.Compare(a.Record.Kind, b.Record.Kind), cmp.Compare(a.Record.ClientReference, b.Record.ClientReference))
	})
	for ref, ms := range s.money.byRef {
		for _, m := range ms {
			st.Ledger.ByRef[ref] = append(st.Ledger.ByRef[ref], refOf(m))
		}
	}

	for i, p := range s.payments.checkouts.rows {
		st.Checkouts = append(st.Checkouts, savedCheckout{Record: *p, Key: s.payments.checkouts.ids[i], Movement: refOf(p.movement),
			WebStart: p.sdk, WebhookURL: p.webhookURL})
	}
	for _, ref := range slices.Sorted(maps.Keys(s.payments.receives)) {
		rec := s.payments.receives[ref]
		st.Receives = append(st.Receives, savedReceipt{Record: *rec, Movement: refOf(rec.movement)})
	}
	savePayouts := func(byRef map[string]*payout) []savedPayout {
		var out []savedPayout
		for _, ref := range slices.Sorted(maps.Keys(byRef)) {
			p := byRef[ref]
			out = append(out, savedPayout{Record: *p, Provider: p.provider, Movement: refOf(p.movement)})
		}
		return out
	}
	st.Sends, st.Banks = savePayouts(s.payouts.sends), savePayouts(s.payouts.banks)
	// Each MSISDN's mandates oldest first, so that adding them in this order
	// rebuilds every index.
	for _, msisdn := range slices.Sorted(maps.Keys(s.mandates.byMsisdn)) {
		for _, m := range s.mandates.byMsisdn[msisdn] {
			sm := savedMandate{Record: *m, CallbackURL: m.callbackURL, OTP: m.otp, Verified: m.verified, Request: m.request}
			if m.movement != nil {
				ref := refOf(m.movement)
				sm.Movement = &ref
			}
			st.Mandates = append(st.Mandates, sm)
		}
	}
	for _, ref := range slices.Sorted(maps.Keys(s.mandates.charges)) {
		c := s.mandates.charges[ref]
		st.Charges = append(st.Charges, savedCharge{Record: *c, Network: c.network, Movement: refOf(c.movement)})
	}
	st.SMS = maps.Clone(s.sms)
	return st
}

// StateError is LoadState's refusal: the state is not one this release
// wrote, or not whole. Nothing was loaded.
type StateError struct{ Reason string }

// Error says why the state was refused.
func (e *StateError) Error() string { return "sandbox: the saved state is refused: " + e.Reason }

func stateErrorf(format string, args ...any) error {
	return &StateError{Reason: fmt.Sprintf(format, args...)}
}

// LoadState reads a state SaveState wrote into a sandbox that holds nothing
// yet, and schedules its jobs again: work that fell due while the state was
// not served runs at once (at the next Advance with a ManualClock). It reads
// at most MaxStateBytes. A state of another version, with a field this
// release does not know, or not whole is refused with a *StateError, and
// the sandbox is left as it was.
func (s *Server) LoadState(r io.Reader) error {
	b, err := io.ReadAll(io.LimitReader(r, int64(stateLimit)+1))
	if err != nil {
		return fmt.Errorf("sandbox: reading the saved state: %w", err)
	}
	if len(b) > stateLimit {
		return stateErrorf("it is larger than %d bytes", stateLimit)
	}
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return stateErrorf("it is not JSON the sandbox wrote: %v", err)
	}
	if head.Version != StateVersion {
		return stateErrorf("it is version %d; this sandbox reads version %d only", head.Version, StateVersion)
	}
	var st savedState
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber() // metadata keeps its numbers as written
	if err := dec.Decode(&st); err != nil {
		return stateErrorf("%v", err)
	}
	fresh := New(s.cfg) // built apart, so a refusal leaves s as it was
	defer fresh.Close()
	jobs, err := fresh.restore(&st)
	if err != nil {
		return err
	}
	return s.adopt(fresh, &st, jobs)
}

// restore fills s, a new sandbox, from st and returns st's jobs read back.
func (s *Server) restore(st *savedState) ([]scheduledJob, error) {
	s.customers.byEmail = make(map[string]string, len(st.Customers))
	for _, sc := range st.Customers {
		c := sc.Record
		c.emailKey = sc.EmailKey
		s.customers.byEmail[c.emailKey] = c.ID
		s.customers.table.insert(c.ID, &c)
	}
	s.products.prices = map[string]*price{}
	for _, sp := range st.Products {
		p := sp.Record
		for _, spr := range sp.Prices {
			pr := spr.Record
			pr.productID = spr.ProductID
			p.prices = append(p.prices, &pr)
			s.products.prices[pr.ID] = &pr
		}
		s.products.table.insert(p.ID, &p)
	}
	for _, ss := range st.Subscriptions {
		sub := ss.Record
		sub.interval, sub.intervalCount, sub.amount, sub.anchor, sub.periods, sub.epoch =
			ss.Interval, ss.IntervalCount, ss.Amount, ss.Anchor, ss.Periods, ss.Epoch
		s.subscriptions.table.insert(sub.ID, &sub)
	}
	s.subscriptions.invoices = st.Invoices
	s.licenses.byKey = map[string]string{}
	for _, sl := range st.Licenses {
		l := sl.Record
		l.customerID, l.productID = sl.CustomerID, sl.ProductID
		s.licenses.byKey[l.Key] = l.ID
		s.licenses.table.insert(l.ID, &l)
	}
	s.credits.byCustomer = make(map[string]*creditWallet, len(st.Wallets))
	for _, sw := range st.Wallets {
		w := &creditWallet{walletView: sw.Record, customerID: sw.CustomerID}
		s.credits.byCustomer[sw.CustomerID] = w
		for _, tx := range sw.Transactions {
			w.ledger.insert(tx.ID, &tx)
		}
		for _, lot := range sw.Lots {
			w.lots = append(w.lots, &creditLot{grantID: lot.GrantID, remaining: lot.Remaining, expiresAt: lot.ExpiresAt})
		}
	}
	s.meters.byEventName = map[string]string{}
	for _, sm := range st.Meters {
		rec := &meterRecord{meter: sm.Record, byKey: sm.ByKey}
		if rec.byKey == nil {
			rec.byKey = map[string]string{}
		}
		for _, ev := range sm.Events {
			rec.events.insert(ev.ID, &ev)
		}
		s.meters.byEventName[rec.EventName] = rec.ID
		s.meters.table.insert(rec.ID, rec)
	}

	s.money.balance = st.Ledger.Balance
	for _, sm := range st.Ledger.Movements {
		m := &movement{Movement: sm.Record, externalID: sm.ExternalID, payout: sm.Payout, debited: sm.Debited, callbackURL: sm.CallbackURL}
		s.money.byKey[movementKey{movementKind(m.Kind), m.ClientReference}] = m
	}
	movementOf := func(ref movementRef) (*movement, error) {
		m := s.money.byKey[ref.key()]
		if m == nil {
			return nil, stateErrorf("it names a %s movement %q that its ledger does not hold", ref.Kind, ref.Reference)
		}
		return m, nil
	}
	for ref, refs := range st.Ledger.ByRef {
		for _, mr := range refs {
			m, err := movementOf(mr)
			if err != nil {
				return nil, err
			}
			s.money.byRef[ref] = append(s.money.byRef[ref], m)
		}
	}
	var err error
	for _, sc := range st.Checkouts {
		p := sc.Record
		if p.movement, err = movementOf(sc.Movement); err != nil {
			return nil, err
		}
		p.sdk, p.webhookURL = sc.WebStart, sc.WebhookURL
		s.payments.checkouts.insert(sc.Key, &p)
	}
	s.payments.receives = map[string]*receipt{}
	for _, sr := range st.Receives {
		rec := sr.Record
		if rec.movement, err = movementOf(sr.Movement); err != nil {
			return nil, err
		}
		s.payments.receives[rec.movement.ClientReference] = &rec
	}
	for _, saved := range []struct {
		from []savedPayout
		into *map[string]*payout
	}{{st.Sends, &s.payouts.sends}, {st.Banks, &s.payouts.banks}} {
		for _, sp := range saved.from {
			p := sp.Record
			p.provider = sp.Provider
			if p.movement, err = movementOf(sp.Movement); err != nil {
				return nil, err
			}
			*saved.into = addPayout(*saved.into, &p)
		}
	}
	for _, sm := range st.Mandates {
		m := sm.Record
		m.callbackURL, m.otp, m.verified, m.request = sm.CallbackURL, sm.OTP, sm.Verified, sm.Request
		if sm.Movement != nil {
			if m.movement, err = movementOf(*sm.Movement); err != nil {
				return nil, err
			}
		}
		s.mandates.add(&m)
	}
	for _, sc := range st.Charges {
		c := sc.Record
		c.network = sc.Network
		if c.movement, err = movementOf(sc.Movement); err != nil {
			return nil, err
		}
		s.mandates.addCharge(&c)
	}
	s.sms = st.SMS

	jobs := make([]scheduledJob, 0, len(st.Jobs))
	for _, sj := range st.Jobs {
		decode, ok := jobKinds[sj.Kind]
		if !ok {
			return nil, stateErrorf("it schedules a job of kind %q, which this sandbox does not run", sj.Kind)
		}
		j, err := decode(sj.Job)
		if err != nil {
			return nil, stateErrorf("%v", err)
		}
		jobs = append(jobs, scheduledJob{at: sj.At.Time, job: j})
	}
	return jobs, nil
}

// adopt takes the records fresh was restored with, the delivery log and the
// time of st, and schedules jobs. s must hold nothing yet.
func (s *Server) adopt(fresh *Server, st *savedState, jobs []scheduledJob) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.holdsNothing() {
		return stateErrorf("this sandbox already holds records; a state loads into a new one only")
	}
	// Every record's callback closes over fresh; bind them to s again.
	fresh.mu.Lock()
	s.customers, s.products, s.subscriptions, s.licenses = fresh.customers, fresh.products, fresh.subscriptions, fresh.licenses
	s.credits, s.meters, s.money, s.payments, s.payouts = fresh.credits, fresh.meters, fresh.money, fresh.payments, fresh.payouts
	s.mandates, s.sms = fresh.mandates, fresh.sms
	fresh.mu.Unlock()
	s.rebindCallbacks()

	s.deliveries.mu.Lock()
	s.deliveries.dropped, s.deliveries.log = st.Deliveries.Dropped, st.Deliveries.Log
	s.deliveries.mu.Unlock()

	s.sched.mu.Lock()
	s.sched.offset = st.Offset
	if now := s.sched.nowLocked(); now.Before(st.Now) {
		s.sched.offset += st.Now.Sub(now) // another clock behind the saved time: never move back
	}
	s.sched.mu.Unlock()
	for _, sj := range jobs {
		s.scheduleJob(sj.at, sj.job)
	}
	return nil
}

// rebindCallbacks binds every movement's callback to s, through the functions
// creation uses. s.mu must be held.
func (s *Server) rebindCallbacks() {
	for _, p := range s.payments.checkouts.rows {
		if p.sdk != nil {
			s.bindSDKCallback(p)
		}
	}
	for _, rec := range s.payments.receives {
		s.bindReceiveCallback(rec)
	}
	for _, p := range s.payouts.sends {
		s.bindPayoutCallback(p)
	}
	for _, p := range s.payouts.banks {
		s.bindPayoutCallback(p)
	}
	for _, c := range s.mandates.charges {
		s.bindChargeCallback(c)
	}
}

// holdsNothing tells whether s has no record, no delivery and no job yet.
// s.mu must be held.
func (s *Server) holdsNothing() bool {
	s.deliveries.mu.Lock()
	delivered := len(s.deliveries.log) + s.deliveries.dropped
	s.deliveries.mu.Unlock()
	return s.customers.table.len() == 0 && s.products.table.len() == 0 && s.subscriptions.table.len() == 0 &&
		s.licenses.table.len() == 0 && len(s.credits.byCustomer) == 0 && s.meters.table.len() == 0 &&
		len(s.money.byKey) == 0 && s.payments.checkouts.len() == 0 && len(s.mandates.byID) == 0 &&
		len(s.sms) == 0 && delivered == 0 && len(s.sched.jobs()) == 0
}
