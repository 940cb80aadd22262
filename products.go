package billing

import (
	"context"
	"iter"
	"time"
)

// ProductsService keeps the catalog: products and their prices.
type ProductsService service

// ProductType is the kind of thing a product sells.
type ProductType string

// The product types. A product created without one is a service.
const (
	ProductTypeService ProductType = "SERVICE"
	ProductTypeGood    ProductType = "GOOD"
	ProductTypeDigital ProductType = "DIGITAL"
)

var productTypes = []ProductType{ProductTypeService, ProductTypeGood, ProductTypeDigital}

// PriceScheme is how a price turns a quantity into an amount.
type PriceScheme string

// The price schemes. A price created without one is flat.
const (
	PriceSchemeFlat    PriceScheme = "FLAT"
	PriceSchemePerUnit PriceScheme = "PER_UNIT"
	PriceSchemeTiered  PriceScheme = "TIERED"
	PriceSchemeVolume  PriceScheme = "VOLUME"
)

var priceSchemes = []PriceScheme{PriceSchemeFlat, PriceSchemePerUnit, PriceSchemeTiered, PriceSchemeVolume}

// PriceInterval is the unit of a recurring price's billing period.
type PriceInterval string

// The billing intervals of recurring prices.
const (
	PriceIntervalDay   PriceInterval = "DAY"
	PriceIntervalWeek  PriceInterval = "WEEK"
	PriceIntervalMonth PriceInterval = "MONTH"
	PriceIntervalYear  PriceInterval = "YEAR"
)

var priceIntervals = []PriceInterval{PriceIntervalDay, PriceIntervalWeek, PriceIntervalMonth, PriceIntervalYear}

// Bounds the service leaves open; the sandbox enforces the same (docs/sandbox.md
// "Products and prices").
const (
	// MaxIntervalCount is the largest number of intervals between renewals.
	MaxIntervalCount = 365
	// MaxTrialDays is the longest trial, in days, of a price or a subscription.
	MaxTrialDays = 730
)

// Product is a catalog entry.
type Product struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Type        ProductType `json:"type"`
	ImageURL    string      `json:"imageUrl,omitempty"`
	Metadata    Metadata    `json:"metadata,omitempty"`
	// Active is true until the product is archived.
	Active bool `json:"active"`
	// Prices are the product's prices; empty on a new product.
	Prices    []Price   `json:"prices"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// ProductSummary is a product as lists return it.
type ProductSummary struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Active      bool      `json:"active"`
	CreatedAt   time.Time `json:"createdAt,omitzero"`
}

// Price is what a product costs, once or every billing period.
type Price struct {
	ID       string `json:"id"`
	Nickname string `json:"nickname,omitempty"`
	Currency string `json:"currency"`
	// UnitAmount is in minor units (5000 is 50.00).
	UnitAmount  int64       `json:"unitAmount"`
	Scheme      PriceScheme `json:"scheme"`
	IsRecurring bool        `json:"isRecurring"`
	// Interval and IntervalCount make the billing period of a recurring price: MONTH
	// with 3 renews quarterly. Interval is empty on a one-time price, whose
	// IntervalCount is 1.
	Interval      PriceInterval `json:"interval,omitempty"`
	IntervalCount int           `json:"intervalCount"`
	// TrialPeriodDays is the trial a subscription to the price gets unless it asks for
	// another; zero for none.
	TrialPeriodDays int      `json:"trialPeriodDays,omitempty"`
	Metadata        Metadata `json:"metadata,omitempty"`
	// Active is true until the price is archived. An archived price takes no new
	// subscriptions; existing ones go on.
	Active    bool      `json:"active"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
}

// ArchivedPrice is the answer of ArchivePrice: the price's id and its active flag,
// now false.
type ArchivedPrice struct {
	ID     string `json:"id"`
	Active bool   `json:"active"`
}

// ProductCreateParams adds a product to the catalog. Name is required.
type ProductCreateParams struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Type defaults to ProductTypeService.
	Type ProductType `json:"type,omitempty"`
	// ImageURL must be an absolute http or https URL.
	ImageURL string   `json:"imageUrl,omitempty"`
	Metadata Metadata `json:"metadata,omitzero"`
}

func (p *ProductCreateParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return firstError(
		required("name", p.Name),
		oneOf("type", p.Type, productTypes...),
		absoluteURL("imageUrl", p.ImageURL),
		p.Metadata.validate("metadata"),
	)
}

// ProductListParams filters a product list.
type ProductListParams struct {
	ListParams
	// Active filters by state: left zero it lists every product, Value(true) only
	// active products and Value(false) only archived ones.
	Active Nullable[bool] `url:"-"`
}

func (p *ProductListParams) validate() error {
	if p.Active.IsNull() {
		return firstError(p.ListParams.validate(), invalid("active", "must be true, false, or left unset to list every product"))
	}
	return p.ListParams.validate()
}

// productListQuery is ProductListParams as the query string carries it.
type productListQuery struct {
	ListParams
	Active string `url:"active,omitempty"`
}

// PriceCreateParams adds a price to a product. UnitAmount is required; a recurring
// price also needs an Interval. A one-time price (IsRecurring false) takes none of the
// recurring fields: an Interval, an IntervalCount above 1 or a TrialPeriodDays on it is
// refused with a *ValidationError naming the field, as the service refuses it.
type PriceCreateParams struct {
	// UnitAmount is a positive amount in minor units.
	UnitAmount int64 `json:"unitAmount"`
	// Currency is an ISO 4217 code; the service defaults to GHS.
	Currency string `json:"currency,omitempty"`
	Nickname string `json:"nickname,omitempty"`
	// Scheme defaults to PriceSchemeFlat.
	Scheme      PriceScheme `json:"scheme,omitempty"`
	IsRecurring bool        `json:"isRecurring,omitempty"`
	// Interval is required when IsRecurring is true, and refused when it is false.
	Interval PriceInterval `json:"interval,omitempty"`
	// IntervalCount is the number of intervals between renewals, 1 to
	// MaxIntervalCount; zero means 1. Only 0 or 1 is taken on a one-time price.
	IntervalCount int `json:"intervalCount,omitempty"`
	// TrialPeriodDays gives subscriptions to the price a trial of that many days, up
	// to MaxTrialDays; zero means none. Only a recurring price takes a trial.
	TrialPeriodDays int      `json:"trialPeriodDays,omitempty"`
	Metadata        Metadata `json:"metadata,omitzero"`
}

func (p *PriceCreateParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	var interval error
	if p.IsRecurring && p.Interval == "" {
		interval = invalid("interval", "is required when isRecurring is true")
	}
	return firstError(
		positiveAmount("unitAmount", p.UnitAmount),
		currencyCode("currency", p.Currency),
		oneOf("scheme", p.Scheme, priceSchemes...),
		interval,
		oneOf("interval", p.Interval, priceIntervals...),
		intRange("intervalCount", p.IntervalCount, 0, MaxIntervalCount, "must be from 1 to 365"),
		intRange("trialPeriodDays", p.TrialPeriodDays, 0, MaxTrialDays, "must be from 0 to 730"),
		p.oneTimeSetsNoRecurringField(),
		p.Metadata.validate("metadata"),
	)
}

// recurringOnly are the price fields that mean something only on a recurring price,
// each with whether params set it. A one-time price that sets one is refused: the
// service would keep and echo a billing period or a trial that nothing ever bills.
var recurringOnly = []struct {
	field string
	set   func(*PriceCreateParams) bool
}{
	{"interval", func(p *PriceCreateParams) bool { return p.Interval != "" }},
	{"intervalCount", func(p *PriceCreateParams) bool { return p.IntervalCount > 1 }},
	{"trialPeriodDays", func(p *PriceCreateParams) bool { return p.TrialPeriodDays > 0 }},
}

// oneTimeSetsNoRecurringField refuses the first recurring-only field a one-time price sets.
func (p *PriceCreateParams) oneTimeSetsNoRecurringField() error {
	if p.IsRecurring {
		return nil
	}
	for _, f := range recurringOnly {
		if f.set(p) {
			return invalid(f.field, "is only for a recurring price: set IsRecurring, or leave "+f.field+" unset on a one-time price")
		}
	}
	return nil
}

// Create adds a product to the catalog. It starts active, with no prices.
func (s *ProductsService) Create(ctx context.Context, p *ProductCreateParams) (*Product, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return send[Product](ctx, s.client, epProductCreate.op(p))
}

// ListPage returns one page of products, newest first.
func (s *ProductsService) ListPage(ctx context.Context, p *ProductListParams) (*Page[ProductSummary], error) {
	if p == nil {
		p = &ProductListParams{}
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	q := &productListQuery{ListParams: p.ListParams}
	if active, ok := p.Active.Get(); ok {
		q.Active = "false"
		if active {
			q.Active = "true"
		}
	}
	return send[Page[ProductSummary]](ctx, s.client, epProductList.op(q))
}

// List returns every product matching p, fetching pages lazily as the loop advances.
// Breaking out of the loop stops the fetching. p is not modified.
func (s *ProductsService) List(ctx context.Context, p *ProductListParams) iter.Seq2[*ProductSummary, error] {
	return listAll(ctx, p, s.ListPage)
}

// CreatePrice adds a price to the product productID. An archived product takes no new
// prices.
func (s *ProductsService) CreatePrice(ctx context.Context, productID string, p *PriceCreateParams) (*Price, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return send[Price](ctx, s.client, epPriceCreate.op(p, seg("productId", productID)))
}

// ArchivePrice archives a price of the product productID. New subscriptions to it are
// refused; existing subscriptions are unaffected. Archiving an archived price succeeds
// again.
func (s *ProductsService) ArchivePrice(ctx context.Context, productID, priceID string) (*ArchivedPrice, error) {
	return send[ArchivedPrice](ctx, s.client, epPriceArchive.op(nil, seg("productId", productID), seg("priceId", priceID)))
}

// intRange checks lowest <= v <= highest.
func intRange(field string, v, lowest, highest int, rule string) error {
	if v < lowest || v > highest {
		return invalid(field, rule)
	}
	return nil
}
