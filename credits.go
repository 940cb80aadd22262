package billing

// CreditsService runs the prepaid credit wallet of each customer (SPEC "Credit wallets").
type CreditsService service
