package billing

import (
	"context"
	"iter"
	"time"
)

// CreditsService runs the prepaid credit wallet of each customer.
// A customer has one wallet; the first grant creates it. Every grant and deduct writes a
// ledger entry with the balance before and after it.
type CreditsService service

// CreditTransactionType is the kind of a ledger entry.
type CreditTransactionType string

// The kinds of ledger entry. A grant writes GRANT, a deduct writes USAGE, and the unused
// remainder of a grant that passes its expiresAt is written off as EXPIRY. The service
// names the others for entries made outside this API (purchases, adjustments, refunds).
const (
	CreditTransactionTypePurchase   CreditTransactionType = "PURCHASE"
	CreditTransactionTypeUsage      CreditTransactionType = "USAGE"
	CreditTransactionTypeGrant      CreditTransactionType = "GRANT"
	CreditTransactionTypeAdjustment CreditTransactionType = "ADJUSTMENT"
	CreditTransactionTypeExpiry     CreditTransactionType = "EXPIRY"
	CreditTransactionTypeRefund     CreditTransactionType = "REFUND"
)

var creditTransactionTypes = []CreditTransactionType{
	CreditTransactionTypePurchase, CreditTransactionTypeUsage, CreditTransactionTypeGrant,
	CreditTransactionTypeAdjustment, CreditTransactionTypeExpiry, CreditTransactionTypeRefund,
}

// CreditWallet is a customer's prepaid credit wallet.
type CreditWallet struct {
	ID string `json:"id"`
	// Balance is the credits the wallet holds now.
	Balance  int64  `json:"balance"`
	Currency string `json:"currency"`
	// CreatedAt and UpdatedAt are set by Get; the wallet inside a CreditChange carries
	// only ID, Balance and Currency.
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// CreditTransaction is one ledger entry of a wallet. Amount is always positive: the
// direction is in Type and in BalanceBefore and BalanceAfter.
//
// Entries read through Transactions carry the fields the service lists (ID, Type,
// Amount, BalanceBefore, BalanceAfter, Description, CreatedAt); ExpiresAt and Metadata
// are filled only in the entry a Grant or Deduct returns.
type CreditTransaction struct {
	ID            string                `json:"id"`
	Type          CreditTransactionType `json:"type"`
	Amount        int64                 `json:"amount"`
	BalanceBefore int64                 `json:"balanceBefore"`
	BalanceAfter  int64                 `json:"balanceAfter"`
	Description   string                `json:"description,omitempty"`
	// ExpiresAt is when the unused part of a grant expires; zero for no expiry and on
	// entries other than grants.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	Metadata  Metadata  `json:"metadata,omitempty"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
}

// CreditChange is the answer to a grant or deduct: the wallet after it and the ledger
// entry it wrote.
type CreditChange struct {
	Wallet      CreditWallet      `json:"wallet"`
	Transaction CreditTransaction `json:"transaction"`
}

// CreditGrantParams adds credits to a wallet.
type CreditGrantParams struct {
	// Amount is the credits to add, a positive integer. Required.
	Amount      int64  `json:"amount"`
	Description string `json:"description,omitempty"`
	// ExpiresAt, when set, is the moment what remains of this grant expires. Deducts
	// draw from the grant that expires soonest first.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	Metadata  Metadata  `json:"metadata,omitzero"`
}

func (p *CreditGrantParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return firstError(positiveCredits(p.Amount), p.Metadata.validate("metadata"))
}

// CreditDeductParams takes credits out of a wallet.
type CreditDeductParams struct {
	// Amount is the credits to take, a positive integer no larger than the balance.
	// Required.
	Amount      int64    `json:"amount"`
	Description string   `json:"description,omitempty"`
	Metadata    Metadata `json:"metadata,omitzero"`
}

func (p *CreditDeductParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return firstError(positiveCredits(p.Amount), p.Metadata.validate("metadata"))
}

// positiveCredits checks a credit amount: a positive integer.
func positiveCredits(amount int64) error {
	if amount <= 0 {
		return invalid("amount", "must be a positive integer")
	}
	return nil
}

// CreditTransactionListParams filters a wallet's ledger.
type CreditTransactionListParams struct {
	ListParams
	// Type keeps entries of that kind.
	Type CreditTransactionType `url:"type,omitempty"`
}

func (p *CreditTransactionListParams) validate() error {
	return firstError(p.ListParams.validate(), oneOf("type", p.Type, creditTransactionTypes...))
}

// Get returns the credit wallet of a customer. A customer who was never granted credits
// has no wallet: the error matches ErrNotFound.
func (s *CreditsService) Get(ctx context.Context, customerID string) (*CreditWallet, error) {
	return send[CreditWallet](ctx, s.client, epCreditWalletGet.op(nil, seg("customerId", customerID)))
}

// Grant adds credits to a customer's wallet, creating the wallet on the first grant, and
// returns the new balance with the GRANT entry it wrote.
//
// A grant is not re-sent once it may have reached the service; if its answer is then
// lost, the error matches ErrOutcomeUnknown: read the wallet's Transactions to see
// whether the grant is in the ledger before granting again.
func (s *CreditsService) Grant(ctx context.Context, customerID string, p *CreditGrantParams) (*CreditChange, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return send[CreditChange](ctx, s.client, epCreditGrant.op(p, seg("customerId", customerID)))
}

// Deduct takes credits out of a customer's wallet and returns the new balance with the
// USAGE entry it wrote. A deduct larger than the balance is refused and writes nothing:
// the error matches ErrInsufficientCredits.
//
// A deduct is not retried once it may have reached the service, since it could be
// applied twice; if its answer is then lost, the error matches ErrOutcomeUnknown: read
// the wallet's Transactions to see whether the deduction is in the ledger.
func (s *CreditsService) Deduct(ctx context.Context, customerID string, p *CreditDeductParams) (*CreditChange, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return send[CreditChange](ctx, s.client, epCreditDeduct.op(p, seg("customerId", customerID)))
}

// TransactionsPage returns one page of a customer's ledger, newest entry first.
func (s *CreditsService) TransactionsPage(ctx context.Context, customerID string, p *CreditTransactionListParams) (*Page[CreditTransaction], error) {
	if p == nil {
		p = &CreditTransactionListParams{}
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return send[Page[CreditTransaction]](ctx, s.client, epCreditTransactionList.op(p, seg("customerId", customerID)))
}

// Transactions returns every ledger entry of a customer matching p, newest first,
// fetching pages lazily as the loop advances. p is not modified.
func (s *CreditsService) Transactions(ctx context.Context, customerID string, p *CreditTransactionListParams) iter.Seq2[*CreditTransaction, error] {
	return listAll(ctx, p, func(ctx context.Context, p *CreditTransactionListParams) (*Page[CreditTransaction], error) {
		return s.TransactionsPage(ctx, customerID, p)
	})
}
