package billing

// MetersService defines usage meters and records usage events (SPEC "Meters and usage events").
type MetersService service
