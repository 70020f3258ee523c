package withdrawals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/banks"
	"merchantpay/internal/jobs"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/tracing"
)

// PayoutOptions tune the payout worker. Zero values take the defaults
// (jobs.WorkerOptions' for the claiming ones).
type PayoutOptions struct {
	jobs.WorkerOptions
	// Recheck is the earliest next look at a pending payout when the rails
	// name no time; default 5s.
	Recheck time.Duration
	// Tracer, when not nil, gives each step of a payout (its submission or
	// its check with the rails) a span linked to the request that made it.
	Tracer trace.Tracer
	// Completed, when not nil, is told of every payout this worker ends:
	// StatusSuccess or StatusFailed (the metrics).
	Completed func(status string)
	// Gap is the least real time between two passes; default 25ms. Every
	// accepted withdrawal wakes the worker, and under load one claim per
	// commit would compete with the accepting transactions for the
	// database; a short gap gathers a burst of them into one claim.
	Gap time.Duration
	// ReconcileAfter is when a live provider's pending payout is looked up
	// again if no webhook settled it (RAILS_RECONCILE_AFTER); default 10m.
	ReconcileAfter time.Duration
	// Looked, when not nil, is told of every look-up of a live payout the
	// worker made (the reconciler's metric): provider and the status found,
	// or "error".
	Looked func(provider, status string)
	// Flagged, when not nil, is told of a payout left unsettled because
	// its provider's amount differs from ours.
	Flagged func(provider string)
}

func (o PayoutOptions) withDefaults() PayoutOptions {
	o.WorkerOptions = o.WorkerOptions.WithDefaults()
	if o.Recheck <= 0 {
		o.Recheck = 5 * time.Second
	}
	if o.Gap <= 0 {
		o.Gap = 25 * time.Millisecond
	}
	if o.ReconcileAfter <= 0 {
		o.ReconcileAfter = 10 * time.Minute
	}
	return o
}

// jobTimeout bounds the work on one payout, which runs on after a shutdown
// began so that SIGTERM drains the work in hand instead of abandoning it to
// the lease.
const jobTimeout = 30 * time.Second

// Payouts is the payout worker: it submits accepted withdrawals to the rails
// and records their outcome. It keeps no state between passes (everything is
// in the transaction rows), so any number of instances may run it on one
// database and a restart loses nothing.
type Payouts struct {
	s   *Service
	opt PayoutOptions
}

// Payouts returns the payout worker over the service's rails, which pick
// each payout's provider by its mode and country. Withdraw wakes it after
// each commit on this instance.
func (s *Service) Payouts(opt PayoutOptions) *Payouts {
	return &Payouts{s: s, opt: opt.withDefaults()}
}

// Run works on due payouts at every poll and wake-up until ctx ends.
func (p *Payouts) Run(ctx context.Context) {
	var last time.Time
	fails := &jobs.Failures{Log: p.opt.Log}
	jobs.Loop(ctx, p.opt.Poll, p.s.waker, func(ctx context.Context) {
		if wait := p.opt.Gap - time.Since(last); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		defer func() { last = time.Now() }()
		for ctx.Err() == nil {
			n, err := p.RunDue(ctx)
			if err != nil && ctx.Err() == nil {
				fails.Failed("payouts failed", err)
			}
			if n < p.opt.Batch {
				return
			}
		}
	})
}

// RunDue claims up to a batch of due pending withdrawals and moves each one
// step on: submit it to the rails, or ask the rails how it stands, then
// record the answers, many in one database transaction (see recordAll). It
// returns how many it claimed and the failures joined; a payout whose step
// failed is retried once its lease expires.
func (p *Payouts) RunDue(ctx context.Context) (int, error) {
	due, err := jobs.Claim(ctx, p.s.db, p.opt.Owner, p.s.clock.Now(), p.opt.Lease, p.opt.Batch,
		transaction.Type(Type), transaction.Status(StatusPending))
	if err != nil {
		return 0, fmt.Errorf("payouts: claim: %w", err)
	}
	var errs []error
	answers := make([]answer, 0, len(due))
	var first time.Time // when the oldest answer not yet recorded came
	for _, t := range due {
		if ctx.Err() != nil {
			break // the rest go back to the pool when their lease expires
		}
		a, err := p.tracedAsk(ctx, t)
		if err != nil {
			errs = append(errs, fmt.Errorf("payouts: %s: %w", t.Reference, err))
			continue
		}
		if a.err != nil {
			errs = append(errs, fmt.Errorf("payouts: %s: %w", t.Reference, a.err))
		}
		if len(answers) == 0 {
			first = time.Now()
		}
		answers = append(answers, a)
		// Slow rails: record what they said before it waits long.
		if time.Since(first) >= recordWithin {
			errs = append(errs, p.recordAll(ctx, answers)...)
			answers = answers[:0]
		}
	}
	errs = append(errs, p.recordAll(ctx, answers)...)
	return len(due), errors.Join(errs...)
}

// tracedAsk is ask in a span of its own, when the worker traces.
func (p *Payouts) tracedAsk(ctx context.Context, t *ent.Transaction) (answer, error) {
	if p.opt.Tracer == nil {
		return p.ask(ctx, t)
	}
	parent := ""
	if t.TraceParent != nil {
		parent = *t.TraceParent
	}
	ctx, span := p.opt.Tracer.Start(ctx, "payout", append(tracing.Link(parent),
		trace.WithAttributes(attribute.String("transaction.reference", t.Reference)))...)
	defer span.End()
	a, err := p.ask(ctx, t)
	switch {
	case err != nil:
		span.SetStatus(codes.Error, err.Error())
	case a.err != nil:
		span.SetStatus(codes.Error, a.err.Error())
	default:
		span.SetAttributes(attribute.String("payout.status", string(a.res.Status)))
	}
	return a, err
}

// PayoutOf is the rails' payout of withdrawal t: the beneficiary receives
// amount_settled.
func PayoutOf(t *ent.Transaction) (rails.Payout, error) {
	if t.Beneficiary == nil {
		return rails.Payout{}, fmt.Errorf("withdrawal %s has no beneficiary", t.Reference)
	}
	var b beneficiaryJSON
	if err := json.Unmarshal([]byte(*t.Beneficiary), &b); err != nil {
		return rails.Payout{}, fmt.Errorf("withdrawal %s: beneficiary: %w", t.Reference, err)
	}
	p := rails.Payout{Reference: t.Reference, Currency: money.Currency(t.Currency), Amount: t.AmountSettled,
		Country: countryOf(money.Currency(t.Currency)), BankCode: b.Bank,
		AccountNumber: b.AccountNumber, AccountName: b.AccountName, Narration: t.Narration}
	if p.Country == banks.CountryGH && b.Branch != nil {
		p.BranchCode = *b.Branch
	}
	return p, nil
}

// ask submits the claimed payout t to the rails, or asks them how it
// stands, outside any database transaction. An error means t cannot be
// described to the rails; it stays leased until its lease expires.
func (p *Payouts) ask(ctx context.Context, t *ent.Transaction) (answer, error) {
	payout, err := PayoutOf(t)
	if err != nil {
		return answer{}, err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jobTimeout)
	defer cancel()
	a := answer{t: t}
	prov, err := p.providerOf(ctx, &a, payout)
	if err != nil || a.err != nil {
		return a, err
	}
	if t.RailsReference == nil || t.SubmittedAt == nil {
		// Submitting is idempotent per reference (a live provider's adapter
		// looks the payout up before it submits), so a submission whose
		// answer was lost (a timeout, a crash) is simply made again.
		now := p.s.clock.Now()
		a.submittedAt = &now
		a.res, a.err = prov.SubmitPayout(ctx, payout)
	} else {
		a.res, a.err = prov.CheckPayout(ctx, rails.PayoutQuery{Payout: payout,
			RailsReference: *t.RailsReference, SubmittedAt: *t.SubmittedAt})
		p.looked(a)
	}
	a.read(payout)
	return a, nil
}
