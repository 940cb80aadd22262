package billing_test

import (
	"testing"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) billing.Store { return billing.NewMemoryStore(0) })
}
