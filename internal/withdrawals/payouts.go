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
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
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
	// Router, when set, picks each payout's provider by its mode and
	// country (live mode on real providers); else every payout goes to the
	// rails given to Payouts.
	Router *rails.Router
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

// Retry backoff after an error of the rails: doubling from retryBase, at
// most retryMax.
const (
	retryBase = 5 * time.Second
	retryMax  = 5 * time.Minute
)

// jobTimeout bounds the work on one payout, which runs on after a shutdown
// began so that SIGTERM drains the work in hand instead of abandoning it to
// the lease.
const jobTimeout = 30 * time.Second

// Payouts is the payout worker: it submits accepted withdrawals to the rails
// and records their outcome. It keeps no state between passes (everything is
// in the transaction rows), so any number of instances may run it on one
// database and a restart loses nothing.
type Payouts struct {
	s      *Service
	router *rails.Router
	opt    PayoutOptions
}

// Payouts returns the payout worker over r. Withdraw wakes it after each
// commit on this instance.
func (s *Service) Payouts(r rails.Rails, opt PayoutOptions) *Payouts {
	router := opt.Router
	if router == nil {
		router = &rails.Router{Sandbox: r}
	}
	return &Payouts{s: s, router: router, opt: opt.withDefaults()}
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

// recordWithin bounds how long the rails' answers wait to be recorded while
// the rest of a batch is sent: the sandbox answers at once, so one pass is
// recorded in one transaction, but slow rails must not hold answers until
// the leases run out.
const recordWithin = time.Second

// recordAll records answers, pending and settled ones in one database
// transaction (see jobs.InBatch: should it fail, each is recorded on its
// own), and returns the failures. A failed payout is recorded in a
// transaction of its own: reversing its debit locks the merchant's balance
// row, which one batch must not hold for many merchants at once (their
// withdrawals would wait for the batch, and two transactions taking the
// same rows in another order could deadlock).
func (p *Payouts) recordAll(ctx context.Context, answers []answer) []error {
	// Recording runs on after a shutdown began, so that answers already
	// given by the rails (a submission above all) are kept.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jobTimeout)
	defer cancel()
	var batch, alone []answer
	for _, a := range answers {
		if a.reverses() {
			alone = append(alone, a)
		} else {
			batch = append(batch, a)
		}
	}
	var errs []error
	report := func(a answer, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("payouts: %s: %w", a.t.Reference, err))
		}
	}
	for i, err := range jobs.InBatchAll(rctx, p.s.db, batch, p.recordBatch) {
		report(batch[i], err)
		if err == nil && batch[i].err == nil && batch[i].mismatch == "" && batch[i].res.Status == rails.PayoutSucceeded {
			p.completed(StatusSuccess)
		}
	}
	for _, a := range alone {
		err := p.s.db.Tx(rctx, func(ctx context.Context) error { return p.record(ctx, a) })
		report(a, err)
		if err == nil {
			p.completed(StatusFailed)
		}
	}
	return errs
}

func (p *Payouts) completed(status string) {
	if p.opt.Completed != nil {
		p.opt.Completed(status)
	}
}

// answer is what the rails said about one claimed payout, to be recorded.
type answer struct {
	t   *ent.Transaction
	res rails.PayoutResult
	// submittedAt is set when this step submitted the payout.
	submittedAt *time.Time
	// err is a failure of the rails (or a status they should not answer):
	// the payout is tried again after a backoff.
	err error
	// provider carried the payout; live is true for a real provider.
	provider string
	live     bool
	// mismatch, when not empty, says how the provider's amount differs
	// from ours: the payout is flagged, not settled.
	mismatch string
}

// reverses reports whether recording a reverses the merchant's debit.
func (a answer) reverses() bool {
	return a.err == nil && a.mismatch == "" && a.res.Status == rails.PayoutFailed
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

// recordBatch records answers that reverse nothing in the transaction
// carried by ctx: the payouts still pending together (see pendingAll), the
// successes together (see succeedAll), every other answer with its own
// update.
func (p *Payouts) recordBatch(ctx context.Context, answers []answer) error {
	var paidOut []paid
	var waiting []answer
	for _, a := range answers {
		switch {
		case a.err == nil && a.mismatch == "" && a.res.Status == rails.PayoutSucceeded:
			paidOut = append(paidOut, paid{t: a.t, res: a.res})
		case a.err == nil && a.res.Status == rails.PayoutPending:
			waiting = append(waiting, a)
		default:
			if err := p.record(ctx, a); err != nil {
				return err
			}
		}
	}
	if err := p.pendingAll(ctx, waiting); err != nil {
		return err
	}
	if len(paidOut) == 0 {
		return nil
	}
	_, err := p.s.succeedAll(ctx, p.opt.Owner, paidOut)
	return err
}

// pendingAll records the answers of payouts the rails still hold (see
// pending): one statement on PostgreSQL (see pendingRows), one conditional
// update each on SQLite.
func (p *Payouts) pendingAll(ctx context.Context, waiting []answer) error {
	if len(waiting) == 0 {
		return nil
	}
	if !p.s.db.IsPostgres() {
		for _, a := range waiting {
			if err := p.pending(ctx, a, a.submittedAt); err != nil {
				return err
			}
		}
		return nil
	}
	now := p.s.clock.Now()
	n := len(waiting)
	ids, next, refs, submitted := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, a := range waiting {
		ids[i], next[i], refs[i] = a.t.ID, store.PGTime(p.nextCheck(a, now)), a.res.RailsReference
		if a.submittedAt != nil {
			submitted[i] = store.PGTime(*a.submittedAt)
		}
	}
	return pendingRows(ctx, p.s.db.Client(ctx), p.opt.Owner, now, ids, next, refs, submitted)
}

// record moves the payout on by the rails' answer, in the transaction
// carried by ctx.
func (p *Payouts) record(ctx context.Context, a answer) error {
	if a.err != nil {
		return p.retry(ctx, a.t)
	}
	if a.mismatch != "" {
		return p.flag(ctx, a)
	}
	var err error
	switch a.res.Status {
	case rails.PayoutPending:
		err = p.pending(ctx, a, a.submittedAt)
	case rails.PayoutSucceeded:
		_, err = p.s.Succeed(ctx, a.t, p.opt.Owner, a.res)
	case rails.PayoutFailed:
		_, err = p.s.Fail(ctx, a.t, p.opt.Owner, a.res)
	}
	return err
}

// mine narrows an update to t while it is pending and leased to owner.
func mine(c *ent.Client, t *ent.Transaction, owner string) *ent.TransactionUpdate {
	return c.Transaction.Update().Where(transaction.ID(t.ID), transaction.Status(StatusPending), jobs.Mine(owner))
}

// pending records that the rails still hold the payout: look again at
// res.NextCheck, and remember the submission.
func (p *Payouts) pending(ctx context.Context, a answer, submittedAt *time.Time) error {
	ctx = tenant.System(ctx)
	t, res := a.t, a.res
	now := p.s.clock.Now()
	u := mine(p.s.db.Client(ctx), t, p.opt.Owner).
		SetNextRunAt(p.nextCheck(a, now)).ClearLeaseOwner().ClearLeaseUntil().SetUpdatedAt(now)
	if res.RailsReference != "" {
		u.SetRailsReference(res.RailsReference)
	}
	if submittedAt != nil {
		u.SetSubmittedAt(*submittedAt)
	}
	_, err := u.Save(ctx) // no row: no longer ours, and the new owner records
	return err
}

// nextCheck is when to ask the rails again about a payout they still hold:
// when the sandbox says; for a live provider, whose webhook normally tells
// the outcome first, after ReconcileAfter (the reconciling look-up).
func (p *Payouts) nextCheck(a answer, now time.Time) time.Time {
	if a.live {
		return now.Add(p.opt.ReconcileAfter)
	}
	if a.res.NextCheck.After(now) {
		return a.res.NextCheck
	}
	return now.Add(p.opt.Recheck)
}

// retry gives the payout back after an error of the rails, to be tried
// again after a backoff.
func (p *Payouts) retry(ctx context.Context, t *ent.Transaction) error {
	ctx = tenant.System(ctx)
	now := p.s.clock.Now()
	wait := retryBase << min(t.Attempts, 10)
	if wait > retryMax {
		wait = retryMax
	}
	_, err := mine(p.s.db.Client(ctx), t, p.opt.Owner).
		SetNextRunAt(now.Add(wait)).AddAttempts(1).ClearLeaseOwner().ClearLeaseUntil().Save(ctx)
	return err
}
