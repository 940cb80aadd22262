package billing

// LicensesService issues, validates, activates, modifies and revokes license keys (SPEC "Licenses").
type LicensesService service
