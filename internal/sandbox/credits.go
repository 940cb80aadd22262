package sandbox

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"time"
)

// CodeInsufficientCredits answers a deduct larger than the wallet's balance
// (HTTP 400). The spec leaves the case open ("Errors": behaviour of deduct
// beyond the balance not shown); DESIGN decides it is refused and nothing is
// written.
const CodeInsufficientCredits = "insufficient_credits"

// creditTransactionTypes are the kinds of ledger entry (SPEC "Credit transaction").
var creditTransactionTypes = []string{"PURCHASE", "USAGE", "GRANT", "ADJUSTMENT", "EXPIRY", "REFUND"}

// walletBalance is a wallet as a grant or deduct answers it.
type walletBalance struct {
	ID       string `json:"id"`
	Balance  int64  `json:"balance"`
	Currency string `json:"currency"`
}

// walletView is a wallet as GET answers it (SPEC "Credit wallet").
type walletView struct {
	walletBalance
	CreatedAt timestamp `json:"createdAt"`
	UpdatedAt timestamp `json:"updatedAt"`
}

// creditWallet is a customer's wallet with its ledger and the grants that
// still hold credits.
type creditWallet struct {
	walletView
	customerID string
	ledger     table[creditTransaction]
	// lots are the grants with credits left, in draw-down order: the soonest
	// to expire first, grants without expiry last, ties in grant order. The
	// balance is always the sum of their remainders.
	lots []*creditLot
}

// creditLot is what remains of one grant.
type creditLot struct {
	grantID   string
	remaining int64
	expiresAt time.Time // zero: never
}

// drawsBefore reports whether l is drawn down (and expires) before m.
func (l *creditLot) drawsBefore(m *creditLot) bool {
	switch {
	case l.expiresAt.IsZero():
		return false
	case m.expiresAt.IsZero():
		return true
	}
	return l.expiresAt.Before(m.expiresAt)
}

// creditTransaction is a ledger entry (SPEC "Credit transaction"). Amount is
// positive; the direction shows in the type and the balances around it.
type creditTransaction struct {
	ID            string         `json:"id"`
	Type          string         `json:"type"`
	Amount        int64          `json:"amount"`
	BalanceBefore int64          `json:"balanceBefore"`
	BalanceAfter  int64          `json:"balanceAfter"`
	Description   *string        `json:"description"`
	ExpiresAt     *timestamp     `json:"expiresAt"`
	Metadata      map[string]any `json:"metadata"`
	CreatedAt     timestamp      `json:"createdAt"`
}

// creditTransactionSummary is a ledger entry as the ledger list shows it.
type creditTransactionSummary struct {
	ID            string    `json:"id"`
	Type          string    `json:"type"`
	Amount        int64     `json:"amount"`
	BalanceBefore int64     `json:"balanceBefore"`
	BalanceAfter  int64     `json:"balanceAfter"`
	Description   *string   `json:"description"`
	CreatedAt     timestamp `json:"createdAt"`
}

func (t *creditTransaction) summary() creditTransactionSummary {
	return creditTransactionSummary{ID: t.ID, Type: t.Type, Amount: t.Amount, BalanceBefore: t.BalanceBefore,
		BalanceAfter: t.BalanceAfter, Description: t.Description, CreatedAt: t.CreatedAt}
}

// creditChange answers a grant or deduct.
type creditChange struct {
	Wallet      walletBalance     `json:"wallet"`
	Transaction creditTransaction `json:"transaction"`
}

// creditStore is the wallets by customer id: one wallet per customer.
type creditStore struct {
	byCustomer map[string]*creditWallet
}

func creditRoutes(s *Server) []route {
	return []route{
		{pattern: "GET /v1/credits/{customerId}", auth: authBilling, scope: ScopeCreditsRead, handler: s.getWallet},
		{pattern: "POST /v1/credits/{customerId}/grant", auth: authBilling, scope: ScopeCreditsWrite, handler: s.grantCredits},
		{pattern: "POST /v1/credits/{customerId}/deduct", auth: authBilling, scope: ScopeCreditsWrite, handler: s.deductCredits},
		{pattern: "GET /v1/credits/{customerId}/transactions", auth: authBilling, scope: ScopeCreditsRead, handler: s.listCreditTransactions},
	}
}

// creditEntryFields are the fields a grant and a deduct share.
type creditEntryFields struct {
	amount      int64
	description *string
	metadata    map[string]any
}

func readCreditEntry(f *fields) creditEntryFields {
	f.require("amount")
	var e creditEntryFields
	e.amount, _ = f.positiveInteger("amount")
	nullableField(f, "description", f.optionalString).applyTo(&e.description)
	e.metadata, _ = f.metadata("metadata")
	return e
}

func (s *Server) getWallet(w http.ResponseWriter, r *http.Request) {
	view, err := s.readWallet(r.PathValue("customerId"))
	writeResult(w, http.StatusOK, view, err)
}

// readWallet returns a copy of the customer's wallet.
func (s *Server) readWallet(customerID string) (walletView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wallet, err := s.walletOf(customerID)
	if err != nil {
		return walletView{}, err
	}
	if wallet == nil { // no grant yet, so no wallet
		return walletView{}, notFoundError("credit wallet of customer", customerID)
	}
	return wallet.walletView, nil
}

// creditApply writes a grant or deduct into the customer's wallet (nil before the
// first grant) and returns the wallet and the entry it wrote. It runs with s.mu held.
type creditApply func(customerID string, wallet *creditWallet, e creditEntryFields, now time.Time) (*creditWallet, *creditTransaction, error)

// changeCredits is the frame of a grant and a deduct: it reads the entry, and more
// with readMore when given, runs apply under the lock and answers what it wrote.
func (s *Server) changeCredits(w http.ResponseWriter, r *http.Request, readMore func(*fields), apply creditApply) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	entry := readCreditEntry(f)
	if readMore != nil {
		readMore(f)
	}
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	change, err := s.applyCredits(r.PathValue("customerId"), entry, apply)
	writeResult(w, http.StatusOK, change, err)
}

func (s *Server) applyCredits(customerID string, e creditEntryFields, apply creditApply) (creditChange, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wallet, err := s.walletOf(customerID)
	if err != nil {
		return creditChange{}, err
	}
	wallet, tx, err := apply(customerID, wallet, e, s.Now())
	if err != nil {
		return creditChange{}, err
	}
	return creditChange{Wallet: wallet.walletBalance, Transaction: *tx}, nil
}

func (s *Server) grantCredits(w http.ResponseWriter, r *http.Request) {
	var expiresAt time.Time
	var hasExpiry bool
	s.changeCredits(w, r, func(f *fields) { expiresAt, hasExpiry = f.timestamp("expiresAt") },
		func(customerID string, wallet *creditWallet, e creditEntryFields, now time.Time) (*creditWallet, *creditTransaction, error) {
			if hasExpiry && !expiresAt.After(now) {
				return nil, nil, validationError("expiresAt", "expiresAt must be in the future")
			}
			if wallet == nil {
				wallet = s.openWallet(customerID, now)
			} else if e.amount > math.MaxInt64-wallet.Balance {
				return nil, nil, validationError("amount", "amount would take the balance beyond %d credits", int64(math.MaxInt64))
			}
			return wallet, s.addGrant(wallet, e, expiresAt, now), nil
		})
}

// addGrant writes a GRANT entry and keeps its credits as a lot, due to expire at
// expiresAt unless that is zero. Call it with s.mu held.
func (s *Server) addGrant(wallet *creditWallet, e creditEntryFields, expiresAt, now time.Time) *creditTransaction {
	tx := wallet.record("GRANT", e, now, func(balance int64) int64 { return balance + e.amount })
	lot := &creditLot{grantID: tx.ID, remaining: e.amount, expiresAt: expiresAt}
	if !expiresAt.IsZero() {
		tx.ExpiresAt = &timestamp{expiresAt}
		s.scheduleJob(expiresAt, expireCreditsJob{Customer: wallet.customerID})
	}
	// Before the first lot it draws before, after all the others, so equal expiries keep
	// grant order. The lots are in draw-down order, so the search can halve.
	at := sort.Search(len(wallet.lots), func(i int) bool { return lot.drawsBefore(wallet.lots[i]) })
	wallet.lots = slices.Insert(wallet.lots, at, lot)
	return tx
}

func (s *Server) deductCredits(w http.ResponseWriter, r *http.Request) {
	s.changeCredits(w, r, nil, func(_ string, wallet *creditWallet, e creditEntryFields, now time.Time) (*creditWallet, *creditTransaction, error) {
		var balance int64
		if wallet != nil {
			balance = wallet.Balance
		}
		if e.amount > balance {
			return nil, nil, &apiError{status: http.StatusBadRequest, code: CodeInsufficientCredits, field: "amount",
				message: fmt.Sprintf("a deduct of %d credits exceeds the balance of %d", e.amount, balance)}
		}
		tx := wallet.record("USAGE", e, now, func(balance int64) int64 { return balance - e.amount })
		wallet.drawDown(e.amount)
		return wallet, tx, nil
	})
}

func (s *Server) listCreditTransactions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	pq, err := parsePageQuery(q)
	if err != nil {
		writeError(w, err)
		return
	}
	kind, err := queryEnum(q, "type", creditTransactionTypes...)
	if err != nil {
		writeError(w, err)
		return
	}
	keep := func(t *creditTransaction) bool { return kind == "" || t.Type == kind }
	s.mu.Lock()
	p, err := s.ledgerPage(r.PathValue("customerId"), pq, keep)
	s.mu.Unlock()
	writeResult(w, http.StatusOK, p, err)
}

// ledgerPage is one page of the customer's ledger; call it with s.mu held.
func (s *Server) ledgerPage(customerID string, pq pageQuery, keep func(*creditTransaction) bool) (page[creditTransactionSummary], error) {
	wallet, err := s.walletOf(customerID)
	if err != nil {
		return page[creditTransactionSummary]{}, err
	}
	ledger := &table[creditTransaction]{} // a customer without a wallet has an empty ledger
	if wallet != nil {
		ledger = &wallet.ledger
	}
	return listPage(ledger, pq, keep, (*creditTransaction).summary)
}

// walletOf returns the wallet of a customer, nil when the customer has none
// yet, with every grant past its expiry already written off. An unknown
// customer is an error. Call it with s.mu held.
func (s *Server) walletOf(customerID string) (*creditWallet, error) {
	if _, ok := s.customers.table.get(customerID); !ok {
		return nil, notFoundError("customer", customerID)
	}
	wallet := s.credits.byCustomer[customerID]
	if wallet != nil {
		// The scheduled expiry does this at the very moment; doing it here too keeps
		// a request that comes first with the wall clock from drawing on expired credits.
		wallet.expireLots(s.Now())
	}
	return wallet, nil
}

// openWallet creates the customer's wallet: the first grant does (SPEC
// "Credit wallet"). Call it with s.mu held.
func (s *Server) openWallet(customerID string, now time.Time) *creditWallet {
	wallet := &creditWallet{customerID: customerID, walletView: walletView{
		walletBalance: walletBalance{ID: newID("cwa_"), Currency: defaultCurrency},
		CreatedAt:     timestamp{now},
		UpdatedAt:     timestamp{now},
	}}
	if s.credits.byCustomer == nil {
		s.credits.byCustomer = make(map[string]*creditWallet)
	}
	s.credits.byCustomer[customerID] = wallet
	return wallet
}

// record writes a ledger entry that moves the balance by change and returns it.
func (w *creditWallet) record(kind string, e creditEntryFields, at time.Time, change func(int64) int64) *creditTransaction {
	tx := &creditTransaction{
		ID:            newID("ctx_"),
		Type:          kind,
		Amount:        e.amount,
		BalanceBefore: w.Balance,
		BalanceAfter:  change(w.Balance),
		Description:   e.description,
		Metadata:      e.metadata,
		CreatedAt:     timestamp{at},
	}
	w.Balance = tx.BalanceAfter
	w.UpdatedAt = timestamp{at}
	w.ledger.insert(tx.ID, tx)
	return tx
}

// drawDown takes amount (no more than the balance) from the lots in order.
func (w *creditWallet) drawDown(amount int64) {
	for amount > 0 {
		lot := w.lots[0]
		taken := min(lot.remaining, amount)
		lot.remaining -= taken
		amount -= taken
		if lot.remaining == 0 {
			w.lots = w.lots[1:]
		}
	}
}

// expireLots writes off what remains of every grant whose expiry is at or
// before now, one EXPIRY entry per grant, dated at its expiry. A grant that
// was used up expires silently. Expiring lots are always at the front of the
// draw-down order.
func (w *creditWallet) expireLots(now time.Time) {
	for len(w.lots) > 0 {
		lot := w.lots[0]
		if lot.expiresAt.IsZero() || lot.expiresAt.After(now) {
			return
		}
		w.lots = w.lots[1:]
		description := "unused credits of grant " + lot.grantID + " expired"
		w.record("EXPIRY", creditEntryFields{amount: lot.remaining, description: &description}, lot.expiresAt,
			func(balance int64) int64 { return balance - lot.remaining })
	}
}
