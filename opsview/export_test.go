package opsview

// Routes lists the view's pages and whether each changes state, for the tests that drive
// every one of them.
func Routes() map[string]bool {
	out := map[string]bool{}
	for page, rt := range routes {
		out[page] = rt.post
	}
	return out
}
