package billing_test

import (
	"fmt"

	billing "github.com/billingsdk/billing-go"
)

// A program that prints beside the SDK (a command line, an operator's page) masks its
// own text with the Client's Scrubber, or one made from the secrets it holds.
func ExampleNewScrubber() {
	s := billing.NewScrubber("cid-7f3a9c21", "cs-Qm4xT9vLp2")
	fmt.Println(s.Text("refused cid-7f3a9c21 (Y2lkLTdmM2E5YzIxOmNzLVFtNHhUOXZMcDI=) for msisdn=%2B233241239876"))
	fmt.Println(s.Text("this endpoint takes Basic client credentials or a Bearer API key"))
	// Output:
	// refused [redacted] ([redacted]) for msisdn=%2B*********876
	// this endpoint takes Basic client credentials or a Bearer API key
}
