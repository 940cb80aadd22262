package sandbox

import (
	"net/http"
	"time"
)

// maxAdvanceSeconds bounds one clock move to 100 years, far inside time.Duration.
const maxAdvanceSeconds = 100 * 365 * 24 * 60 * 60

// controlRoutes are the sandbox-only controls under /sandbox/, taking the
// same credentials as the billing resources and no scope (DESIGN "The sandbox").
func controlRoutes(s *Server) []route {
	return []route{
		{pattern: "POST /sandbox/clock/advance", auth: authBilling, handler: s.advanceClock},
	}
}

// clockView is the answer of a clock move.
type clockView struct {
	Now timestamp `json:"now"`
}

// advanceClock moves the sandbox clock by {"seconds": N} and answers the new
// time once the work that became due has run.
func (s *Server) advanceClock(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("seconds")
	seconds, _ := f.integerRange("seconds", 0, maxAdvanceSeconds)
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	s.Advance(time.Duration(seconds) * time.Second)
	writeData(w, http.StatusOK, clockView{Now: timestamp{s.Now()}})
}
