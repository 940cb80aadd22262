package billing

// errNilContext is the error of an exported call given a nil context, returned before
// anything else happens: a nil context would otherwise panic deep in net/http or a
// Store, on the caller's goroutine or on one of the SDK's own.
func errNilContext() error {
	return invalid("ctx", "must not be nil: pass context.Background() or the context of the work at hand")
}
