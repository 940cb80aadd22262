module github.com/billingsdk/billing-go/pgstore

go 1.24

require (
	github.com/billingsdk/billing-go v0.0.0
	github.com/jackc/pgx/v5 v5.7.5
	github.com/lib/pq v1.10.9
)

require (
	github.com/google/go-querystring v1.2.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	golang.org/x/crypto v0.37.0 // indirect
	golang.org/x/sync v0.13.0 // indirect
	golang.org/x/text v0.24.0 // indirect
)

replace github.com/billingsdk/billing-go => ../
