package billing

// PaymentsService takes money in: hosted checkout sessions and the mobile-money prompt (SPEC "Hosted checkout", "Direct receive").
type PaymentsService service
