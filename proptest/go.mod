module github.com/billingsdk/billing-go/proptest

go 1.24

replace github.com/billingsdk/billing-go => ../

require (
	github.com/billingsdk/billing-go v0.0.0-00010101000000-000000000000
	pgregory.net/rapid v1.3.0
)

require (
	github.com/google/go-querystring v1.2.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
)
