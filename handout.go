package billing

// The last step of the inbound pipeline (DESIGN "One gate per boundary"): what leaves
// it. Merchant code is handed the event (call, settlesNothing); the sender is given its
// answer (writeReceived, refuse, refuseUnread); the log is told the event by
// eventAttrs, never its phone numbers.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
)

// settlesNothing gives an event that settles no movement to the merchant's event
// handler, or logs it at warning level when there is none: it is never dropped in
// silence.
func settlesNothing(ctx context.Context, ev Event, other func(context.Context, Event) error, logger *slog.Logger, msg string) error {
	if other != nil {
		return other(ctx, ev)
	}
	logger.LogAttrs(ctx, slog.LevelWarn, msg+"; no WithEventHandler takes it", eventAttrs(ev)...)
	return nil
}

// call runs the merchant's function, turning a panic into an error so that the event is
// forgotten and delivered again rather than lost. http.ErrAbortHandler keeps its meaning.
func (h *webhookHandler) call(ctx context.Context, ev Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return h.fn(ctx, ev)
}

// refuse answers status with its fixed body; "retry later" says when.
func refuse(w http.ResponseWriter, status int) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "60") // the status check, or the first copy, may be done by then
	}
	http.Error(w, refusalBodies[status], status)
}

// refusedClaimLog is the message logged when the status check does not confirm an event
// claiming a final state.
var refusedClaimLog = map[EventState]string{
	EventSucceeded: "billing webhook claiming success refused",
	EventFailed:    "billing webhook claiming failure refused",
}

// refusalBodies are the only words a refusal says to the sender, who is not
// authenticated: what to do next, never why in detail (the log has the detail, which may
// name internal addresses and errors).
var refusalBodies = map[int]string{
	http.StatusBadRequest:         "not a valid event",
	http.StatusForbidden:          "refused: the status check does not confirm this event",
	http.StatusServiceUnavailable: "not confirmed yet: deliver it again later",
}

func writeReceived(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"received":true}`)
}

// eventAttrs describe an event in a log line: kind, reference, state and code, never
// phone numbers.
func eventAttrs(ev Event) []slog.Attr {
	switch e := ev.(type) {
	case *UnconfirmedEvent:
		return []slog.Attr{
			slog.String("kind", string(e.ClaimedKind)),
			slog.String("reference", e.Reference()),
			slog.Bool("unconfirmed", true),
		}
	case *UntrackedMovementEvent:
		return []slog.Attr{
			slog.String("kind", string(e.Outcome.Kind)),
			slog.String("reference", e.Reference()),
			slog.String("state", string(e.State())),
			slog.String("code", string(e.Code())),
			slog.Int64("amount", e.Outcome.Amount),
			slog.Bool("untracked", true),
		}
	}
	return []slog.Attr{
		slog.String("kind", string(ev.Kind())),
		slog.String("reference", ev.Reference()),
		slog.String("state", string(ev.State())),
		slog.String("code", string(ev.Code())),
	}
}

// refuseUnread answers a body the gate or the shape refused: 400, or 403 for a
// contradiction, a claim the SDK cannot believe rather than one it cannot read. Nothing
// of it is recorded.
func refuseUnread(ctx context.Context, w http.ResponseWriter, logger *slog.Logger, err error) {
	logger.LogAttrs(ctx, slog.LevelWarn, "billing webhook refused", slog.String("error", err.Error()))
	status := http.StatusBadRequest
	if errors.Is(err, ErrContradiction) {
		status = http.StatusForbidden
	}
	refuse(w, status)
}

// handOut hands ev to the handler's function (under Tracker.Handler, the settle step and
// the merchant's event function) and answers the sender: 200 when it returned nil, 500
// when it failed or panicked, so the sender delivers the event again. It reports whether
// the event was handled.
func (h *webhookHandler) handOut(ctx context.Context, w http.ResponseWriter, ev Event) bool {
	if err := h.call(ctx, ev); err != nil {
		h.logger.LogAttrs(ctx, slog.LevelWarn, "billing webhook handler failed",
			append(eventAttrs(ev), slog.String("error", err.Error()))...)
		http.Error(w, "the event was not handled; deliver it again", http.StatusInternalServerError)
		return false
	}
	writeReceived(w)
	return true
}
