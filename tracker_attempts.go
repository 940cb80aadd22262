package billing

import (
	"errors"
	"time"

	"github.com/billingsdk/billing-go/storekit"
)

// This file is what the Tracker keeps of its tries that came back without settling a
// movement or being accepted (storekit.AttemptLog), for an operator to read: what each
// status check answered, why each report failed. Stores without the log keep the
// counts alone.

// checkAttempt is a status check that left its movement unsettled, answered o or err at
// at. The error's text is the scrubbed one, as every text the SDK lets out.
func (t *Tracker) checkAttempt(o *Outcome, err error, at time.Time) storekit.Attempt {
	a := storekit.Attempt{At: at}
	if err != nil {
		a.Error = t.Scrub(err.Error())
	} else if o != nil {
		a.Answer = string(o.State)
	}
	return a
}

// reportAttempt is a report of the movement key that failed with err at at.
func (t *Tracker) reportAttempt(key movementKey, err error, at time.Time) storekit.Attempt {
	return storekit.Attempt{Key: key.kit(), At: at, Error: t.Scrub(err.Error())}
}

// errReportGivenBack is a report's attempt not made: its instance stopped first.
var errReportGivenBack = errors.New("not made: the instance stopped and gave the report back")
