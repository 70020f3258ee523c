package withdrawals

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/apperr"
	"merchantpay/internal/events"
	"merchantpay/internal/idem"
	"merchantpay/internal/ledger"
	"merchantpay/internal/merchants"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/transactions"
)

// Batches of withdrawals. Every direct withdrawal of a merchant in one
// currency debits the same balance, whose row stays locked until the
// commit: one transaction per withdrawal would queue them all on it.
// WithdrawIn therefore hands a direct withdrawal, keyed or not, to the
// batch of its balance: withdrawals that arrive while a batch of their
// balance runs wait and go together in the next one, in one transaction:
//
//  1. BEGIN.
//  2. The keyed members' keys: their advisory locks, then their stored
//     answers (idem.LockAll). A member whose key holds an answer, or runs
//     elsewhere, is answered from that and leaves the batch.
//  3. Merchant references: one SELECT of those already taken; a member
//     whose reference is taken, or was used by an earlier member, is
//     refused on its own (DUPLICATE_REFERENCE).
//  4. The balance: its row and slots locked (ledger.Service.Hold); the
//     members, in arrival order, take what they charge while it lasts; the
//     others are refused on their own (INSUFFICIENT_BALANCE).
//  5. One statement for the accepted members (ledger.Service.PayoutAll):
//     their rows, their events, their ledger entries, the balance.
//  6. Each member gets its outcome; its handler renders its answer; the
//     keyed members' answers, refusals included, are stored in one
//     statement (idem.SaveAll).
//  7. COMMIT; then every member returns its answer.
//
// A refused member writes nothing, so no savepoint is needed. Should
// step 5 fail on a unique index (a reference taken outside the batch
// since step 3), nothing was answered yet: the batch rolls back and each
// member runs again in a batch of its own, where that failure is its
// own. Any other failure answers every member with it (nothing commits).
//
// Cross withdrawals (a quote to consume, a balance known only from it)
// run in a transaction of their own (idem.Seat.Tx).

// maxBatch bounds the members of one batch.
const maxBatch = 64

// maxRunning is how many batches of one balance may run at once: while
// one holds the balance, the next locks its members' keys and reads their
// references, so that the balance is never idle between two batches.
const maxRunning = 2

// batchTimeout bounds one batch's transaction, whoever waits on it.
const batchTimeout = 30 * time.Second

// batches queues withdrawals by balance.
type batches struct {
	mu      sync.Mutex
	waiting map[string][]*member
	running map[string]int
}

// member is one withdrawal in a batch.
type member struct {
	// ctx is the member's request's: the batch's span and log lines go
	// under its first member's.
	ctx  context.Context
	seat *idem.Seat
	tn   tenant.Tenant
	in   Input
	tm   terms
	t    *ent.Transaction
	out  chan outcome
	// res is the member's outcome once decided; delivered once sent.
	res       *outcome
	delivered bool
}

type outcome struct {
	t   *ent.Transaction
	err error
}

// decide sets m's outcome; deliver hands it over.
func (m *member) decide(t *ent.Transaction, err error) { m.res = &outcome{t: t, err: err} }

func (m *member) deliver() {
	if !m.delivered && m.res != nil {
		m.delivered = true
		m.out <- *m.res
	}
}

// WithdrawIn accepts a withdrawal, as Withdraw does, for the request that
// seat holds: a direct one in the batch of its balance, a cross one in a
// transaction of its own. It returns once the outcome is decided, before
// the commit: the handler renders its answer from it, which is stored
// with it, and idem.Store.Seated returns after the commit.
func (s *Service) WithdrawIn(ctx context.Context, seat *idem.Seat, in Input) (*ent.Transaction, error) {
	if in.cross() {
		var t *ent.Transaction
		err := seat.Tx(ctx, func(ctx context.Context) error {
			var err error
			t, err = s.Withdraw(ctx, in)
			return err
		})
		return t, err
	}
	if err := s.Check(in, &apperr.Fields{}); err != nil {
		return nil, err
	}
	tn, ok := tenant.From(ctx)
	if !ok {
		return nil, tenant.ErrNoTenant
	}
	tm, err := s.direct(in)
	if err != nil {
		return nil, err
	}
	name, err := merchants.Name(ctx, s.db.Client(ctx), tn.MerchantID)
	if err != nil {
		return nil, err
	}
	t, err := s.row(ctx, tn, in, tm, ReferencePrefix+uuid.NewString(), name)
	if err != nil {
		return nil, err
	}
	m := &member{ctx: ctx, seat: seat, tn: tn, in: in, tm: tm, t: t, out: make(chan outcome, 1)}
	seat.Join()
	s.batches.join(s, ledger.MerchantAccount(tn, tm.cur).ID(), m)
	o := <-m.out
	return o.t, o.err
}

// join queues m for its balance's next batch, and starts the balance's
// batches when none runs.
func (b *batches) join(s *Service, balance string, m *member) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.waiting == nil {
		b.waiting, b.running = map[string][]*member{}, map[string]int{}
	}
	b.waiting[balance] = append(b.waiting[balance], m)
	if b.running[balance] < maxRunning {
		b.running[balance]++
		go s.drain(balance)
	}
}

// drain runs the batches of one balance until none waits.
func (s *Service) drain(balance string) {
	b := &s.batches
	for {
		b.mu.Lock()
		ms := b.waiting[balance]
		if len(ms) == 0 {
			delete(b.waiting, balance)
			if b.running[balance]--; b.running[balance] == 0 {
				delete(b.running, balance)
			}
			b.mu.Unlock()
			return
		}
		if len(ms) > maxBatch {
			b.waiting[balance] = ms[maxBatch:]
			ms = ms[:maxBatch]
		} else {
			delete(b.waiting, balance)
		}
		b.mu.Unlock()
		if err := s.runBatch(ms); errors.Is(err, errAlone) {
			for _, m := range ms {
				_ = s.runBatch([]*member{m})
			}
		}
	}
}

// errAlone: the batch rolled back before answering anyone, on a conflict
// one of its members caused; each is to run alone.
var errAlone = errors.New("withdrawals: run the batch's members one by one")

// runBatch runs one batch of withdrawals of one balance (see the comment
// at the top of this file): every member gets its outcome and, if it got
// one before the commit, the commit's result; or errAlone, nobody answered.
func (s *Service) runBatch(ms []*member) (err error) {
	ctx, cancel := context.WithTimeout(tenant.System(context.WithoutCancel(ms[0].ctx)), batchTimeout)
	defer cancel()
	ctx, end := s.db.Traced(ctx)
	defer func() { end(err) }()
	// 1. BEGIN
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return s.failAll(ms, err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after commit
	ctx = store.WithTx(ctx, tx)

	// 2. keys
	seats := make([]*idem.Seat, len(ms))
	for i, m := range ms {
		seats[i] = m.seat
	}
	if _, err := idem.LockAll(ctx, tx, seats); err != nil {
		return s.failAll(ms, err)
	}
	var live []*member
	for _, m := range ms {
		if m.seat.Decided() {
			m.decide(nil, idem.ErrDecided)
		} else {
			live = append(live, m)
		}
	}
	if len(live) == 0 {
		return s.failAll(ms, nil)
	}
	tn, cur := live[0].tn, live[0].tm.cur

	// 3. merchant references
	taken, err := s.takenReferences(ctx, tn, live)
	if err != nil {
		return s.failAll(ms, err)
	}
	var candidates []*member
	for _, m := range live {
		if m.in.Reference == nil {
			candidates = append(candidates, m)
			continue
		}
		key := transactions.ReferenceKey(*m.in.Reference)
		if taken[key] {
			m.decide(nil, transactions.DuplicateReference(*m.in.Reference))
			continue
		}
		taken[key] = true
		candidates = append(candidates, m)
	}

	// 4. the balance
	var accepted []*member
	if len(candidates) > 0 {
		h, err := s.ledger.Hold(ctx, ledger.MerchantAccount(tn, cur))
		if err != nil {
			return s.failAll(ms, err)
		}
		left := h.Available()
		for _, m := range candidates {
			if m.tm.charged > left {
				m.decide(nil, ledger.Shortfall(cur, left, m.tm.charged))
				continue
			}
			left -= m.tm.charged
			accepted = append(accepted, m)
		}

		// 5. one statement
		if len(accepted) > 0 {
			if err := s.write(ctx, h, accepted); err != nil {
				if store.IsUniqueViolation(err) && len(ms) > 1 {
					return errAlone // nothing delivered yet
				}
				if store.IsUniqueViolation(err) && accepted[0].in.Reference != nil {
					// A batch of one: its reference was taken since step
					// 3, and the transaction is lost; its refusal is
					// stored on its own.
					m := accepted[0]
					m.seat.Leave()
					m.decide(nil, transactions.DuplicateReference(*m.in.Reference))
					return s.failAll(ms, nil)
				}
				return s.failAll(ms, err)
			}
		}
	}
	for _, m := range accepted {
		m.decide(m.t, nil)
	}
	for _, m := range ms {
		m.deliver()
	}

	// 6. answers stored
	var keyed []*idem.Seat
	var answers []idem.Response
	for _, m := range live {
		if !m.seat.Keyed() || m.seat.Left() {
			continue
		}
		a, err := m.seat.Answer(ctx)
		if err != nil {
			return s.failAll(ms, err)
		}
		keyed, answers = append(keyed, m.seat), append(answers, a)
	}
	if err := idem.SaveAll(ctx, keyed, answers); err != nil {
		return s.failAll(ms, err)
	}

	// 7. COMMIT
	if len(accepted) > 0 {
		store.AfterCommit(ctx, s.waker.Wake)
	}
	err = tx.Commit()
	if err != nil {
		err = store.Classify(err)
	}
	return s.failAll(ms, err)
}

// failAll ends the batch for ms: a member not yet given its outcome gets
// its decided one, or err; every member still in the batch is then
// released with err (nil: the batch committed). It returns nil: every
// member is answered.
func (s *Service) failAll(ms []*member, err error) error {
	if err != nil {
		err = store.Classify(err)
	}
	for _, m := range ms {
		if !m.delivered {
			if m.res == nil || err != nil && !m.seat.Decided() && !m.seat.Left() {
				m.decide(nil, err)
			}
			m.deliver()
		}
	}
	for _, m := range ms {
		if !m.seat.Decided() && !m.seat.Left() {
			m.seat.Done(err)
		}
	}
	return nil
}

// takenReferences returns which of the members' merchant references tn
// already used, by their lower-cased keys, in one SELECT.
func (s *Service) takenReferences(ctx context.Context, tn tenant.Tenant, ms []*member) (map[string]bool, error) {
	var keys []string
	for _, m := range ms {
		if m.in.Reference != nil {
			keys = append(keys, transactions.ReferenceKey(*m.in.Reference))
		}
	}
	taken := map[string]bool{}
	if len(keys) == 0 {
		return taken, nil
	}
	found, err := s.db.Client(ctx).Transaction.Query().
		Where(transaction.MerchantID(tn.MerchantID), transaction.Mode(tn.Mode), transaction.MerchantReferenceKeyIn(keys...)).
		Select(transaction.FieldMerchantReferenceKey).Strings(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	for _, k := range found {
		taken[k] = true
	}
	return taken, nil
}

// write sends step 5: the accepted members' rows, events, entries and the
// balance, in one statement on PostgreSQL.
func (s *Service) write(ctx context.Context, h *ledger.Hold, accepted []*member) error {
	ts := make([]*ent.Transaction, len(accepted))
	postings := make([]ledger.Posting, len(accepted))
	for i, m := range accepted {
		ts[i] = m.t
		postings[i] = debitPosting(m.tn, m.t, m.tm)
	}
	evs, err := s.outbox.Rows(ctx, events.WithdrawalPending, ts)
	if err != nil {
		return err
	}
	return s.ledger.PayoutAll(ctx, h, postings, []store.Stmt{rowsInsert(s.db.Dialect, ts), evs})
}
