package billing

// PayoutsService sends money out: mobile-money payouts and send-to-bank (SPEC "Direct send", "Send-to-bank").
type PayoutsService service
