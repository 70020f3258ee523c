package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"merchantpay/ent"
	"merchantpay/internal/money"
	"merchantpay/internal/store"
)

// ErrInvariant wraps every violation that Check reports.
var ErrInvariant = errors.New("ledger invariant violated")

// maxViolations bounds Check's report; one broken rule usually breaks many rows.
const maxViolations = 20

// Check verifies the ledger's invariants over the whole database and returns
// every violation found (up to a bound), each wrapping ErrInvariant:
//   - the entries of every posting sum to zero per currency;
//   - every entry names a well-formed account in its own currency and bucket;
//   - every tracking account's available (its row's and its slots') and
//     pending equal the sums of its entries per bucket, and neither its row
//     nor a slot is below zero;
//   - every slot belongs to a merchant's account and is named after it;
//   - every entry of a tracking account has its account row;
//   - the service's own accounts keep no stored balance.
//
// Money tests run it after each scenario; it reads committed data.
func Check(ctx context.Context, db *store.DB) error { return CheckIn(ctx, db.Reader()) }

// CheckIn is Check reading through c: a transaction's client (a snapshot,
// store.DB.Snapshot) or the read client.
func CheckIn(ctx context.Context, c *ent.Client) error {
	var errs []error
	fail := func(format string, args ...any) {
		if len(errs) < maxViolations {
			errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvariant}, args...)...))
		}
	}

	rows, err := c.QueryContext(ctx, `SELECT posting_id, currency, CAST(SUM(amount) AS BIGINT) FROM ledger_entries
		GROUP BY posting_id, currency HAVING SUM(amount) <> 0`)
	if err != nil {
		return fmt.Errorf("ledger check: %w", err)
	}
	for rows.Next() {
		var posting, cur string
		var sum int64
		if err := rows.Scan(&posting, &cur, &sum); err != nil {
			rows.Close()
			return fmt.Errorf("ledger check: %w", err)
		}
		fail("posting %q: %s entries sum to %d, not 0", posting, cur, sum)
	}
	if err := closeRows(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("ledger check: %w", err)
	}

	type sums struct{ available, pending int64 }
	byAccount := map[string]*sums{}
	rows, err = c.QueryContext(ctx, `SELECT account_id, currency, bucket, CAST(SUM(amount) AS BIGINT) FROM ledger_entries
		GROUP BY account_id, currency, bucket`)
	if err != nil {
		return fmt.Errorf("ledger check: %w", err)
	}
	for rows.Next() {
		var id, cur, bucket string
		var sum int64
		if err := rows.Scan(&id, &cur, &bucket, &sum); err != nil {
			rows.Close()
			return fmt.Errorf("ledger check: %w", err)
		}
		acct, err := ParseAccountID(id)
		if err != nil {
			fail("entries name a malformed account %q", id)
			continue
		}
		if money.Currency(cur) != acct.Currency {
			fail("account %s has entries in %s", id, cur)
		}
		s := byAccount[id]
		if s == nil {
			s = &sums{}
			byAccount[id] = s
		}
		switch Bucket(bucket) {
		case Available:
			s.available += sum
		case Pending:
			s.pending += sum
		default:
			fail("account %s has entries in bucket %q", id, bucket)
		}
	}
	if err := closeRows(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("ledger check: %w", err)
	}

	accounts, err := c.LedgerAccount.Query().All(ctx)
	if err != nil {
		return fmt.Errorf("ledger check: %w", store.Classify(err))
	}
	slots, err := c.BalanceSlot.Query().All(ctx)
	if err != nil {
		return fmt.Errorf("ledger check: %w", store.Classify(err))
	}
	inSlots := map[string]int64{}
	for _, sl := range slots {
		n, err := strconv.Atoi(strings.TrimPrefix(sl.ID, sl.AccountID+"#"))
		if err != nil || sl.ID != slotID(sl.AccountID, n) || n < 1 || n > Slots {
			fail("slot %s is not named after its account %s", sl.ID, sl.AccountID)
		}
		if sl.Available < 0 {
			fail("slot %s is below zero: %d", sl.ID, sl.Available)
		}
		inSlots[sl.AccountID] += sl.Available
	}
	seen := make(map[string]bool, len(accounts))
	for _, a := range accounts {
		seen[a.ID] = true
		acct, err := ParseAccountID(a.ID)
		if err != nil {
			fail("malformed account id %q", a.ID)
			continue
		}
		if acct.Owner != a.Owner || acct.Mode != a.Mode || string(acct.Currency) != a.Currency || string(acct.Kind) != a.Kind {
			fail("account %s: columns (%s, %s, %s, %s) disagree with its id", a.ID, a.Owner, a.Mode, a.Currency, a.Kind)
		}
		if a.TracksBalance != acct.TracksBalance() {
			fail("account %s: tracks_balance is %v", a.ID, a.TracksBalance)
		}
		if !a.TracksBalance {
			if a.Available != 0 || a.Pending != 0 || inSlots[a.ID] != 0 {
				fail("system account %s has a stored balance (%d, %d, %d in slots)", a.ID, a.Available, a.Pending, inSlots[a.ID])
			}
			continue
		}
		s := byAccount[a.ID]
		if s == nil {
			s = &sums{}
		}
		if a.Available+inSlots[a.ID] != s.available {
			fail("account %s: available %d, entries sum to %d (its slots hold %d)", a.ID, a.Available+inSlots[a.ID], s.available, inSlots[a.ID])
		}
		if a.Pending != s.pending {
			fail("account %s: pending %d, entries sum to %d", a.ID, a.Pending, s.pending)
		}
		if a.Available < 0 || a.Pending < 0 {
			fail("account %s is below zero: available %d, pending %d", a.ID, a.Available, a.Pending)
		}
	}
	for _, sl := range slots {
		if !seen[sl.AccountID] {
			fail("slot %s has no account row", sl.ID)
		}
	}
	for id := range byAccount {
		if acct, err := ParseAccountID(id); err == nil && acct.TracksBalance() && !seen[id] {
			fail("account %s has entries but no account row", id)
		}
	}
	return errors.Join(errs...)
}

func closeRows(iterErr, closeErr error) error {
	if iterErr != nil {
		return iterErr
	}
	return closeErr
}
