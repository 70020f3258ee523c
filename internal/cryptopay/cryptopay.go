// Package cryptopay is the crypto-pay deposit method, started by
// POST /transactions/deposit: a merchant's enrolment, the start of a deposit
// (direct, or cross with a deposit quote), the hosted checkout's data and QR
// code, and the lifecycle pending → success (ledger credit) or failed
// (cancelled, or expired by a worker). Each step is one database transaction
// with its event.
//
// Crypto-pay works in live mode only: every operation but the completion
// refuses a test-mode caller with LIVE_MODE_ONLY, and a deposit needs an
// approved enrolment (NOT_ENROLLED before).
package cryptopay

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/ent/cryptopayenrolment"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/ledger"
	"merchantpay/internal/mail"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/rates"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/transactions"
	"merchantpay/internal/validate"
)

// Fixed values of a crypto-pay deposit transaction.
const (
	// Method is the only deposit_method of endpoint 6.
	Method      = rates.DepositMethodCryptoPay
	Type        = "DEPOSIT"
	PaymentSlug = "crypto-pay"
	Destination = "main_balance"
	// Channel: the deposit is started by an API call.
	Channel = "API"
	// FromParty and ToParty: a deposit comes from someone else to the merchant.
	FromParty       = "OTHER"
	ToParty         = "SELF"
	ReferencePrefix = transactions.DepositPrefix
	// TerminalType is the links' terminalType: the checkout is a web page.
	TerminalType = "WEB"
)

// Statuses of a crypto-pay deposit.
const (
	StatusPending = "pending"
	StatusSuccess = "success"
	StatusFailed  = "failed"
)

// Outcomes a completion asks for (POST /sandbox/deposits/crypto-pay/{id}).
const (
	OutcomeSuccess = "success"
	OutcomeFailed  = "failed"
)

// Fee bearers (default merchant).
const (
	BearerMerchant    = "merchant"
	BearerBeneficiary = "beneficiary"
)

// Enrolment statuses; the sandbox approves at once.
const (
	EnrolmentPending  = "PENDING"
	EnrolmentApproved = "APPROVED"
)

// Checkout lifetimes: a checkout's expireTime is at most 60 minutes after its
// start.
const (
	DefaultLifetime = 30 * time.Minute
	MaxLifetime     = 60 * time.Minute
)

// Text limits, in characters.
const (
	MaxProductName        = 200
	MaxProductDescription = 1000
	maxRateReference      = 200
)

// EnrolmentNoticeType is the event_type of the approval e-mail row: not an
// outbox event (no transaction), but the e-mail queue's notion of a topic.
const EnrolmentNoticeType = "crypto_pay.enrolment.approved"

// Fee is the operator's crypto-pay fee on direct deposits: Percent of the
// amount (1.5 means 1.5%) rounded down to the currency's minor unit, plus a
// Flat amount per currency. The zero value charges nothing, the default. A
// cross deposit's only fee is its quote's.
type Fee struct {
	Percent decimal.Decimal
	Flat    map[money.Currency]decimal.Decimal
}

// Validate checks the fee rule.
func (f Fee) Validate() error {
	if f.Percent.Sign() < 0 || f.Percent.GreaterThanOrEqual(decimal.New(100, 0)) {
		return fmt.Errorf("cryptopay: percentage fee %s is not in [0, 100)", f.Percent)
	}
	for c, v := range f.Flat {
		if _, ok := money.Parse(string(c)); !ok {
			return fmt.Errorf("cryptopay: flat fee in unknown currency %q", c)
		}
		if v.Sign() < 0 {
			return fmt.Errorf("cryptopay: flat fee %s %s is negative", v, c)
		}
		if _, err := money.ToMinor(v, c); err != nil {
			return fmt.Errorf("cryptopay: flat fee %s %s: %w", v, c, err)
		}
	}
	return nil
}

// On returns the fee, in minor units of c, on amount minor units of c.
func (f Fee) On(amount int64, c money.Currency) (int64, error) {
	var fee int64
	if v, ok := f.Flat[c]; ok {
		m, err := money.ToMinor(v, c)
		if err != nil {
			return 0, err
		}
		fee = m
	}
	if !f.Percent.IsZero() {
		pct, err := money.RoundQuo(money.FromMinor(amount, c).Mul(f.Percent), decimal.New(100, 0), c, money.Down)
		if err != nil {
			return 0, err
		}
		fee += pct
	}
	return fee, nil
}

// Config is the crypto-pay settings.
type Config struct {
	// PublicBaseURL is where the hosted checkout is reached
	// (PUBLIC_BASE_URL); the links point under it.
	PublicBaseURL string
	// Lifetime of a checkout; zero means DefaultLifetime, at most MaxLifetime.
	Lifetime time.Duration
	Fee      Fee
	// Simulations says in which modes Complete exists (the sandbox's
	// checkout and its completion endpoint).
	Simulations rails.Simulations
}

// Service runs crypto-pay.
type Service struct {
	db     *store.DB
	clock  clock.Clock
	ledger *ledger.Service
	rates  *rates.Service
	outbox *events.Outbox
	cfg    Config
	// router, when set, runs live-mode deposits on a provider (see
	// OrdersWith).
	router *rails.Router
	// Looked, when not nil, is told of each look-up of a live order at its
	// provider by the expiry worker: provider and status found (or error).
	Looked func(provider, status string)
}

// New returns the crypto-pay service; it refuses a bad configuration.
func New(db *store.DB, c clock.Clock, l *ledger.Service, r *rates.Service, o *events.Outbox, cfg Config) (*Service, error) {
	cfg.PublicBaseURL = strings.TrimRight(cfg.PublicBaseURL, "/")
	if msg := validate.HTTPURL(cfg.PublicBaseURL); msg != "" {
		return nil, fmt.Errorf("cryptopay: public base URL %q %s", cfg.PublicBaseURL, msg)
	}
	if cfg.Lifetime == 0 {
		cfg.Lifetime = DefaultLifetime
	}
	if cfg.Lifetime < time.Minute || cfg.Lifetime > MaxLifetime {
		return nil, fmt.Errorf("cryptopay: checkout lifetime %s is not between 1m and %s", cfg.Lifetime, MaxLifetime)
	}
	if err := cfg.Fee.Validate(); err != nil {
		return nil, err
	}
	return &Service{db: db, clock: c, ledger: l, rates: r, outbox: o, cfg: cfg}, nil
}

// ---- Enrolment ----

// EnrolInput is the enrolment request (GraphQL enrolCryptoPay). Nil means
// absent. Field errors name the GraphQL input fields, the only transport.
type EnrolInput struct {
	BusinessName *string
	LogoURL      *string
	Website      *string
	SuccessURL   *string
	FailureURL   *string
}

// ValidateEnrol collects every bad field of in.
func ValidateEnrol(in EnrolInput, f *apperr.Fields) {
	if in.BusinessName == nil {
		f.Add("businessName", "is required")
	} else if msg := validate.Name(*in.BusinessName); msg != "" {
		f.Add("businessName", "%s", msg)
	}
	for _, u := range []struct {
		field string
		v     *string
	}{{"logoUrl", in.LogoURL}, {"website", in.Website}, {"successUrl", in.SuccessURL}, {"failureUrl", in.FailureURL}} {
		if u.v == nil {
			f.Add(u.field, "is required")
		} else if msg := validate.HTTPURL(*u.v); msg != "" {
			f.Add(u.field, "%s", msg)
		}
	}
}

// liveTenant is the caller's tenant, which must be in live mode.
func liveTenant(ctx context.Context) (tenant.Tenant, error) {
	tn, ok := tenant.From(ctx)
	if !ok {
		return tenant.Tenant{}, tenant.ErrNoTenant
	}
	if tn.Mode != tenant.Live {
		return tn, apperr.New(apperr.LiveModeOnly, "crypto-pay works in live mode only: use your live secret key (SECK_LIVE_...)")
	}
	return tn, nil
}

// Enrol records the crypto-pay enrolment of the merchant of ctx (live mode
// only) and, the sandbox approving at once, marks it APPROVED and queues the
// approval e-mail to the merchant's address, in one database transaction.
// Enrolling again replaces the details and sends a new approval. That
// transaction is tx, the request's, handed to it, or, when tx is nil
// (tests), one of its own.
func (s *Service) Enrol(ctx context.Context, tx *ent.Tx, in EnrolInput) (*ent.CryptoPayEnrolment, error) {
	tn, err := liveTenant(ctx)
	if err != nil {
		return nil, err
	}
	var f apperr.Fields
	ValidateEnrol(in, &f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	var out *ent.CryptoPayEnrolment
	err = s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		now := s.clock.Now()
		err := c.CryptoPayEnrolment.Create().SetID("cpe_"+uuid.NewString()).
			SetBusinessName(strings.TrimSpace(*in.BusinessName)).SetLogoURL(*in.LogoURL).SetWebsite(*in.Website).
			SetSuccessURL(*in.SuccessURL).SetFailureURL(*in.FailureURL).
			SetStatus(EnrolmentApproved).SetApprovedAt(now).SetCreatedAt(now).SetUpdatedAt(now).
			OnConflictColumns(cryptopayenrolment.FieldMerchantID, cryptopayenrolment.FieldMode).
			UpdateNewValues().Exec(ctx)
		if err != nil {
			return err
		}
		if out, err = c.CryptoPayEnrolment.Query().Only(ctx); err != nil {
			return err
		}
		return s.notifyApproval(ctx, c, tn, out)
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return out, nil
}

// notifyApproval queues the approval e-mail in the notification e-mail
// table, which the mailer sends (or keeps and logs without SMTP), with c,
// the client of the caller's transaction.
func (s *Service) notifyApproval(ctx context.Context, c *ent.Client, tn tenant.Tenant, e *ent.CryptoPayEnrolment) error {
	m, err := c.Merchant.Get(ctx, tn.MerchantID)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	subject := "Your crypto-pay enrolment is approved"
	body := fmt.Sprintf("Hello %s,\n\nYour crypto-pay enrolment (%s mode) is approved: you can now start crypto-pay deposits "+
		"with POST /transactions/deposit.\n\nBusiness name: %s\nLogo: %s\nWebsite: %s\nSuccess URL: %s\nFailure URL: %s\n",
		m.Name, tn.Mode, e.BusinessName, e.LogoURL, e.Website, e.SuccessURL, e.FailureURL)
	return c.EmailNotification.Create().SetID("eml_" + uuid.NewString()).
		SetEventID("enr_" + uuid.NewString()).SetEventType(EnrolmentNoticeType).
		SetToAddress(m.Email).SetSubject(subject).SetBody(body).SetStatus(mail.StatusPending).
		SetNextAttemptAt(now).SetCreatedAt(now).SetUpdatedAt(now).Exec(ctx)
}

// Enrolment returns the approved enrolment of the merchant of ctx, read in
// tx, the caller's transaction, or outside any when tx is nil:
// LIVE_MODE_ONLY in test mode, NOT_ENROLLED when there is none.
func (s *Service) Enrolment(ctx context.Context, tx *ent.Tx) (*ent.CryptoPayEnrolment, error) {
	if _, err := liveTenant(ctx); err != nil {
		return nil, err
	}
	return enrolmentIn(ctx, s.db.ClientOf(tx))
}

// enrolmentIn is Enrolment read with c, the client of the caller's
// transaction.
func enrolmentIn(ctx context.Context, c *ent.Client) (*ent.CryptoPayEnrolment, error) {
	if _, err := liveTenant(ctx); err != nil {
		return nil, err
	}
	e, err := c.CryptoPayEnrolment.Query().
		Where(cryptopayenrolment.Status(EnrolmentApproved)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotEnrolled,
			"crypto-pay needs an approved enrolment first: enrol with the GraphQL mutation enrolCryptoPay")
	}
	if err != nil {
		return nil, store.Classify(err)
	}
	return e, nil
}
