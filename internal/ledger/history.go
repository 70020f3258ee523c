package ledger

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/ledgerentry"
	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
	"merchantpay/internal/page"
	"merchantpay/internal/store"
)

// HistoryEntry is one ledger entry of a merchant's available balance, with
// the balance it left.
type HistoryEntry struct {
	ID        int64
	CreatedAt time.Time
	Currency  money.Currency
	// Amount is signed minor units: positive credits the balance.
	Amount int64
	// BalanceAfter is the available balance after this entry (and every
	// entry before it).
	BalanceAfter   int64
	TransactionRef string
	Memo           string
}

// ParseCurrency reads a supported currency code, naming field otherwise.
func ParseCurrency(code, field string, f *apperr.Fields) money.Currency {
	c, ok := money.Parse(code)
	if !ok {
		f.Add(field, "must be one of %s", currencyList())
	}
	return c
}

// HistoryCursorID is the form of the ids in History's cursors: the
// entries' serial ids.
var HistoryCursorID page.IDForm = page.Serial

// HistoryCursor is an entry's position in History: entries are ordered by
// id, which the cursor carries; its time is the entry's, for show.
func HistoryCursor(e HistoryEntry) page.Cursor {
	return page.Cursor{Time: e.CreatedAt, ID: strconv.FormatInt(e.ID, 10)}
}

// History returns a page of the entries of the ctx tenant's available
// balance in currency c, newest first, each with the balance after it. A
// cursor that is not an entry's (HistoryCursor) is refused as cursorField.
func (s *Service) History(ctx context.Context, c money.Currency, p page.Params, cursorField string) ([]HistoryEntry, page.Info, error) {
	t, err := tenantOf(ctx)
	if err != nil {
		return nil, page.Info{}, err
	}
	account := MerchantAccount(t, c).ID()
	q := s.db.Reader().LedgerEntry.Query().
		Where(ledgerentry.AccountID(account), ledgerentry.Bucket(string(Available)))
	if p.After != nil {
		after, err := strconv.ParseInt(p.After.ID, 10, 64)
		if err != nil || after < 1 {
			var f apperr.Fields
			f.Add(cursorField, "is not a cursor this service issued")
			return nil, page.Info{}, f.Err()
		}
		q = q.Where(ledgerentry.IDLT(after))
	}
	rows, err := q.Order(ent.Desc(ledgerentry.FieldID)).Limit(p.Limit + 1).All(ctx)
	if err != nil {
		return nil, page.Info{}, store.Classify(fmt.Errorf("ledger: history: %w", err))
	}
	out := make([]HistoryEntry, len(rows))
	for i, e := range rows {
		out[i] = HistoryEntry{ID: e.ID, CreatedAt: e.CreatedAt, Currency: c, Amount: e.Amount,
			TransactionRef: e.TransactionRef, Memo: e.Memo}
	}
	out, info := page.Cut(out, p.Limit, HistoryCursor)
	if len(out) == 0 {
		return out, info, nil
	}
	// The balance after the page's newest entry is the sum of the entries
	// up to it; each older one's follows by taking the newer amount back.
	sum, err := s.sumThrough(ctx, account, out[0].ID)
	if err != nil {
		return nil, page.Info{}, store.Classify(fmt.Errorf("ledger: history: %w", err))
	}
	for i := range out {
		if i > 0 {
			sum -= out[i-1].Amount
		}
		out[i].BalanceAfter = sum
	}
	return out, info, nil
}

// sumThrough is the sum of the available entries of account up to entry id.
func (s *Service) sumThrough(ctx context.Context, account string, id int64) (int64, error) {
	rows, err := s.db.Reader().QueryContext(ctx, historySumQuery(s.db.IsPostgres()), account, string(Available), id)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var sum int64
	if rows.Next() {
		if err := rows.Scan(&sum); err != nil {
			return 0, err
		}
	}
	return sum, rows.Err()
}

func historySumQuery(postgres bool) string {
	q := "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) FROM ledger_entries WHERE account_id = ? AND bucket = ? AND id <= ?"
	if postgres {
		q = "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) FROM ledger_entries WHERE account_id = $1 AND bucket = $2 AND id <= $3"
	}
	return q
}
