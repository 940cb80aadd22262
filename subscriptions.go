package billing

// SubscriptionsService subscribes customers to recurring prices (SPEC "Subscriptions").
type SubscriptionsService service
