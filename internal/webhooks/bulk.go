package webhooks

import (
	"context"
	"database/sql"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/webhookattempt"
	"merchantpay/ent/webhookdelivery"
	"merchantpay/internal/store"
)

// The hot paths below write and claim with hand-built statements: ent's
// bulk create reads every new row's id back (RETURNING on PostgreSQL) and
// scans it, which nobody here needs and which cost about a sixth of the
// dispatcher's CPU under load. The rows written are those ent would write:
// every column is given, defaults included.

// newDeliveryPair is a delivery to create: ev to ep.
type newDeliveryPair struct {
	ev *ent.Event
	ep *ent.WebhookEndpoint
}

// insertDeliveries creates the deliveries of pairs, due now, in the
// transaction carried by ctx, with one multi-row INSERT per fanOutBatch;
// a pair that already has a delivery keeps it.
func insertDeliveries(ctx context.Context, db *store.DB, pairs []newDeliveryPair, now time.Time) error {
	c := db.Client(ctx)
	for len(pairs) > 0 {
		chunk := pairs[:min(len(pairs), fanOutBatch)]
		pairs = pairs[len(chunk):]
		ins := entsql.Dialect(db.Dialect).Insert(webhookdelivery.Table).Columns(
			webhookdelivery.FieldID, webhookdelivery.FieldMerchantID, webhookdelivery.FieldMode,
			webhookdelivery.FieldEventSeq, webhookdelivery.FieldEventID, webhookdelivery.FieldEventType,
			webhookdelivery.FieldEndpointID, webhookdelivery.FieldURL, webhookdelivery.FieldStatus,
			webhookdelivery.FieldAttempts, webhookdelivery.FieldRunAttempts, webhookdelivery.FieldGeneration,
			webhookdelivery.FieldNextAttemptAt, webhookdelivery.FieldCreatedAt, webhookdelivery.FieldUpdatedAt)
		for _, p := range chunk {
			ins.Values("dlv_"+uuid.NewString(), p.ev.MerchantID, p.ev.Mode,
				p.ev.ID, p.ev.EventID, p.ev.Type,
				p.ep.ID, p.ep.URL, StatusPending,
				0, 0, 0,
				now, now, now)
		}
		query, args := ins.OnConflict(
			entsql.ConflictColumns(webhookdelivery.FieldEventID, webhookdelivery.FieldEndpointID),
			entsql.DoNothing(),
		).Query()
		if _, err := c.ExecContext(ctx, query, args...); err != nil {
			return err
		}
	}
	return nil
}

// insertAttempts stores the attempts of batch in one INSERT, in the
// transaction carried by ctx.
func insertAttempts(ctx context.Context, db *store.DB, batch []recordReq) error {
	ins := entsql.Dialect(db.Dialect).Insert(webhookattempt.Table).Columns(
		webhookattempt.FieldMerchantID, webhookattempt.FieldMode, webhookattempt.FieldDeliveryID,
		webhookattempt.FieldNumber, webhookattempt.FieldStartedAt, webhookattempt.FieldLatencyMs,
		webhookattempt.FieldStatusCode, webhookattempt.FieldError, webhookattempt.FieldResponseBody,
		webhookattempt.FieldSuccess)
	for _, r := range batch {
		var status, errText any // NULL: no answer, no error
		if r.out.status != 0 {
			status = r.out.status
		}
		if r.out.err != "" {
			errText = r.out.err
		}
		ins.Values(r.dl.MerchantID, r.dl.Mode, r.dl.ID,
			r.dl.Attempts+1, r.out.started, r.out.latency.Milliseconds(),
			status, errText, r.out.body,
			r.out.succeeded())
	}
	query, args := ins.Query()
	_, err := db.Client(ctx).ExecContext(ctx, query, args...)
	return err
}

// deliveryColumns are the columns claimPostgres reads back, in the order
// scanDelivery scans them.
var deliveryColumns = []string{
	webhookdelivery.FieldID, webhookdelivery.FieldMerchantID, webhookdelivery.FieldMode,
	webhookdelivery.FieldEventSeq, webhookdelivery.FieldEventID, webhookdelivery.FieldEventType,
	webhookdelivery.FieldEndpointID, webhookdelivery.FieldURL, webhookdelivery.FieldStatus,
	webhookdelivery.FieldAttempts, webhookdelivery.FieldRunAttempts, webhookdelivery.FieldGeneration,
	webhookdelivery.FieldNextAttemptAt, webhookdelivery.FieldLeaseOwner, webhookdelivery.FieldLeaseUntil,
	webhookdelivery.FieldLastStatusCode, webhookdelivery.FieldLastError,
	webhookdelivery.FieldCreatedAt, webhookdelivery.FieldUpdatedAt, webhookdelivery.FieldCompletedAt,
}

// scanDelivery reads one row of deliveryColumns.
func scanDelivery(rows *sql.Rows) (*ent.WebhookDelivery, error) {
	var (
		dl                ent.WebhookDelivery
		next, until, done sql.NullTime
		owner, lastErr    sql.NullString
		lastStatus        sql.NullInt64
	)
	err := rows.Scan(&dl.ID, &dl.MerchantID, &dl.Mode,
		&dl.EventSeq, &dl.EventID, &dl.EventType,
		&dl.EndpointID, &dl.URL, &dl.Status,
		&dl.Attempts, &dl.RunAttempts, &dl.Generation,
		&next, &owner, &until,
		&lastStatus, &lastErr,
		&dl.CreatedAt, &dl.UpdatedAt, &done)
	if err != nil {
		return nil, err
	}
	dl.NextAttemptAt = nullable(next.Time, next.Valid)
	dl.LeaseOwner = nullable(owner.String, owner.Valid)
	dl.LeaseUntil = nullable(until.Time, until.Valid)
	dl.LastStatusCode = nullable(int(lastStatus.Int64), lastStatus.Valid)
	dl.LastError = nullable(lastErr.String, lastErr.Valid)
	dl.CompletedAt = nullable(done.Time, done.Valid)
	return &dl, nil
}

func nullable[T any](v T, valid bool) *T {
	if !valid {
		return nil
	}
	return &v
}

// claimPostgres leases up to n due deliveries to owner until until and
// returns them as leased, in one statement (its own transaction): the
// inner SELECT locks the candidates, skipping rows another instance is
// claiming, and the UPDATE leases them. A row whose lease another instance
// took between the snapshot and the lock is re-checked by PostgreSQL
// (EvalPlanQual) against the inner WHERE before it is locked.
func claimPostgres(ctx context.Context, db *store.DB, owner string, now, until time.Time, n int) ([]*ent.WebhookDelivery, error) {
	d := entsql.Dialect(db.Dialect)
	t := entsql.Table(webhookdelivery.Table)
	candidates := d.Select(t.C(webhookdelivery.FieldID)).From(t)
	for _, p := range due(now) { // the one definition of a due delivery
		p(candidates)
	}
	candidates.OrderBy(t.C(webhookdelivery.FieldNextAttemptAt), t.C(webhookdelivery.FieldID)).
		Limit(n).
		ForUpdate(entsql.WithLockAction(entsql.SkipLocked))
	query, args := d.Update(webhookdelivery.Table).
		Set(webhookdelivery.FieldLeaseOwner, owner).
		Set(webhookdelivery.FieldLeaseUntil, until).
		Where(entsql.In(webhookdelivery.FieldID, candidates)).
		Returning(deliveryColumns...).
		Query()
	// Autocommit on the write pool: the claim is its own transaction.
	rows, err := db.SQL().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*ent.WebhookDelivery
	for rows.Next() {
		dl, err := scanDelivery(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, dl)
	}
	return out, rows.Err()
}
