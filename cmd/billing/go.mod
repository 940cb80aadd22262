module github.com/billingsdk/billing-go/cmd/billing

go 1.24

require (
	github.com/billingsdk/billing-go v0.0.0
	github.com/billingsdk/billing-go/pgstore v0.0.0
	github.com/jackc/pgx/v5 v5.7.5
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/google/go-querystring v1.2.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.37.0 // indirect
	golang.org/x/sync v0.13.0 // indirect
	golang.org/x/text v0.24.0 // indirect
)

replace (
	github.com/billingsdk/billing-go => ../..
	github.com/billingsdk/billing-go/pgstore => ../../pgstore
)
