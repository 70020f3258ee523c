// Package events is the transactional outbox: an event is written in the same
// database transaction as the state change it reports, carrying the
// Transaction as GET /transactions/{ref} shows it at that moment. Delivery
// (webhooks, e-mail, subscriptions) reads the outbox after commit.
package events

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/ent/eventfanout"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/page"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/tracing"
	"merchantpay/present/txview"
)

// Event types: the dotted names that webhooks, e-mails and subscriptions
// carry.
const (
	DepositPending    = "deposit.pending"
	DepositSuccess    = "deposit.success"
	DepositFailed     = "deposit.failed"
	DepositRefunded   = "deposit.refunded"
	SwapPending       = "swap.pending"
	SwapSuccess       = "swap.success"
	SwapFailed        = "swap.failed"
	WithdrawalPending = "withdrawal.pending"
	WithdrawalSuccess = "withdrawal.success"
	WithdrawalFailed  = "withdrawal.failed"
)

// Types lists every event type in order.
var Types = []string{DepositPending, DepositSuccess, DepositFailed, DepositRefunded,
	SwapPending, SwapSuccess, SwapFailed, WithdrawalPending, WithdrawalSuccess, WithdrawalFailed}

// Outbox writes events.
type Outbox struct {
	db    *store.DB
	clock clock.Clock

	mu        sync.Mutex
	listeners []func()
}

// New returns the outbox.
func New(db *store.DB, c clock.Clock) *Outbox { return &Outbox{db: db, clock: c} }

// OnCommit registers fn to run after a transaction that wrote events commits
// (to wake dispatchers and subscription brokers on this instance).
func (o *Outbox) OnCommit(fn func()) {
	o.mu.Lock()
	o.listeners = append(o.listeners, fn)
	o.mu.Unlock()
}

// Emit writes one event about t in tx, the caller's transaction handed
// to it as an argument, after whose commit the outbox's listeners are
// woken. The caller's context must act for t's tenant (or be the system).
func (o *Outbox) Emit(ctx context.Context, tx *ent.Tx, typ string, t *ent.Transaction) error {
	return o.EmitAll(ctx, tx, typ, []*ent.Transaction{t})
}

// EmitAll writes one event of type typ about each of ts, in order, and
// their fan-out queue rows, in tx, the caller's transaction, as Emit: on
// PostgreSQL in one statement (the queue rows' INSERT a WITH clause reading
// the ids the events' INSERT returns), on SQLite in two. Each event takes
// its tenant from its transaction; the context must act for that tenant or
// be the system (a worker recording many merchants' payouts at once).
// Readers find the events stored (ForTransaction, List).
func (o *Outbox) EmitAll(ctx context.Context, tx *ent.Tx, typ string, ts []*ent.Transaction) error {
	if tx == nil {
		return fmt.Errorf("events: Emit outside a transaction")
	}
	if len(ts) == 0 {
		return nil
	}
	parent := tracing.ParentOf(ctx)
	st, err := o.insert(ctx, typ, ts, func(*ent.Transaction) *string { return parent })
	if err != nil {
		return err
	}
	if o.db.IsPostgres() {
		err = wroteAll(ctx, tx, st)
	} else {
		err = store.ExecRows(ctx, tx, st)
	}
	if err != nil {
		return err
	}
	store.OnCommit(tx, o.wake)
	return nil
}

// wroteAll runs st and its Then as one PostgreSQL statement, the events'
// INSERT as CTEs' first clause and their queue rows its Then:
// ErrWroteNothing when either wrote fewer rows than it should have.
func wroteAll(ctx context.Context, tx *ent.Tx, st store.Stmt) error {
	ctes, cond, args := store.CTEs([]store.Stmt{st})
	rows, err := tx.QueryContext(ctx, "WITH "+ctes+" SELECT "+cond, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var ok bool
	if rows.Next() {
		if err := rows.Scan(&ok); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if !ok {
		return store.ErrWroteNothing
	}
	return nil
}

// Rows is the INSERT of one event of type typ about each of ts, new
// withdrawals, in one statement, for a caller that sends it with others of
// its own (a withdrawal's debit carries its row and its event:
// ledger.Service.Payout). Its Then queues the events for fan-out: on
// PostgreSQL a clause of the same statement reading the ids the INSERT
// returns, on SQLite a statement of its own that finds them by their
// evt_ ids. Each event carries the trace parent of its transaction, the
// request that made it. The statement must run in tx, the caller's
// transaction, after whose commit the outbox's listeners are woken, as
// after Emit.
func (o *Outbox) Rows(ctx context.Context, tx *ent.Tx, typ string, ts []*ent.Transaction) (store.Stmt, error) {
	if tx == nil {
		return store.Stmt{}, fmt.Errorf("events: Emit outside a transaction")
	}
	st, err := o.insert(ctx, typ, ts, func(t *ent.Transaction) *string { return t.TraceParent })
	if err != nil {
		return store.Stmt{}, err
	}
	store.OnCommit(tx, o.wake)
	return st, nil
}

// insert is the INSERT of one event of type typ about each of ts, made
// now, each carrying the trace parent parent gives its transaction, with
// the events' queue rows as its Then (Rows tells how). A context that acts
// for no tenant and is not the system's is refused (tenant.ErrNoTenant), as
// is a transaction of another tenant than the context's.
func (o *Outbox) insert(ctx context.Context, typ string, ts []*ent.Transaction, parent func(*ent.Transaction) *string) (store.Stmt, error) {
	d := entsql.Dialect(o.db.Dialect)
	ins := d.Insert(event.Table).
		Columns(event.FieldMerchantID, event.FieldMode, event.FieldEventID, event.FieldType,
			event.FieldTransactionRef, event.FieldPayload, event.FieldCreatedAt, event.FieldFannedOut, event.FieldTraceParent)
	// The events table's tenant rule, which an ent write would apply: a
	// tenant writes its own transactions' events, the system anyone's.
	tn, scoped, err := tenant.Scope(ctx)
	if err != nil {
		return store.Stmt{}, err
	}
	now := o.clock.Now()
	ids := make([]any, len(ts))
	for i, t := range ts {
		if scoped && (t.MerchantID != tn.MerchantID || t.Mode != tn.Mode) {
			return store.Stmt{}, fmt.Errorf("events: %s belongs to another tenant than the context's", t.Reference)
		}
		payload, err := txview.JSON(t)
		if err != nil {
			return store.Stmt{}, err
		}
		ev := &ent.Event{MerchantID: t.MerchantID, Mode: t.Mode, EventID: newEventID(), Type: typ,
			TransactionRef: t.Reference, Payload: payload, CreatedAt: now, FannedOut: true, TraceParent: parent(t)}
		var traceParent any
		if ev.TraceParent != nil {
			traceParent = *ev.TraceParent
		}
		ins.Values(ev.MerchantID, ev.Mode, ev.EventID, ev.Type, ev.TransactionRef, ev.Payload, ev.CreatedAt, ev.FannedOut, traceParent)
		ids[i] = ev.EventID
	}
	query, args := ins.Query()
	queue := store.Stmt{Rows: len(ts)}
	if o.db.IsPostgres() {
		queue.SQL = "INSERT INTO " + eventfanout.Table + " (" + eventfanout.FieldID + ") SELECT " +
			event.FieldID + " FROM " + store.Written
	} else {
		sel, selArgs := d.Select(event.FieldID).From(entsql.Table(event.Table)).
			Where(entsql.In(event.FieldEventID, ids...)).Query()
		queue.SQL, queue.Args = "INSERT INTO "+eventfanout.Table+" ("+eventfanout.FieldID+") "+sel, selArgs
	}
	return store.Stmt{SQL: query, Args: args, Rows: len(ts), Returning: event.FieldID, Then: &queue}, nil
}

func newEventID() string { return "evt_" + uuid.NewString() }

func (o *Outbox) wake() {
	o.mu.Lock()
	ls := append([]func(){}, o.listeners...)
	o.mu.Unlock()
	for _, fn := range ls {
		fn()
	}
}

// List returns a page of the ctx tenant's events, newest first.
func (o *Outbox) List(ctx context.Context, p page.Params) ([]*ent.Event, page.Info, error) {
	q := o.db.Reader().Event.Query()
	if p.After != nil {
		id, err := strconv.ParseInt(p.After.ID, 10, 64)
		if err != nil {
			return nil, page.Info{}, apperr.New(apperr.Validation, "after is not a cursor this service issued")
		}
		q = q.Where(event.IDLT(id))
	}
	rows, err := q.Order(ent.Desc(event.FieldID)).Limit(p.Limit + 1).All(ctx)
	if err != nil {
		return nil, page.Info{}, store.Classify(err)
	}
	rows, info := page.Cut(rows, p.Limit, Cursor)
	return rows, info, nil
}

// CursorID is the form of the ids in events' cursors: the events' serial ids.
var CursorID page.IDForm = page.Serial

// Cursor is an event's position in a list.
func Cursor(e *ent.Event) page.Cursor {
	return page.Cursor{Time: e.CreatedAt, ID: strconv.FormatInt(e.ID, 10)}
}

// ForTransaction lists the ctx tenant's events about the transaction
// with the service's reference ref, oldest first, read in tx (a mutation's
// answer sees the events it wrote) or, when tx is nil, outside any.
func (o *Outbox) ForTransaction(ctx context.Context, tx *ent.Tx, ref string) ([]*ent.Event, error) {
	rows, err := o.db.ClientOf(tx).Event.Query().Where(event.TransactionRef(ref)).
		Order(ent.Asc(event.FieldID)).All(ctx)
	return rows, store.Classify(err)
}
