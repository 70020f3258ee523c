package cryptopay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/apperr"
	"merchantpay/internal/merchants"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// Live crypto-pay runs on a provider's checkout (Binance Pay): the order is
// created at the provider between two database transactions, never inside
// one. The first transaction prices the deposit (consuming a cross
// deposit's quote) and is rolled back; the order is created with those
// amounts; the second transaction prices it again for real and stores the
// deposit with the provider's links. Should the second fail, the order is
// closed at the provider, so nobody can pay a checkout we do not know.

// OrdersWith makes live-mode deposits run on the router's order provider;
// without it every deposit opens the sandbox's hosted checkout.
func (s *Service) OrdersWith(r *rails.Router) { s.router = r }

// errPriced ends the pricing transaction, rolling it back.
var errPriced = errors.New("cryptopay: priced")

// liveProvider is the provider of ctx's mode, nil for the sandbox.
func (s *Service) liveProvider(tn tenant.Tenant) (rails.CryptoOrderProvider, error) {
	if s.router == nil {
		return nil, nil
	}
	return s.router.Orders(tn.Mode)
}

// startLive is StartDeposit on a live provider.
func (s *Service) startLive(ctx context.Context, tx *ent.Tx, tn tenant.Tenant, in DepositInput, prov rails.CryptoOrderProvider) (*Deposit, error) {
	if tx != nil {
		return nil, fmt.Errorf("cryptopay: a live checkout's provider call (the transport must run this request outside a transaction): %w", rails.ErrInTransaction)
	}
	ref := ReferencePrefix + uuid.NewString()
	var priced amountRow
	var enr *ent.CryptoPayEnrolment
	err := s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		if enr, priced, err = s.price(ctx, tx, in, ref); err != nil {
			return err
		}
		return errPriced
	})
	if !errors.Is(err, errPriced) {
		return nil, store.Classify(err)
	}
	now := s.clock.Now()
	order := rails.CryptoOrder{
		Reference:   ref,
		Amount:      money.FromMinor(priced.fromAmount, priced.fromCurrency).String(),
		Currency:    string(priced.fromCurrency),
		Description: *in.ProductName,
		ExpiresAt:   now.Add(s.cfg.Lifetime),
		WebhookURL:  s.cfg.PublicBaseURL + "/rails/" + prov.Provider() + "/webhook",
		ReturnURL:   enr.SuccessURL,
		CancelURL:   enr.FailureURL,
	}
	if in.SuccessURL != nil {
		order.ReturnURL = *in.SuccessURL
	}
	if in.FailureURL != nil {
		order.CancelURL = *in.FailureURL
	}
	created, err := prov.CreateOrder(ctx, order)
	if errors.Is(err, rails.ErrRefused) {
		// A definite refusal: no order was made, and the same request
		// would be refused again.
		return nil, apperr.Wrap(apperr.RailRefused, err,
			"the crypto-pay provider refused the checkout (%s); no order was made, and the same request will be refused again", err)
	}
	if err != nil {
		var ae *apperr.Error
		if errors.As(err, &ae) {
			return nil, err
		}
		return nil, apperr.Wrap(apperr.Unavailable, err, "the crypto-pay provider did not open the checkout; try again")
	}
	if created.ProviderReference == "" {
		return nil, apperr.New(apperr.Unavailable, "the crypto-pay provider answered without an order id; try again")
	}
	var out *Deposit
	err = s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		enr, row, err := s.price(ctx, tx, in, ref)
		if err != nil {
			return err
		}
		if row.fromAmount != priced.fromAmount || row.fromCurrency != priced.fromCurrency {
			return apperr.New(apperr.Unavailable, "the deposit's price changed while its checkout was opened; try again")
		}
		name, err := merchants.Name(ctx, tx.Client(), tn.MerchantID)
		if err != nil {
			return err
		}
		if out, err = s.insert(ctx, tx.Client(), in, enr, row, ref, name, &liveOrder{created: created, provider: prov.Provider()}); err != nil {
			return err
		}
		return s.emitStarted(ctx, tx, in, out.Transaction)
	})
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if cerr := prov.CloseOrder(cctx, ref); cerr != nil && !errors.Is(cerr, rails.ErrNoRecord) {
			err = errors.Join(err, fmt.Errorf("cryptopay: close the provider's order of %s: %w", ref, cerr))
		}
		return nil, store.Classify(err)
	}
	return out, nil
}

// liveOrder is the provider's checkout of a live deposit.
type liveOrder struct {
	created  rails.CryptoOrderCreated
	provider string
}

// Outcomes of an order notice.
const (
	OrderApplied = "applied"
	OrderIgnored = "ignored"
	OrderFlagged = "flagged"
)

// ByProviderReference finds a live crypto-pay deposit by the trade number
// or the order id its provider knows it by; nil when there is none. It
// reads in tx, the caller's transaction, or outside any when tx is nil.
func (s *Service) ByProviderReference(ctx context.Context, tx *ent.Tx, tradeNo, orderID string) (*ent.Transaction, error) {
	ctx = tenant.System(ctx)
	q := s.db.ClientOf(tx).Transaction.Query().Where(transaction.PaymentSlug(PaymentSlug))
	switch {
	case tradeNo != "":
		q.Where(transaction.ProviderReference(tradeNo))
	case orderID != "":
		q.Where(transaction.PrepayID(orderID))
	default:
		return nil, nil
	}
	t, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return t, store.Classify(err)
}

// ApplyOrder ends the live deposit t by its provider's word, in tx, the
// caller's transaction: paid completes it (credit and event), closed
// fails it as cancelled. An amount or currency other than the order's is
// flagged, not credited. It returns what it did and, when flagged, why.
func (s *Service) ApplyOrder(ctx context.Context, tx *ent.Tx, t *ent.Transaction, status, amount, currency string) (string, string, error) {
	ctx = tenant.With(ctx, tenantOf(t))
	if t.Status != StatusPending || t.RailsFlag != nil {
		return OrderIgnored, "the deposit is " + t.Status, nil
	}
	now := s.clock.Now()
	switch status {
	case rails.OrderPaid:
		if why := orderMismatch(t, amount, currency); why != "" {
			err := tx.Client().Transaction.UpdateOneID(t.ID).SetRailsFlag(why).
				ClearNextRunAt().ClearLeaseOwner().ClearLeaseUntil().SetUpdatedAt(now).Exec(ctx)
			return OrderFlagged, why, store.Classify(err)
		}
		done, err := s.finish(ctx, tx, t, "", now)
		return orderApplied(done), "", err
	case rails.OrderClosed, rails.OrderExpired, rails.OrderFailed:
		reason := RejectCancelled
		if status != rails.OrderClosed || expired(t, now) {
			reason = rejectExpired(*t.ExpiresAt)
		}
		done, err := s.finish(ctx, tx, t, reason, now)
		return orderApplied(done), "", err
	}
	return OrderIgnored, "order status " + status, nil
}

func orderApplied(done *ent.Transaction) string {
	if done != nil {
		return OrderApplied
	}
	return OrderIgnored
}

// orderMismatch says how a provider's paid amount differs from what the
// payer was asked for (from_amount in from_currency), or "". An order priced
// in a fiat currency is paid in rails.FiatOrderCurrency at the provider's
// own conversion: reported in that asset, its amount is the provider's
// conversion of ours and has nothing of ours to be compared with.
func orderMismatch(t *ent.Transaction, amount, currency string) string {
	cur := money.Currency(t.FromCurrency)
	want := money.FromMinor(t.FromAmount, cur)
	if currency == rails.FiatOrderCurrency && cur.IsFiat() {
		return ""
	}
	if currency != "" && currency != t.FromCurrency {
		return fmt.Sprintf("currency mismatch: the provider reports %s, the order is in %s", currency, t.FromCurrency)
	}
	if amount == "" {
		return ""
	}
	got, err := decimal.NewFromString(amount)
	if err != nil {
		return fmt.Sprintf("amount mismatch: the provider reports %q, the order is for %s %s", amount, want, cur)
	}
	if !got.Equal(want) {
		return fmt.Sprintf("amount mismatch: the provider reports %s %s, the order is for %s %s", got, cur, want, cur)
	}
	return ""
}

// expireLive settles a live checkout at its expiry by asking its provider
// first, outside any transaction: paid meanwhile (a lost webhook) completes
// it; still open is closed at the provider, then failed as expired.
func (s *Service) expireLive(ctx context.Context, t *ent.Transaction, owner string) (bool, error) {
	prov, err := s.router.Orders(t.Mode)
	if err != nil {
		return false, err
	}
	st, err := prov.QueryOrder(ctx, t.Reference)
	s.looked(prov.Provider(), st.Status, err)
	switch {
	case errors.Is(err, rails.ErrNoRecord):
		st.Status = rails.OrderExpired
	case err != nil:
		return false, err
	case st.Status == rails.OrderPending:
		if err := prov.CloseOrder(ctx, t.Reference); err != nil && !errors.Is(err, rails.ErrNoRecord) {
			return false, err
		}
		st.Status = rails.OrderExpired
	}
	ok := false
	err = s.db.Within(tenant.With(ctx, tenantOf(t)), nil, func(ctx context.Context, tx *ent.Tx) error {
		// Only the lease holder may end it here; a webhook may have ended
		// it since the claim.
		cur, err := tx.Client().Transaction.Query().Where(transaction.ID(t.ID), transaction.LeaseOwner(owner)).Only(ctx)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		outcome, _, err := s.ApplyOrder(ctx, tx, cur, st.Status, st.Amount, st.Currency)
		ok = outcome == OrderApplied
		return err
	})
	return ok, store.Classify(err)
}

func (s *Service) looked(provider, status string, err error) {
	if s.Looked == nil {
		return
	}
	if err != nil && !errors.Is(err, rails.ErrNoRecord) {
		status = "error"
	} else if err != nil {
		status = "no_record"
	}
	s.Looked(provider, status)
}
