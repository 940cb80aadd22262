package pgstore

// Migrations exposes the schema's versions to the tests, which build older schemas.
var Migrations = migrations
