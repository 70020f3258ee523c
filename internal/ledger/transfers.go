package ledger

import (
	"context"
	"errors"
	"fmt"

	"merchantpay/ent"
	"merchantpay/ent/ledgerentry"
	"merchantpay/internal/money"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

func (s *Service) pair(p Posting, a, b Entry) (Posting, error) {
	if len(p.Entries) != 0 {
		return Posting{}, fmt.Errorf("%w: the helpers build the entries themselves", ErrInvalid)
	}
	if a.Amount >= 0 {
		return Posting{}, fmt.Errorf("%w: amount must be positive", ErrInvalid)
	}
	p.Entries = []Entry{a, b}
	return p, nil
}

// Credit moves amount (minor units, > 0) from the service's account of kind
// `from` to t's available balance in currency c. p gives the posting's ID,
// TransactionRef and Memo; its Entries must be empty.
func (s *Service) Credit(ctx context.Context, tx *ent.Tx, p Posting, t tenant.Tenant, from Kind, c money.Currency, amount int64) (Posting, error) {
	p, err := s.credit(p, t, from, c, amount)
	if err != nil {
		return Posting{}, err
	}
	return s.Post(ctx, tx, p)
}

func (s *Service) credit(p Posting, t tenant.Tenant, from Kind, c money.Currency, amount int64) (Posting, error) {
	return s.pair(p,
		Entry{Account: SystemAccount(t.Mode, c, from), Bucket: Available, Amount: -amount},
		Entry{Account: MerchantAccount(t, c), Bucket: Available, Amount: amount})
}

// Debit moves amount (minor units, > 0) from t's available balance in
// currency c to the service's account of kind `to`; apperr.InsufficientBalance
// when the balance cannot cover it.
func (s *Service) Debit(ctx context.Context, tx *ent.Tx, p Posting, t tenant.Tenant, to Kind, c money.Currency, amount int64) (Posting, error) {
	p, err := s.pair(p,
		Entry{Account: MerchantAccount(t, c), Bucket: Available, Amount: -amount},
		Entry{Account: SystemAccount(t.Mode, c, to), Bucket: Available, Amount: amount})
	if err != nil {
		return Posting{}, err
	}
	return s.Post(ctx, tx, p)
}

// Move moves amount (minor units, > 0) between t's buckets in currency c:
// Available→Pending holds funds, Pending→Available releases them.
// apperr.InsufficientBalance when the source bucket cannot cover it.
func (s *Service) Move(ctx context.Context, tx *ent.Tx, p Posting, t tenant.Tenant, c money.Currency, from, to Bucket, amount int64) (Posting, error) {
	if from == to {
		return Posting{}, fmt.Errorf("%w: move from %s to itself", ErrInvalid, from)
	}
	acct := MerchantAccount(t, c)
	p, err := s.pair(p, Entry{Account: acct, Bucket: from, Amount: -amount}, Entry{Account: acct, Bucket: to, Amount: amount})
	if err != nil {
		return Posting{}, err
	}
	return s.Post(ctx, tx, p)
}

// ReversalID is the id of the posting that reverses postingID; being
// deterministic, it lets a posting be reversed at most once.
func ReversalID(postingID string) string { return postingID + ":reversal" }

// Reverse posts the exact opposite of posting postingID (same accounts and
// buckets, negated amounts, same transaction reference) under
// ReversalID(postingID), in tx, the caller's transaction (with tx nil, in
// one of its own).
// ErrNotFound when there is no such posting, ErrAlreadyReversed when it was
// reversed before, apperr.InsufficientBalance when a merchant's balance no
// longer covers taking back a credit.
func (s *Service) Reverse(ctx context.Context, tx *ent.Tx, postingID, memo string) (Posting, error) {
	revID := ReversalID(postingID)
	var out Posting
	err := s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		rows, err := tx.Client().LedgerEntry.Query().
			Where(ledgerentry.PostingIDIn(postingID, revID)).
			Order(ent.Asc(ledgerentry.FieldSeq)).All(ctx)
		if err != nil {
			return store.Classify(fmt.Errorf("ledger: read posting %q: %w", postingID, err))
		}
		rev := Posting{ID: revID, Memo: memo}
		for _, r := range rows {
			if r.PostingID == revID {
				return fmt.Errorf("%w: %q", ErrAlreadyReversed, postingID)
			}
			acct, err := ParseAccountID(r.AccountID)
			if err != nil {
				return err
			}
			rev.TransactionRef = r.TransactionRef
			rev.Entries = append(rev.Entries, Entry{Account: acct, Bucket: Bucket(r.Bucket), Amount: -r.Amount})
		}
		if len(rev.Entries) == 0 {
			return fmt.Errorf("%w: %q", ErrNotFound, postingID)
		}
		if rev.Memo == "" {
			rev.Memo = "reversal of " + postingID
		}
		out, err = s.Post(ctx, tx, rev)
		if errors.Is(err, ErrDuplicatePosting) {
			return fmt.Errorf("%w: %q", ErrAlreadyReversed, postingID)
		}
		return err
	})
	if err != nil {
		return Posting{}, err
	}
	return out, nil
}
