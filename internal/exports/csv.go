package exports

import (
	"context"
	"encoding/csv"
	"io"
	"strings"

	"github.com/shopspring/decimal"

	"merchantpay/internal/page"
	"merchantpay/internal/tenant"
	"merchantpay/internal/transactions"
	"merchantpay/present/jsonx"
	"merchantpay/present/txview"
)

// Columns are the CSV's header, reference first; each value is the
// transaction's field as the API prints it (amounts' exact digits, times
// in UTC with milliseconds), empty for null.
var Columns = []string{
	"reference", "merchant_reference", "type", "status", "currency", "amount", "fee", "amount_charged",
	"amount_settled", "created_at", "from_currency", "from_amount", "to_currency", "to_amount", "trx_rate",
	"fee_bearer", "purpose", "channel", "narration", "settled_at", "reject_reason", "wallet_reference",
	"account_reference", "updated_at",
}

func num(n jsonx.Num) string { return decimal.Decimal(n).String() }

func numPtr(n *jsonx.Num) string {
	if n == nil {
		return ""
	}
	return num(*n)
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// text guards free text that comes from outside the merchant (a sender's
// narration, a bank's reason) which a spreadsheet would run as a formula:
// such a value gets a leading apostrophe (the usual neutraliser), so it
// shows as text. Every other value is exactly the API's.
func text(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func row(v txview.Transaction) []string {
	return []string{
		v.Reference, str(v.MerchantReference), v.Type, v.Status, v.Currency, num(v.Amount), num(v.Fee),
		num(v.AmountCharged), num(v.AmountSettled), v.CreatedAt, v.FromCurrency, num(v.FromAmount),
		str(v.ToCurrency), numPtr(v.ToAmount), numPtr(v.TrxRate), v.FeeBearer, v.Purpose, v.Channel,
		text(v.Narration), str(v.SettledAt), text(str(v.RejectReason)), str(v.WalletReference.Value),
		str(v.AccountReference), v.UpdatedAt,
	}
}

// WriteCSV writes the header and every transaction of t that f selects,
// newest first, reading them a page at a time (never all at once); after
// each page it calls flushed, which may extend the answer's deadline.
func (s *Service) WriteCSV(ctx context.Context, w io.Writer, t tenant.Tenant, f transactions.Filter, flushed func()) error {
	ctx = tenant.With(ctx, t)
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns); err != nil {
		return err
	}
	p := page.Params{Limit: page.MaxLimit}
	for {
		rows, info, err := s.txs.List(ctx, f, p)
		if err != nil {
			return err
		}
		for _, tx := range rows {
			if err := cw.Write(row(txview.View(tx))); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		flushed()
		if !info.HasMore || len(rows) == 0 {
			return nil
		}
		c := transactions.Cursor(rows[len(rows)-1])
		p.After = &c
	}
}
