package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestExampleRuns(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"Name": "billing POST /v1/payments/receive"`,    // the call
		`"Name": "POST /v1/payments/receive"`,            // its attempt
		`"Name": "billing GET /v1/payments/{reference}"`, // the confirmation's status check
		`"Name": "order 1042"`,
		`"Key": "billing.response_code"`,
		`"Name": "billing.tracker.outcomes"`,
		`"Name": "billing.tracker.callbacks"`,
		`"Name": "billing.tracker.movements.pending"`,
		"order1042: succeeded by callback, GHS 50.00",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %s", want)
		}
	}
}
