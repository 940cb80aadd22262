package billing

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"sync"
)

// errNilContext is the error of an exported call given a nil context, returned before
// anything else happens: a nil context would otherwise panic deep in net/http or a
// Store, on the caller's goroutine or on one of the SDK's own.
func errNilContext() error {
	return invalid("ctx", "must not be nil: pass context.Background() or the context of the work at hand")
}

// nilEvent reports whether ev is nil, or a nil pointer of an event type, whose methods
// would panic.
func nilEvent(ev Event) bool {
	if ev == nil {
		return true
	}
	v := reflect.ValueOf(ev)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// recovered turns p, a panic recovered on a goroutine the SDK started, into an error, and
// logs it with its stack, scrubbed (the logger of a Client or Tracker scrubs every
// record): a panic there, in a Store, a handler of the merchant's or a bug of the SDK,
// would otherwise end the merchant's process, and no caller could catch it.
func recovered(logger *slog.Logger, where string, p any) error {
	var s *Scrubber // the error text knows the secrets the logger's scrubber knows
	if logger != nil {
		if h, ok := logger.Handler().(*scrubHandler); ok {
			s = h.scrub
		}
	}
	err := fmt.Errorf("billing: recovered a panic in %s: %s", where, s.Text(fmt.Sprint(p)))
	if logger != nil {
		logger.LogAttrs(context.Background(), slog.LevelError, "billing: recovered a panic",
			slog.String("where", where), slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
	}
	return err
}

// panicNote holds the first panic recovered on a goroutine of a Tracker's Run, until Run
// takes it and returns it.
type panicNote struct {
	mu  sync.Mutex
	err error
}

// recoverPanic is deferred first in every goroutine a Tracker starts for Run: it recovers
// a panic, logs it (recovered) and notes it, so that Run returns it as an error instead
// of the process crashing.
func (t *Tracker) recoverPanic(where string) {
	if p := recover(); p != nil {
		err := recovered(t.opts.Logger, where, p)
		t.panicked.mu.Lock()
		if t.panicked.err == nil {
			t.panicked.err = err
		}
		t.panicked.mu.Unlock()
	}
}

// takePanic returns the panic noted by recoverPanic, if any, and forgets it.
func (t *Tracker) takePanic() error {
	t.panicked.mu.Lock()
	defer t.panicked.mu.Unlock()
	err := t.panicked.err
	t.panicked.err = nil
	return err
}
