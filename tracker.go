package billing

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/billingsdk/billing-go/storekit"
)

// ErrStillPending is matched (errors.Is) by the error of an Await that ended without a
// final state: its context ended, or the status check still said pending when the
// give-up limit came. The outcome returned beside it says what is known. Do not treat it
// as a failure: the money may still move. Await again later.
var ErrStillPending = errors.New("billing: outcome still pending")

// Clock tells a Tracker the time and wakes it. Tests give a fake one so that minutes of
// waiting take no time (billingtest.Server.Clock keeps the sandbox's time); the default
// is the wall clock.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed. It may also receive
	// early, as a clock whose time jumps may wake every waiter: the Tracker reads Now
	// again after every wake.
	After(d time.Duration) <-chan time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Defaults of TrackerOptions.
const (
	DefaultCallbackWait      = 5 * time.Minute
	DefaultPollInterval      = 15 * time.Second
	DefaultMaxPollInterval   = 2 * time.Minute
	DefaultGiveUpAfter       = time.Hour
	DefaultCheckoutExpiry    = 24 * time.Hour
	DefaultRetention         = time.Hour
	DefaultMaxTracked        = 100_000
	DefaultMaxBytes          = 64 << 20
	DefaultLease             = time.Minute
	DefaultStorePollInterval = time.Second
	DefaultRunInterval       = time.Second
	DefaultRunConcurrency    = 8
)

// TrackerOptions configures a Tracker. Zero fields take the defaults.
type TrackerOptions struct {
	// CallbackURL is where Handler is mounted, as the service reaches it
	// ("https://shop.example.com/callbacks"). The Tracker's Receive, Send, SendToBank,
	// Charge and CreateMandate send it for a movement whose params leave their callback
	// URL empty (the caller's params are not changed). Without it such a movement is
	// refused with a *ValidationError before anything is tracked or sent: its outcome
	// would otherwise come only from the status check, CallbackWait late.
	CallbackURL string
	// CallbackWait is how long to wait for the callback, from Track, before asking the
	// status check (the service's rule: 5 minutes).
	CallbackWait time.Duration
	// PollInterval is the first pause between status checks that say pending; each
	// pause doubles, up to MaxPollInterval. Run retries a failing OnOutcome on the same
	// schedule.
	PollInterval    time.Duration
	MaxPollInterval time.Duration
	// GiveUpAfter bounds an Await's polling: after CallbackWait plus GiveUpAfter, Await
	// returns the pending outcome with ErrStillPending. Run never gives up: it keeps
	// asking every MaxPollInterval, and Reconcile lists the movement as overdue.
	GiveUpAfter time.Duration
	// CheckoutExpiry is how long a hosted checkout session may stay unpaid, from its
	// creation (CreateCheckout): Run settles one still unpaid after it EventExpired, and
	// one the service never confirmed it created (the creation's answer was lost)
	// EventUnknown. Default 24 hours, the service's.
	CheckoutExpiry time.Duration
	// Retention is how long a settled outcome is kept once reported (Run purges older
	// ones), so that an Await after the callback, or a second Await, still finds it.
	Retention time.Duration
	// MaxTracked caps the movements the in-memory store holds when Store is nil; see
	// NewMemoryStore.
	MaxTracked int
	// MaxBytes caps the bytes the in-memory store holds when Store is nil, whatever
	// senders put in their callbacks: bodies, events and references (default 64 MiB).
	// Beyond it reported outcomes are forgotten first; see storekit.NewMemoryStore.
	MaxBytes int
	// Clock is the time source of every wait (the callback wait, polling, OnOutcome
	// retries, leases); nil is the wall clock. NewTracker hands it to a store that takes
	// one (storekit.ClockUser), as pgstore does.
	Clock Clock
	// Logger receives the Tracker's logs: contradictory callbacks, failing status checks,
	// store errors and OnOutcome failures. Nil is silent.
	Logger *slog.Logger

	// Store keeps the movements, outcomes and callbacks. Nil is a store in this
	// process's memory, this Tracker's own, bounded by MaxTracked and MaxBytes. Give every
	// instance of a server the same shared store (pgstore.New) so that a callback on one
	// resolves an Await on another and a restart forgets nothing. Its type is package
	// storekit's, the package for those who write a store; a merchant passes one.
	Store storekit.Store
	// OnOutcome is called by Run for every final outcome of a tracked movement, once
	// across all the instances sharing Store: at least once, as an error, a panic or a
	// crash means it is called again later (with backoff), until it returns nil. Dedupe
	// on Outcome.ID, or use pgstore's OnOutcomeTx, whose effects commit with the report
	// exactly once. Await may return an outcome before OnOutcome has run or committed:
	// act on an outcome in one of them, not both. Nil means outcomes are only awaited.
	OnOutcome func(context.Context, *Outcome) error
	// Owner names this instance in the store's leases; empty is a random id. Every
	// running instance needs its own.
	Owner string
	// Lease is how long a claim of Run (a movement being checked, an outcome being
	// reported) or of the callback handler holds off the other instances; it is renewed
	// while a status check runs. An instance that dies loses its claims when their
	// leases end. Default one minute.
	Lease time.Duration
	// StorePollInterval is how often an Await reads a shared Store for an outcome
	// another instance learned. Default one second; unused when Store is nil.
	StorePollInterval time.Duration
	// RunInterval is how often Run looks for overdue movements and unreported outcomes
	// when it found none. Default one second.
	RunInterval time.Duration
	// RunConcurrency is how many status checks (and OnOutcome calls) Run makes at once.
	// Default 8.
	RunConcurrency int
	// Observer is told of callbacks received, status checks asked and outcomes settled,
	// for metrics; nil tells no one.
	Observer TrackerObserver
	// StoreTimeout bounds every call the Tracker makes to Store, the writes it makes
	// after its caller's context ended included, so that a dead connection to a shared
	// store stalls nothing for long: a call not answered in time fails with an error
	// matching ErrStoreTimeout, and a warning naming it is logged. Real time, not Clock.
	// Run's calls that begin within a hundredth of it share one deadline, so such a call
	// may end up to 1% sooner. Default 10 seconds.
	StoreTimeout time.Duration
	// OnOutcomeTimeout bounds each OnOutcome call: its context ends then, and a call
	// that has not returned counts as failed (it is called again later). Real time, not
	// Clock; shared as StoreTimeout's is. Default one minute.
	OnOutcomeTimeout time.Duration
	// ReportConcurrency is how many OnOutcome calls Run makes at once. They run beside
	// Run's rounds, so a slow call holds up neither the other reports nor the status
	// checks. Default RunConcurrency.
	ReportConcurrency int

	// deadline makes the contexts of StoreTimeout and OnOutcomeTimeout: shared
	// (sharedDeadlines) on the wall clock under Run's context; tests give a fake
	// clock's.
	deadline deadlineFunc
	// shared is deadline's sharedDeadlines, nil when a test gave its own.
	shared *sharedDeadlines
}

func (o TrackerOptions) withDefaults() TrackerOptions {
	set := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	set(&o.CallbackWait, DefaultCallbackWait)
	set(&o.PollInterval, DefaultPollInterval)
	set(&o.MaxPollInterval, DefaultMaxPollInterval)
	set(&o.GiveUpAfter, DefaultGiveUpAfter)
	set(&o.CheckoutExpiry, DefaultCheckoutExpiry)
	set(&o.Retention, DefaultRetention)
	set(&o.Lease, DefaultLease)
	set(&o.StorePollInterval, DefaultStorePollInterval)
	set(&o.RunInterval, DefaultRunInterval)
	o.MaxPollInterval = max(o.MaxPollInterval, o.PollInterval)
	if o.MaxTracked <= 0 {
		o.MaxTracked = DefaultMaxTracked
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.RunConcurrency <= 0 {
		o.RunConcurrency = DefaultRunConcurrency
	}
	set(&o.StoreTimeout, DefaultStoreTimeout)
	set(&o.OnOutcomeTimeout, DefaultOnOutcomeTimeout)
	if o.ReportConcurrency <= 0 {
		o.ReportConcurrency = o.RunConcurrency
	}
	if o.deadline == nil {
		o.shared = newSharedDeadlines(time.Now, context.WithTimeout)
		o.deadline = o.shared.deadline
	}
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Owner == "" {
		o.Owner = randomOwner()
	}
	return o
}

// randomOwner names an instance that was given no Owner.
func randomOwner() string {
	b := make([]byte, 12)
	_, _ = crand.Read(b) // never fails (crypto/rand)
	return "tracker-" + hex.EncodeToString(b)
}

// Tracker resolves the final state of money movements the way the service asks: it waits
// for the callback, and if none has arrived CallbackWait after the movement started, it
// polls the status check with backoff. Feed it callbacks with Deliver, or mount Handler
// at the callback URL. It is safe for concurrent use by many goroutines.
//
// It keeps what it learns in its Store: with a shared one (package pgstore), several
// instances of a server resolve movements together and a restart forgets nothing. Record
// each movement before sending it (Track, or the Tracker's Send, Receive, SendToBank,
// Charge, CreateMandate and CreateCheckout, which track, then send), and call Run on
// every instance.
//
// A success is never downgraded: a failure reported later for the same reference (a
// stale or forged callback, a late status check) does not change it. A callback that
// arrives before Await is kept.
type Tracker struct {
	client *Client
	opts   TrackerOptions
	store  *storeGate // every store call passes it
	kit    storekit.Store
	// own is true when store is this Tracker's private in-memory store: no other
	// instance writes to it, so Await need not poll it, and with no OnOutcome its
	// outcomes count as reported at once, so that it may forget them.
	own bool

	mu        sync.Mutex
	watches   map[movementKey]*keyWatch // keys being awaited in this process
	lastPurge time.Time

	panicked panicNote  // a panic recovered on a goroutine of Run, for Run to return
	lost     lostTracks // Track calls whose answer was lost
}

// keyWatch wakes this process's Awaits of one key when this process settles it.
type keyWatch struct {
	ch      chan struct{} // closed at the next settle, then replaced
	waiters int
}

// NewTracker returns a Tracker that asks c's status checks. c needs client credentials,
// and a disbursement account (WithDisbursementAccount) to check bank transfers. It
// hands opts.Clock to a store that takes one (storekit.ClockUser).
//
// NewTracker panics when c is nil, and with the store's error when the store cannot
// follow opts.Clock (pgstore follows one clock: another Tracker's, or its
// Options.Clock): a Tracker without a Client could check no status, one whose store
// reads another clock would never see its due times come, and both mistakes are the
// caller's code, found at construction rather than at the first callback or never.
func NewTracker(c *Client, opts TrackerOptions) *Tracker {
	if c == nil {
		panic("billing: NewTracker needs a Client")
	}
	handClock(opts.Store, opts.Clock)
	opts = opts.withDefaults()
	opts.Logger = scrubLogger(opts.Logger, c.scrub)
	t := &Tracker{client: c, opts: opts, kit: boundStore(opts.Store, opts), watches: make(map[movementKey]*keyWatch)}
	if t.kit == nil {
		t.kit, t.own = storekit.NewMemoryStore(storekit.MemoryStoreOptions{MaxMovements: opts.MaxTracked, MaxBytes: opts.MaxBytes}), true
	}
	t.store = gateOf(t.kit)
	return t
}

// Store returns the store the Tracker keeps its movements in: TrackerOptions.Store, each
// call bounded by StoreTimeout as the Tracker's own are, or its own in-memory one.
func (t *Tracker) Store() storekit.Store { return t.kit }

// Track records, in the Tracker's store, that the money movement of the given kind and
// client reference is about to be sent: call it before sending the request (the Send,
// Receive, SendToBank, Charge, CreateMandate and CreateCheckout methods of the Tracker
// do both). Then a crash right after sending cannot forget the movement: Run, on any
// instance, asks its status check once CallbackWait has passed without a callback.
// Track is idempotent: tracking the same movement again (same kind; see TrackAmount
// for the amount) changes nothing and returns nil, so after an error, whose commit may
// have been stored all the same (its answer lost), call it again before sending. Another
// movement under the same key (another kind sharing the callback shape, or another
// amount or currency) is refused with ErrAlreadyTracked. Until a call returns nil, do not
// send. Prefer TrackAmount, which also guards the amount.
func (t *Tracker) Track(ctx context.Context, kind Kind, clientReference string) error {
	return t.trackSame(ctx, kind, clientReference, Money{})
}

// TrackAmount is Track recording also the amount and currency the movement asks to move
// (minor units; a zero Amount or an empty Currency is not compared). A success whose
// status check names another amount or currency is then never reported as a plain
// success: it settles EventMismatched, the money moved but not as asked (a reused
// reference answering with an older movement's truth, say).
func (t *Tracker) TrackAmount(ctx context.Context, kind Kind, clientReference string, amount Money) error {
	if amount.Amount < 0 {
		return invalid("amount", "must not be negative")
	}
	return t.trackSame(ctx, kind, clientReference, amount)
}

// trackSame tracks the movement, or finds it tracked already as the same movement: the
// same kind, and the same amount and currency where both name one.
func (t *Tracker) trackSame(ctx context.Context, kind Kind, clientReference string, amount Money) error {
	m, created, err := t.track(ctx, kind, clientReference, amount, false)
	if err != nil || created {
		return err
	}
	// track refused another kind already; the amount and currency are left.
	differs := func(a, b int64) bool { return a != 0 && b != 0 && a != b }
	if differs(m.Amount, amount.Amount) ||
		(m.Currency != "" && amount.Currency != "" && !strings.EqualFold(m.Currency, amount.Currency)) {
		return fmt.Errorf("%w: %q is tracked as another movement (%s %s), not %s %s", ErrAlreadyTracked, clientReference,
			m.Kind, Money{m.Amount, m.Currency}, kind, amount)
	}
	return nil
}

// track records the movement and returns it as stored, and whether this call tracked it.
//
// sending says the caller sends the movement's request next: an outcome the store holds
// already under the key then belongs to another movement (this one has not been sent),
// and tracking is refused before anything is recorded, so that outcome is never
// reported as this movement's.
func (t *Tracker) track(ctx context.Context, kind Kind, clientReference string, amount Money, sending bool) (movement, bool, error) {
	if ctx == nil {
		return movement{}, false, errNilContext()
	}
	if _, err := keyOf(kind, clientReference); err != nil {
		return movement{}, false, err
	}
	// refused says why what the key holds is not this movement.
	refused := func(e entry) error {
		if err := heldAsOther(e, kind, clientReference); err != nil {
			return err
		}
		if sending && !e.Tracked && e.Final != nil {
			return fmt.Errorf("%w: %q has an outcome already, another movement's", ErrAlreadyTracked, clientReference)
		}
		return nil
	}
	now := t.opts.Clock.Now()
	currency := strings.ToUpper(amount.Currency)
	if currency == "" && amount.Amount != 0 {
		// The spec's default currency is a fact of the movement, compared with the
		// status check's like one the merchant named.
		currency = defaultCurrency
	}
	mv := t.lost.retry(movement{Kind: kind, ClientReference: clientReference, Amount: amount.Amount,
		Currency: currency, StartedAt: now, Deadline: now.Add(t.opts.CallbackWait), TrackID: newTrackID()})
	var m movement
	var created bool
	if trackIt := t.store.trackEntry(sending); trackIt != nil {
		// The store refuses in the same call what refused does, and says what the key
		// holds: no read first.
		e, c, err := trackIt(ctx, mv)
		if err != nil {
			t.lost.note(mv, err)
			return movement{}, false, fmt.Errorf("billing: tracking %s %q: %w", kind, clientReference, err)
		}
		if !c {
			if err := refused(e); err != nil {
				return movement{}, false, err
			}
		}
		m, created = e.Movement, c
	} else {
		// Asking first keeps a store whose Track refuses nothing safe.
		key, _ := keyOf(kind, clientReference)
		e, err := t.store.Get(ctx, key)
		if err != nil {
			return movement{}, false, fmt.Errorf("billing: tracking %s %q: %w", kind, clientReference, err)
		}
		if err := refused(e); err != nil {
			return movement{}, false, err
		}
		if m, created, err = t.store.Track(ctx, mv); err != nil {
			t.lost.note(mv, err)
			return movement{}, false, fmt.Errorf("billing: tracking %s %q: %w", kind, clientReference, err)
		}
	}
	t.purgeOwn(ctx)
	if !created && m.Kind != kind { // tracked by another instance between the read and Track
		return movement{}, false, fmt.Errorf("%w: %q is another movement's", ErrAlreadyTracked, clientReference)
	}
	return m, created, nil
}

// defaultCurrency is the currency of a movement whose params name none (the spec's
// default for receive and checkout; the service moves no other).
const defaultCurrency = "GHS"

// forgottenError is the error of tracking a movement its store forgot after Retention.
func forgottenError(kind Kind, clientReference string) error {
	return fmt.Errorf("%w: %s %q was settled, reported and forgotten: its outcome is not asked or reported again", ErrForgotten, kind, clientReference)
}

// Await returns the outcome of the money movement of the given kind and client
// reference. It returns as soon as the Tracker's store holds the final outcome (at once
// if it already does), whichever instance learned it: from a callback, or from a status
// check of Run, possibly before OnOutcome has been called for it or has committed. If
// none has come CallbackWait after the movement started (see Track), it asks the status check
// itself, then again with growing pauses, until a final state, the end of ctx, or the
// give-up limit.
//
// The error is nil exactly when the outcome is final. Without a final state Await
// returns what it knows, State EventPending, with an error matching ErrStillPending (and
// ctx's error, or the last status check's). It never reports a failure it did not learn.
// A status check the service refuses (bad credentials, a missing disbursement account)
// ends Await with that error, as does a store that cannot be read.
//
// A checkout still unpaid CheckoutExpiry after its creation is settled expired by the
// status check that finds it so (unknown when the service never showed the session), as
// Run settles it.
//
// A movement settled, reported and then forgotten after Retention is not tracked again:
// Await returns nil and an error matching ErrForgotten, since its outcome was reported,
// whatever outcome a callback delivered again settled beside it since. A reference
// tracked, or settled, as another kind sharing the kind's callback (a receive and a
// direct debit, a send and a bank transfer) holds no movement of the kind asked: Await
// returns nil and an error matching ErrAlreadyTracked, asking nothing.
//
// A reference the store has never tracked (a typo, or a movement sent outside the
// Tracker) is refused at once with an error matching ErrNotTracked, rather than polled
// until the give-up limit: to await a movement sent with the Client's own calls, adopt
// it first with Track (or TrackAmount), then Await it. An outcome a callback already
// settled for the reference is returned all the same.
//
// To resolve an ErrOutcomeUnknown from a money movement, await its ClientReference.
func (t *Tracker) Await(ctx context.Context, kind Kind, clientReference string) (*Outcome, error) {
	if ctx == nil {
		return nil, errNilContext()
	}
	key, err := keyOf(kind, clientReference)
	if err != nil {
		return nil, err
	}
	w := t.watch(key)
	defer t.unwatch(key, w)

	pending := &Outcome{Kind: kind, ClientReference: clientReference, State: EventPending}
	stillPending := func() (*Outcome, error) {
		return pending, fmt.Errorf("%w: %w", ErrStillPending, ctx.Err())
	}
	e, err := t.store.Get(ctx, key)
	if err != nil {
		return pending, fmt.Errorf("billing: reading the tracker's store: %w", err)
	}
	if o, done, err := awaitAnswer(e, kind, clientReference); done {
		return o, err
	}
	if !e.Tracked {
		// A typo, or a movement sent outside the Tracker: asking its status check until the
		// give-up limit would only say "still pending". Track adopts the latter.
		return nil, fmt.Errorf("%w: %s %q: track it first (Track, or the Tracker's send helpers); a movement sent outside the Tracker is adopted by Track, then awaited",
			ErrNotTracked, kind, clientReference)
	}
	m := e.Movement
	giveUp := m.Deadline.Add(t.opts.GiveUpAfter)
	next := m.Deadline // when to ask the status check
	interval := t.opts.PollInterval
	var lastErr error
	for {
		settled := t.changes(w) // before reading the store, so no settle is missed
		e, err := t.store.Get(ctx, key)
		if o, done, aerr := awaitAnswer(e, kind, clientReference); err == nil && done {
			return o, aerr
		}
		switch {
		case ctx.Err() != nil:
			return stillPending()
		case err != nil:
			return pending, fmt.Errorf("billing: reading the tracker's store: %w", err)
		}
		now := t.opts.Clock.Now()
		if now.Before(next) {
			wake := next
			if !t.own { // another instance may settle it: look again soon
				wake = minTime(next, now.Add(t.opts.StorePollInterval))
			}
			_ = t.sleepUntil(ctx, wake, settled) // the loop reads ctx
			continue
		}
		if e.Tracked {
			m = e.Movement // with the service's reference once recorded
		}
		o, err := movementStatus(ctx, t.client, m)
		t.observeStatusCheck(ctx, kind, clientReference, o, err)
		if final := t.checkoutGivenUp(m, o, err, t.opts.Clock.Now()); final != nil && ctx.Err() == nil {
			o, err = final, nil // as Run would settle it
		}
		switch {
		case err == nil && o.IsFinal():
			o.At = t.opts.Clock.Now()
			if _, err := t.settle(ctx, key, *o, nil); err != nil {
				return pending, err
			}
			continue // the final outcome, or a callback's success that came meanwhile
		case err == nil:
			o.At = t.opts.Clock.Now()
			pending, lastErr = o, nil
		case ctx.Err() != nil:
			return stillPending()
		case !worthPollingAgain(err):
			return pending, err
		default:
			lastErr = err
			t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing status check failed; polling again",
				slog.String("kind", string(kind)), slog.String("clientReference", clientReference), slog.String("error", err.Error()))
		}
		now = t.opts.Clock.Now()
		if !now.Before(giveUp) {
			// A callback may have settled it while the last status check ran.
			if e, err := t.store.Get(ctx, key); err == nil {
				if o, done, err := awaitAnswer(e, kind, clientReference); done {
					return o, err
				}
			}
			if lastErr != nil {
				return pending, fmt.Errorf("%w at the give-up limit; last status check: %w", ErrStillPending, lastErr)
			}
			return pending, fmt.Errorf("%w at the give-up limit", ErrStillPending)
		}
		next = now.Add(min(jitter(interval), giveUp.Sub(now)))
		interval = min(2*interval, t.opts.MaxPollInterval)
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// heldAsOther says why the entry of a key holds no movement of kind, for Track and
// Await alike: ErrForgotten for a movement forgotten after Retention (even with an
// outcome kept beside its tombstone since), ErrAlreadyTracked for a movement tracked, or
// an outcome settled, as another kind sharing its callback. Nil when it may be kind's.
func heldAsOther(e entry, kind Kind, clientReference string) error {
	switch {
	case e.Forgotten:
		return forgottenError(kind, clientReference)
	case e.Tracked && e.Movement.Kind != kind:
		return fmt.Errorf("%w: %q is tracked as a %s, not a %s", ErrAlreadyTracked, clientReference, e.Movement.Kind, kind)
	case !e.Tracked && settledAsOther(e.Final, kind):
		return fmt.Errorf("%w: %q is settled as a %s, not a %s", ErrAlreadyTracked, clientReference, e.Final.Outcome.Kind, kind)
	}
	return nil
}

// awaitAnswer is what Await answers from the entry of its key without waiting: the
// final outcome when the key holds one of the kind asked, or heldAsOther's error with no
// outcome: another movement's is never told as the one asked. done is false when Await
// must wait.
func awaitAnswer(e entry, kind Kind, clientReference string) (o *Outcome, done bool, err error) {
	if err := heldAsOther(e, kind, clientReference); err != nil {
		return nil, true, err
	}
	if e.Final != nil {
		return settledOutcome(e.Final, kind), true, nil
	}
	return nil, false, nil
}

// sleepUntil waits until the clock reaches at or done is closed (nil), or ctx ends (its
// error). A clock may wake it early or jump while a timer is being set, so it reads the
// time again around every timer.
func (t *Tracker) sleepUntil(ctx context.Context, at time.Time, done <-chan struct{}) error {
	for {
		now := t.opts.Clock.Now()
		if !now.Before(at) {
			return nil
		}
		timer := t.opts.Clock.After(at.Sub(now))
		if !t.opts.Clock.Now().Before(at) {
			return nil // the time moved on while the timer was set
		}
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-timer:
		}
	}
}

// jitter spreads the pauses of many Awaits over [3/4·d, d], so they do not poll in step.
func jitter(d time.Duration) time.Duration {
	return d - rand.N(d/4+1)
}

// worthPollingAgain reports whether another status check may answer differently: not
// after invalid input or a refusal of the credentials, yes after a transport failure, a
// 5xx, a 429, a 404 (the movement may not be recorded yet), or response code 0005 (the
// service could not reach the network: the state is unknown, not refused).
func worthPollingAgain(err error) bool {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return false
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		s := apiErr.StatusCode
		return s == http.StatusNotFound || s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500 ||
			apiErr.Code == CodeConnectionError
	}
	return true
}

// watch counts one more Await of key in this process.
func (t *Tracker) watch(key movementKey) *keyWatch {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.watches[key]
	if w == nil {
		w = &keyWatch{ch: make(chan struct{})}
		t.watches[key] = w
	}
	w.waiters++
	return w
}

func (t *Tracker) unwatch(key movementKey, w *keyWatch) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w.waiters--
	if w.waiters == 0 {
		delete(t.watches, key)
	}
}

// changes returns the channel closed at w's next settle.
func (t *Tracker) changes(w *keyWatch) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return w.ch
}
