package billing

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
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
	DefaultCallbackWait    = 5 * time.Minute
	DefaultPollInterval    = 15 * time.Second
	DefaultMaxPollInterval = 2 * time.Minute
	DefaultGiveUpAfter     = time.Hour
	DefaultRetention       = time.Hour
	DefaultMaxTracked      = 100_000
	DefaultMaxBytes        = 64 << 20
)

// TrackerOptions configures a Tracker. Zero fields take the defaults.
type TrackerOptions struct {
	// CallbackWait is how long to wait for the callback, from the first Await of a
	// reference, before asking the status check (SPEC: 5 minutes).
	CallbackWait time.Duration
	// PollInterval is the first pause between status checks that say pending; each
	// pause doubles, up to MaxPollInterval.
	PollInterval    time.Duration
	MaxPollInterval time.Duration
	// GiveUpAfter bounds the polling: after CallbackWait plus GiveUpAfter, Await returns
	// the pending outcome with ErrStillPending.
	GiveUpAfter time.Duration
	// Retention is how long a reference nobody awaits is remembered (its outcome, or its
	// start), so that an Await after the callback, or a second Await, still finds it.
	Retention time.Duration
	// MaxTracked caps the references remembered; beyond it the ones idle longest are
	// forgotten first. References being awaited are never forgotten.
	MaxTracked int
	// MaxBytes caps the memory, in bytes, of what is remembered: references and the
	// callbacks kept with their outcomes (a callback may carry up to MaxEventBytes).
	// Beyond it, as beyond MaxTracked, the references idle longest are forgotten first.
	MaxBytes int
	// Clock is the time source; nil is the wall clock.
	Clock Clock
	// Logger receives the Tracker's logs: contradictory callbacks and failing status
	// checks. Nil is silent.
	Logger *slog.Logger
	// Observer is told of callbacks received, status checks asked and outcomes settled,
	// for metrics; nil tells no one.
	Observer TrackerObserver
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
	set(&o.Retention, DefaultRetention)
	o.MaxPollInterval = max(o.MaxPollInterval, o.PollInterval)
	if o.MaxTracked <= 0 {
		o.MaxTracked = DefaultMaxTracked
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Tracker resolves the final state of money movements the way the spec asks: it waits
// for the callback, and if none has arrived CallbackWait after the movement started, it
// polls the status check with backoff. Feed it callbacks with Deliver, or mount Handler
// at the callback URL. It is safe for concurrent use by many goroutines.
//
// A success is never downgraded: a failure reported later for the same reference (a
// stale or forged callback, a late status check) does not change it. A callback that
// arrives before Await is kept.
type Tracker struct {
	client *Client
	opts   TrackerOptions

	mu      sync.Mutex
	entries map[trackKey]*tracked
	idle    *list.List // of *tracked nobody awaits, longest idle first
	bytes   int        // the sum of the entries' sizes
	pending pendingMovements
}

// trackKey names a movement as its callbacks do: the shape of the callback and the
// client reference.
type trackKey struct {
	callback  EventKind
	reference string
}

// tracked is the Tracker's memory of one reference.
type tracked struct {
	key     trackKey
	started time.Time     // the first Await, or the callback that came first
	outcome *Outcome      // the final outcome; nil until known
	done    chan struct{} // closed when outcome is set
	// hints counts the unconfirmed callbacks claiming a final state; each closes wake
	// (and replaces it) so that Awaits ask the status check at once.
	hints   uint64
	wake    chan struct{}
	waiters int
	idleAt  time.Time
	idleEl  *list.Element // in Tracker.idle while waiters == 0
	size    int           // the bytes this entry holds, as counted in Tracker.bytes
}

// entryOverhead is what an entry costs besides its reference and callback: the struct,
// its map slot, list element and channels, rounded up.
const entryOverhead = 512

// sizeOf estimates the bytes an entry holds: its overhead, its reference and the callback
// kept with its outcome, as encoded.
func sizeOf(e *tracked) int {
	n := entryOverhead + len(e.key.reference)
	if e.outcome != nil && e.outcome.Event != nil {
		if b, err := json.Marshal(e.outcome.Event); err == nil {
			n += len(b)
		}
	}
	return n
}

// NewTracker returns a Tracker that asks c's status checks. c needs client credentials,
// and a disbursement account (WithDisbursementAccount) to check bank transfers.
func NewTracker(c *Client, opts TrackerOptions) *Tracker {
	return &Tracker{
		client:  c,
		opts:    opts.withDefaults(),
		entries: make(map[trackKey]*tracked),
		idle:    list.New(),
	}
}

// Track records that the money movement of the given kind and client reference has just
// been initiated, so that CallbackWait counts from now even when Await is called later
// (say, from another request of your server). Without Track the wait counts from the
// first Await. Tracking a reference already known changes nothing.
func (t *Tracker) Track(kind Kind, clientReference string) error {
	key, err := trackKeyOf(kind, clientReference)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entryLocked(key)
	t.evictLocked()
	return nil
}

// trackKeyOf checks an Await's or Track's arguments and returns their key.
func trackKeyOf(kind Kind, clientReference string) (trackKey, error) {
	callback, ok := kind.callbackKind()
	if !ok {
		return trackKey{}, invalid("kind", fmt.Sprintf("unknown kind %q: use KindReceive, KindSend, KindBankTransfer, KindDirectDebit or KindMandate", kind))
	}
	// No movement has a longer reference or other characters; refusing them keeps the
	// memory of each entry small.
	if err := lookupReference("clientReference", clientReference, maxClientReference); err != nil {
		return trackKey{}, err
	}
	return trackKey{callback, clientReference}, nil
}

// Await returns the outcome of the money movement of the given kind and client
// reference. It returns as soon as the callback arrives (or at once if it already has).
// If none has arrived CallbackWait after the movement started (see Track; otherwise the
// first Await of the reference), it asks the status check, then again with growing
// pauses, until a final state, the end of ctx, or the give-up limit.
//
// The error is nil exactly when the outcome is final. Without a final state Await
// returns what it knows, State EventPending, with an error matching ErrStillPending (and
// ctx's error, or the last status check's). It never reports a failure it did not learn.
// A status check the service refuses (bad credentials, a missing disbursement account)
// ends Await with that error.
//
// To resolve an ErrOutcomeUnknown from a money movement, await its ClientReference.
func (t *Tracker) Await(ctx context.Context, kind Kind, clientReference string) (*Outcome, error) {
	key, err := trackKeyOf(kind, clientReference)
	if err != nil {
		return nil, err
	}
	e := t.join(key)
	defer t.leave(e)

	pending := &Outcome{Kind: kind, ClientReference: clientReference, State: EventPending}
	stillPending := func() (*Outcome, error) {
		return pending, fmt.Errorf("%w: %w", ErrStillPending, ctx.Err())
	}
	giveUp := e.started.Add(t.opts.CallbackWait + t.opts.GiveUpAfter)
	next := e.started.Add(t.opts.CallbackWait) // when to ask the status check
	interval := t.opts.PollInterval
	var lastErr error
	var hintsSeen uint64
	var lastCheck time.Time
	for {
		// A callback claiming a final state is a hint: ask the status check now rather
		// than at the planned time, but not more often than PollInterval, so that a
		// flood of forged callbacks cannot turn into a flood of status checks.
		hints, wake := t.hintsOf(e)
		if hints != hintsSeen {
			hintsSeen = hints
			soonest := t.opts.Clock.Now()
			if !lastCheck.IsZero() {
				soonest = later(soonest, lastCheck.Add(t.opts.PollInterval))
			}
			next = earlier(next, soonest)
		}
		slept := t.sleepUntil(ctx, next, e.done, wake)
		if o := t.final(e, kind); o != nil {
			return o, nil
		}
		if slept != nil {
			return stillPending()
		}
		if t.opts.Clock.Now().Before(next) {
			continue // woken by a hint
		}
		lastCheck = t.opts.Clock.Now()
		o, err := statusOutcome(ctx, t.client, kind, clientReference)
		t.observeStatusCheck(ctx, kind, clientReference, o, err)
		switch {
		case err == nil && o.IsFinal():
			o.At = t.opts.Clock.Now()
			t.resolve(e.key, o)
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
		now := t.opts.Clock.Now()
		if !now.Before(giveUp) {
			if lastErr != nil {
				return pending, fmt.Errorf("%w at the give-up limit; last status check: %w", ErrStillPending, lastErr)
			}
			return pending, fmt.Errorf("%w at the give-up limit", ErrStillPending)
		}
		next = now.Add(min(jitter(interval), giveUp.Sub(now)))
		interval = min(2*interval, t.opts.MaxPollInterval)
	}
}

// sleepUntil waits until the clock reaches at or done or wake is closed (nil), or ctx
// ends (its error). A clock may wake it early or jump while a timer is being set, so it
// reads the time again around every timer.
func (t *Tracker) sleepUntil(ctx context.Context, at time.Time, done, wake <-chan struct{}) error {
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
		case <-wake:
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

// Deliver gives the Tracker a parsed callback that nobody has confirmed. Nothing in a
// callback is signed, so it settles nothing by itself: a callback of a transaction, a
// payout or a mandate claiming a final state makes the Awaits of its reference ask the
// status check at once (or, for a reference not awaited yet, at the first Await), and the
// status check's answer settles the outcome. Pending callbacks and other events are
// ignored, as are references no movement can have.
//
// Handler confirms each callback itself, and settles the outcome with the status
// check's truth without a second request: mount it rather than calling Deliver where you
// can.
func (t *Tracker) Deliver(ev Event) {
	t.deliver(context.Background(), ev) // Deliver has no context of its own
}

// deliver takes an unconfirmed callback as a hint (see Deliver).
func (t *Tracker) deliver(ctx context.Context, ev Event) {
	if isMovementCallback(ev) {
		t.observeCallback(ctx, ev)
	}
	key, ok := deliveredKey(ev)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entryLocked(key)
	e.hints++
	close(e.wake)
	e.wake = make(chan struct{})
	t.evictLocked()
}

// deliveredKey returns the key of a callback that claims a final state of a movement,
// or false for any other event.
func deliveredKey(ev Event) (trackKey, bool) {
	if !isMovementCallback(ev) {
		return trackKey{}, false
	}
	if ev.State() == EventPending || lookupReference("reference", ev.Reference(), maxClientReference) != nil {
		return trackKey{}, false
	}
	return trackKey{ev.Kind(), ev.Reference()}, true
}

// Handler returns an http.Handler for the callback URLs (see NewWebhookHandler for the
// answers it gives). It confirms every callback claiming a final state with the status
// check through the Tracker's client, then settles the outcome with the status check's
// truth: a forged success or a forged failure settles nothing, and its sender is told
// 403 or 503. Options add to this (WithDedupe, WithWebhookLogger); a
// WithStatusCheckConfirmation among them replaces the Tracker's client.
func (t *Tracker) Handler(opts ...WebhookOption) http.Handler {
	opts = append([]WebhookOption{WithStatusCheckConfirmation(t.client)}, opts...)
	return NewWebhookHandler(func(ctx context.Context, ev Event) error {
		if o := confirmedOutcome(ctx); o != nil {
			t.observeCallback(ctx, ev)
			settled := *o
			settled.At = t.opts.Clock.Now()
			t.resolve(trackKey{ev.Kind(), ev.Reference()}, &settled)
			return nil
		}
		t.deliver(ctx, ev)
		return nil
	}, opts...)
}

// hintsOf returns how many hints e has had and the channel the next one closes.
func (t *Tracker) hintsOf(e *tracked) (uint64, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return e.hints, e.wake
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// join finds or starts the memory of key and counts one more waiter on it.
func (t *Tracker) join(key trackKey) *tracked {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entryLocked(key)
	e.waiters++
	if e.idleEl != nil {
		t.idle.Remove(e.idleEl)
		e.idleEl = nil
	}
	return e
}

// leave counts one waiter less; an entry nobody awaits becomes idle.
func (t *Tracker) leave(e *tracked) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.waiters--
	if e.waiters == 0 {
		t.idleLocked(e)
	}
	t.evictLocked()
}

// entryLocked returns the memory of key, starting one now if there is none.
func (t *Tracker) entryLocked(key trackKey) *tracked {
	e := t.entries[key]
	if e == nil {
		e = &tracked{key: key, started: t.opts.Clock.Now(), done: make(chan struct{}), wake: make(chan struct{})}
		e.size = sizeOf(e)
		t.bytes += e.size
		t.entries[key] = e
		t.pendingStartedLocked(e)
		t.idleLocked(e)
	}
	return e
}

func (t *Tracker) idleLocked(e *tracked) {
	if e.idleEl != nil {
		t.idle.Remove(e.idleEl)
	}
	e.idleAt = t.opts.Clock.Now()
	e.idleEl = t.idle.PushBack(e)
}

// evictLocked forgets idle entries older than the retention window, and the longest idle
// ones while more than MaxTracked are remembered or they hold more than MaxBytes.
func (t *Tracker) evictLocked() {
	now := t.opts.Clock.Now()
	for front := t.idle.Front(); front != nil; front = t.idle.Front() {
		e := front.Value.(*tracked)
		if len(t.entries) <= t.opts.MaxTracked && t.bytes <= t.opts.MaxBytes && now.Sub(e.idleAt) < t.opts.Retention {
			return
		}
		t.idle.Remove(front)
		e.idleEl = nil
		delete(t.entries, e.key)
		t.bytes -= e.size
		if e.outcome == nil {
			t.pendingEndedLocked()
		}
	}
}

// resolve records a final outcome for key under the rules of precedence: the first final
// state stands, except that a success replaces a failure; nothing replaces a success.
func (t *Tracker) resolve(key trackKey, o *Outcome) {
	var settled *Outcome
	defer func() { t.observeSettled(context.Background(), settled) }() // after the unlock
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entryLocked(key)
	switch {
	case e.outcome == nil:
		e.outcome = o
		settled = t.forObserver(o)
		t.pendingEndedLocked()
		close(e.done)
	case e.outcome.Succeeded():
		if o.Failed() {
			t.opts.Logger.Warn("billing: a failure reported after a success was ignored",
				slog.String("clientReference", key.reference), slog.String("source", string(o.Source)), slog.String("code", string(o.Code)))
		}
	case o.Succeeded():
		t.opts.Logger.Warn("billing: a success reported after a failure replaces it",
			slog.String("clientReference", key.reference), slog.String("source", string(o.Source)))
		e.outcome = o
		settled = t.forObserver(o)
	}
	t.resizeLocked(e)
	if e.waiters == 0 {
		t.idleLocked(e)
	}
	t.evictLocked()
}

// resizeLocked counts e's size again after its outcome changed.
func (t *Tracker) resizeLocked(e *tracked) {
	t.bytes -= e.size
	e.size = sizeOf(e)
	t.bytes += e.size
}

// final returns a copy of e's final outcome for an Await of kind, or nil while there is
// none.
func (t *Tracker) final(e *tracked, kind Kind) *Outcome {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.outcome == nil {
		return nil
	}
	o := *e.outcome
	o.Kind = kind
	return &o
}
