package billing

// MandatesService sets up direct-debit mandates and charges under them (SPEC "Direct debit mandates", "Direct debit charge").
type MandatesService service
