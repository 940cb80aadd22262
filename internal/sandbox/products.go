package sandbox

import "net/http"

// The enums of SPEC "Product" and "Price".
var (
	productTypes   = []string{"SERVICE", "GOOD", "DIGITAL"}
	priceSchemes   = []string{"FLAT", "PER_UNIT", "TIERED", "VOLUME"}
	priceIntervals = []string{"DAY", "WEEK", "MONTH", "YEAR"}
)

// Bounds the spec leaves open, chosen so that period arithmetic stays far
// inside time.Time (docs/sandbox.md "Products and prices").
const (
	maxIntervalCount = 365
	maxTrialDays     = 730
)

// recurringOnlyPriceFields are the price fields that mean something only on a
// recurring price, each with whether a price read from a request sets it. A
// one-time price that sets one is refused (HTTP 400, code 4000, the field):
// kept, it would echo a billing period or a trial nothing ever bills. The
// values a one-time price shows anyway (intervalCount 1, no trial) are taken.
var recurringOnlyPriceFields = []struct {
	name string
	set  func(*price) bool
}{
	{"interval", func(p *price) bool { return p.Interval != nil }},
	{"intervalCount", func(p *price) bool { return p.IntervalCount != 1 }},
	{"trialPeriodDays", func(p *price) bool { return p.TrialPeriodDays != nil && *p.TrialPeriodDays > 0 }},
}

// product is a catalog entry as the wire shows it (SPEC "Product").
type product struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Type        string         `json:"type"`
	ImageURL    *string        `json:"imageUrl"`
	Metadata    map[string]any `json:"metadata"`
	Active      bool           `json:"active"`
	Prices      []price        `json:"prices"` // filled by view from prices
	CreatedAt   timestamp      `json:"createdAt"`
	UpdatedAt   timestamp      `json:"updatedAt"`

	prices []*price // in creation order; changed in place when archived
}

// view returns a copy of p that owns its prices, safe to encode after the
// lock is released. Call it with s.mu held.
func (p *product) view() product {
	v := *p
	v.Prices = make([]price, len(p.prices))
	for i, pr := range p.prices {
		v.Prices[i] = *pr
	}
	v.prices = nil
	return v
}

// productSummary is a product as a list shows it.
type productSummary struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description *string   `json:"description"`
	Active      bool      `json:"active"`
	CreatedAt   timestamp `json:"createdAt"`
}

func (p *product) summary() productSummary {
	return productSummary{ID: p.ID, Name: p.Name, Description: p.Description, Active: p.Active, CreatedAt: p.CreatedAt}
}

// price is a price of a product (SPEC "Price").
type price struct {
	ID              string         `json:"id"`
	Nickname        *string        `json:"nickname"`
	Currency        string         `json:"currency"`
	UnitAmount      int64          `json:"unitAmount"`
	Scheme          string         `json:"scheme"`
	IsRecurring     bool           `json:"isRecurring"`
	Interval        *string        `json:"interval"`
	IntervalCount   int64          `json:"intervalCount"`
	TrialPeriodDays *int64         `json:"trialPeriodDays"`
	Metadata        map[string]any `json:"metadata"`
	Active          bool           `json:"active"`
	CreatedAt       timestamp      `json:"createdAt"`

	productID string
}

// archivedPrice is the answer of an archive (SPEC "Products and prices").
type archivedPrice struct {
	ID     string `json:"id"`
	Active bool   `json:"active"`
}

// productStore is the catalog. Prices live inside their product and are
// also indexed by id, since subscriptions name a price alone.
type productStore struct {
	table  table[product]
	prices map[string]*price
}

func productRoutes(s *Server) []route {
	return []route{
		{pattern: "POST /v1/products", auth: authBilling, scope: ScopeProductsWrite, handler: s.createProduct},
		{pattern: "GET /v1/products", auth: authBilling, scope: ScopeProductsRead, handler: s.listProducts},
		{pattern: "POST /v1/products/{id}/prices", auth: authBilling, scope: ScopeProductsWrite, handler: s.createPrice},
		{pattern: "DELETE /v1/products/{id}/prices/{priceId}", auth: authBilling, scope: ScopeProductsWrite, handler: s.archivePrice},
		// The spec names archived products but no way to archive one; this
		// control makes the list's active=false filter reachable.
		{pattern: "POST /sandbox/products/{id}/archive", auth: authBilling, handler: s.archiveProduct},
	}
}

func (s *Server) createProduct(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	p := &product{Name: f.requiredString("name"), Type: "SERVICE", Active: true}
	nullableField(f, "description", f.optionalString).applyTo(&p.Description)
	if kind, ok := f.enum("type", productTypes...); ok {
		p.Type = kind
	}
	nullableField(f, "imageUrl", func(n string) (string, bool) {
		return f.stringWhere(n, "an absolute http or https URL", isAbsoluteURL)
	}).applyTo(&p.ImageURL)
	p.Metadata, _ = f.metadata("metadata")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	s.mu.Lock()
	p.ID = newID("prod_")
	p.CreatedAt = timestamp{s.Now()}
	p.UpdatedAt = p.CreatedAt
	s.products.table.insert(p.ID, p)
	created := p.view()
	s.mu.Unlock()
	writeData(w, http.StatusCreated, created)
}

func (s *Server) listProducts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	pq, err := parsePageQuery(q)
	if err != nil {
		writeError(w, err)
		return
	}
	active, err := queryEnum(q, "active", "true", "false")
	if err != nil {
		writeError(w, err)
		return
	}
	keep := func(p *product) bool { return active == "" || p.Active == (active == "true") }
	s.mu.Lock()
	pg, err := listPage(&s.products.table, pq, keep, (*product).summary)
	s.mu.Unlock()
	writeResult(w, http.StatusOK, pg, err)
}

func (s *Server) createPrice(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("unitAmount")
	pr := &price{Currency: defaultCurrency, Scheme: "FLAT", IntervalCount: 1, Active: true}
	pr.UnitAmount, _ = f.positiveInteger("unitAmount")
	if currency, ok := f.currency("currency"); ok {
		pr.Currency = currency
	}
	nullableField(f, "nickname", f.optionalString).applyTo(&pr.Nickname)
	if scheme, ok := f.enum("scheme", priceSchemes...); ok {
		pr.Scheme = scheme
	}
	pr.IsRecurring, _ = f.boolean("isRecurring")
	nullableField(f, "interval", func(n string) (string, bool) { return f.enum(n, priceIntervals...) }).applyTo(&pr.Interval)
	if pr.IsRecurring && pr.Interval == nil {
		f.fail("interval", "interval is required when isRecurring is true")
	}
	if count, ok := f.integerRange("intervalCount", 1, maxIntervalCount); ok {
		pr.IntervalCount = count
	}
	nullableField(f, "trialPeriodDays", func(n string) (int64, bool) { return f.integerRange(n, 0, maxTrialDays) }).applyTo(&pr.TrialPeriodDays)
	if !pr.IsRecurring {
		for _, field := range recurringOnlyPriceFields {
			if field.set(pr) {
				f.fail(field.name, "%s is only for a recurring price: a one-time price (isRecurring false) has none", field.name)
			}
		}
	}
	pr.Metadata, _ = f.metadata("metadata")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}

	created, err := s.addPrice(r.PathValue("id"), pr)
	writeResult(w, http.StatusCreated, created, err)
}

// addPrice stores pr as a new price of the product productID.
func (s *Server) addPrice(productID string, pr *price) (price, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.products.table.get(productID)
	if !ok {
		return price{}, notFoundError("product", productID)
	}
	if !p.Active {
		return price{}, conflictError("product %s is archived: it takes no new prices", p.ID)
	}
	pr.ID = newID("price_")
	pr.productID = p.ID
	pr.CreatedAt = timestamp{s.Now()}
	p.prices = append(p.prices, pr)
	p.UpdatedAt = pr.CreatedAt
	if s.products.prices == nil {
		s.products.prices = make(map[string]*price)
	}
	s.products.prices[pr.ID] = pr
	return *pr, nil
}

// archivePrice sets a price's active to false. Archiving an archived price
// answers the same again: DELETE is idempotent.
func (s *Server) archivePrice(w http.ResponseWriter, r *http.Request) {
	archived, err := s.setPriceArchived(r.PathValue("id"), r.PathValue("priceId"))
	writeResult(w, http.StatusOK, archived, err)
}

func (s *Server) setPriceArchived(productID, priceID string) (archivedPrice, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.products.table.get(productID); !ok {
		return archivedPrice{}, notFoundError("product", productID)
	}
	pr, ok := s.products.prices[priceID]
	if !ok || pr.productID != productID {
		return archivedPrice{}, notFoundError("price", priceID)
	}
	pr.Active = false
	return archivedPrice{ID: pr.ID, Active: false}, nil
}

// archiveProduct is the sandbox control that archives a product.
func (s *Server) archiveProduct(w http.ResponseWriter, r *http.Request) {
	archived, err := s.setProductArchived(r.PathValue("id"))
	writeResult(w, http.StatusOK, archived, err)
}

func (s *Server) setProductArchived(id string) (product, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.products.table.get(id)
	if !ok {
		return product{}, notFoundError("product", id)
	}
	if p.Active {
		p.Active = false
		p.UpdatedAt = timestamp{s.Now()}
	}
	return p.view(), nil
}
