// Package railnotices receives live providers' webhooks (POST
// /rails/{provider}/webhook): it verifies each delivery before reading it,
// records every fact it tells once (a repeated delivery is acknowledged and
// changes nothing) and acts on it in the same database transaction: a
// payout's outcome settles, refunds or reverses the withdrawal, an inflow
// into a virtual account books a deposit, a crypto order's outcome ends
// the crypto-pay deposit.
package railnotices

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"merchantpay/ent"
	"merchantpay/ent/railsnotice"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/cryptopay"
	"merchantpay/internal/deposits"
	"merchantpay/internal/metrics"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/withdrawals"
)

// MaxBody bounds a provider's delivery.
const MaxBody = 1 << 20

// Outcomes recorded with a notice (and counted, with these, in the
// webhooks metric).
const (
	Applied            = "applied"
	Ignored            = "ignored"
	Flagged            = "flagged"
	UnknownAccount     = "unknown_account"
	UnknownTransaction = "unknown_transaction"
	DuplicateInflow    = "duplicate_inflow"
	// Unbooked: an inflow the account's rules refuse, which the provider
	// cannot send back; kept for an operator.
	Unbooked = "unbooked"
)

// Service is the receiver of providers' webhooks.
type Service struct {
	DB          *store.DB
	Clock       clock.Clock
	Router      *rails.Router
	Withdrawals *withdrawals.Service
	Deposits    *deposits.Service
	CryptoPay   *cryptopay.Service
	Log         *slog.Logger
	// Metrics may be nil.
	Metrics *metrics.Rails
	// Fail writes an error answer in the API's envelope.
	Fail func(w http.ResponseWriter, r *http.Request, err error)
	// Owner is the lease owner a notice takes a payout under (jobs.Owner).
	Owner string
}

// Handler answers POST /rails/{provider}/webhook for provider.
func (s *Service) Handler(provider string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, provider) })
}

func (s *Service) serve(w http.ResponseWriter, r *http.Request, provider string) {
	recv, ok := s.Router.Receiver(provider)
	if !ok {
		s.Fail(w, r, apperr.New(apperr.NotFound, "no route for %s %s: %s is not a configured provider", r.Method, r.URL.Path, provider))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.Fail(w, r, apperr.New(apperr.MethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		s.Metrics.Webhook(provider, "unreadable")
		s.Fail(w, r, apperr.New(apperr.PayloadTooLarge, "the delivery is larger than %d bytes or was cut off", MaxBody))
		return
	}
	ctx := r.Context()
	// Verified before anything reads it: a forged delivery changes nothing.
	if err := recv.Verify(ctx, r.Header, body); err != nil {
		s.Metrics.Webhook(provider, "bad_signature")
		s.log().Warn("provider webhook refused: bad signature", "provider", provider, "err", err)
		s.Fail(w, r, apperr.New(apperr.Unauthorized, "the delivery's signature does not verify"))
		return
	}
	notices, err := recv.Notices(body)
	if err != nil {
		s.Metrics.Webhook(provider, "unreadable")
		s.log().Error("provider webhook verified but not readable", "provider", provider, "err", err)
		s.Fail(w, r, apperr.New(apperr.BadRequest, "the delivery could not be read"))
		return
	}
	fresh := len(notices) == 0 // a delivery telling nothing is not a repeat
	for _, n := range notices {
		dup, err := s.Process(ctx, provider, n, body)
		if err != nil {
			// The provider delivers again; nothing of this notice stayed.
			s.Metrics.Webhook(provider, "error")
			s.log().Error("provider webhook not processed", "provider", provider, "key", n.Key, "err", err)
			s.Fail(w, r, apperr.New(apperr.Internal, "the delivery could not be processed; deliver it again"))
			return
		}
		fresh = fresh || !dup
	}
	outcome := "duplicate"
	if fresh {
		outcome = "processed"
	}
	s.Metrics.Webhook(provider, outcome)
	ct, ack := recv.Ack()
	if ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(ack)
}

// Process acts on one verified notice of provider in one database
// transaction with its record; dup reports a notice recorded before, which
// changes nothing.
func (s *Service) Process(ctx context.Context, provider string, n rails.Notice, body []byte) (dup bool, err error) {
	if n.Key == "" {
		return false, errors.New("railnotices: a notice without a key cannot be deduplicated")
	}
	ctx = tenant.System(ctx)
	err = s.DB.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		seen, err := c.RailsNotice.Query().Where(railsnotice.Provider(provider), railsnotice.Key(n.Key)).Exist(ctx)
		if err != nil {
			return err
		}
		if seen {
			dup = true
			return nil
		}
		r, err := s.apply(ctx, tx, provider, n)
		if err != nil {
			return err
		}
		create := c.RailsNotice.Create().SetProvider(provider).SetKey(n.Key).SetKind(r.kind).
			SetReference(r.reference).SetOutcome(r.outcome).SetCreatedAt(s.Clock.Now())
		if r.detail != "" {
			create.SetDetail(r.detail)
		}
		if r.keepBody {
			create.SetBody(string(body))
		}
		return create.Exec(ctx)
	})
	if store.IsUniqueViolation(err) {
		// Another delivery of the same notice committed first: everything
		// this one did is rolled back.
		return true, nil
	}
	return dup, store.Classify(err)
}

// result is what a notice did.
type result struct {
	kind, reference, outcome, detail string
	// keepBody keeps the delivery for an operator.
	keepBody bool
}

func (s *Service) apply(ctx context.Context, tx *ent.Tx, provider string, n rails.Notice) (result, error) {
	switch {
	case n.Payout != nil:
		return s.payout(ctx, tx, provider, *n.Payout)
	case n.Inflow != nil:
		return s.inflow(ctx, tx, provider, *n.Inflow)
	case n.Order != nil:
		return s.order(ctx, tx, provider, *n.Order)
	}
	return result{kind: "other", outcome: Ignored}, nil
}

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}
