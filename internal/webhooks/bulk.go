package webhooks

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"
	"strings"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
	"github.com/lib/pq"

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

// insertDeliveries creates the deliveries of pairs, due now, with c, the
// client of the caller's transaction, with one multi-row INSERT per
// fanOutBatch; a pair that already has a delivery keeps it.
func insertDeliveries(ctx context.Context, db *store.DB, c *ent.Client, pairs []newDeliveryPair, now time.Time) error {
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
			ins.Values(deliveryIDPrefix+uuid.NewString(), p.ev.MerchantID, p.ev.Mode,
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

// insertAttempts stores the attempts of batch in one INSERT with c, the
// client of the caller's transaction.
func insertAttempts(ctx context.Context, db *store.DB, c *ent.Client, batch []recordReq) error {
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
	_, err := c.ExecContext(ctx, query, args...)
	return err
}

// deliveryColumns are the columns claimPostgres reads back, in the order
// scanClaimed scans them.
var deliveryColumns = []string{
	webhookdelivery.FieldID, webhookdelivery.FieldMerchantID, webhookdelivery.FieldMode,
	webhookdelivery.FieldEventSeq, webhookdelivery.FieldEventID, webhookdelivery.FieldEventType,
	webhookdelivery.FieldEndpointID, webhookdelivery.FieldURL, webhookdelivery.FieldStatus,
	webhookdelivery.FieldAttempts, webhookdelivery.FieldRunAttempts, webhookdelivery.FieldGeneration,
	webhookdelivery.FieldNextAttemptAt, webhookdelivery.FieldLeaseOwner, webhookdelivery.FieldLeaseUntil,
	webhookdelivery.FieldLastStatusCode, webhookdelivery.FieldLastError,
	webhookdelivery.FieldCreatedAt, webhookdelivery.FieldUpdatedAt, webhookdelivery.FieldCompletedAt,
	webhookdelivery.FieldInflightAttempt, webhookdelivery.FieldInflightStartedAt,
}

func nullable[T any](v T, valid bool) *T {
	if !valid {
		return nil
	}
	return &v
}

// claimPostgres leases up to n due deliveries to owner until until and
// returns them as leased, each with its endpoint and event (nil when
// missing), in one statement (its own transaction): the inner SELECT locks
// the candidates, skipping rows another instance is claiming, the UPDATE
// leases them, and the outer SELECT joins what the attempts need. A row
// whose lease another instance took between the snapshot and the lock is
// re-checked by PostgreSQL (EvalPlanQual) against the inner WHERE before
// it is locked.
func claimPostgres(ctx context.Context, db *store.DB, owner string, now, until time.Time, n int) ([]claimedDelivery, error) {
	d := entsql.Dialect(db.Dialect)
	t := entsql.Table(webhookdelivery.Table)
	candidates := d.Select(t.C(webhookdelivery.FieldID)).From(t)
	for _, p := range due(now) { // the one definition of a due delivery
		p(candidates)
	}
	// In the order of the (status, next_attempt_at) index, so that the
	// first n due are read from it and no more. With id as a second key
	// (SQLite's order), a plan made while the table was small (prepared
	// statements keep theirs) read and sorted every due delivery at each
	// claim: about 3,500 rows a claim under a backlog of 20,000.
	candidates.OrderBy(t.C(webhookdelivery.FieldNextAttemptAt)).
		Limit(n).
		ForUpdate(entsql.WithLockAction(entsql.SkipLocked))
	upd := d.Update(webhookdelivery.Table).
		Set(webhookdelivery.FieldLeaseOwner, owner).
		Set(webhookdelivery.FieldLeaseUntil, until)
	markInflight(upd, now)
	lease, args := upd.Where(entsql.In(webhookdelivery.FieldID, candidates)).
		Returning(deliveryColumns...).
		Query()
	// Autocommit on the write pool: the claim is its own transaction.
	rows, err := db.SQL().QueryContext(ctx, "WITH c AS ("+lease+")"+claimJoin, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []claimedDelivery
	eps := map[string]*ent.WebhookEndpoint{}
	for rows.Next() {
		a, err := scanClaimed(rows, eps)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// claimJoin reads, after the claim's CTE c, each delivery (deliveryColumns)
// with the endpoint and event columns scanClaimed reads.
var claimJoin = func() string {
	var b strings.Builder
	b.WriteString(" SELECT ")
	for _, c := range deliveryColumns {
		b.WriteString("c." + c + ", ")
	}
	b.WriteString(`ep.id, ep.merchant_id, ep.mode, ep.url, ep.secret, ep.enabled, ep.deleted_at,
	ev.id, ev.merchant_id, ev.mode, ev.event_id, ev.type, ev.created_at, ev.payload, ev.trace_parent
FROM c LEFT JOIN webhook_endpoints AS ep ON ep.id = c.endpoint_id
LEFT JOIN events AS ev ON ev.event_id = c.event_id`)
	return b.String()
}()

// scanClaimed reads one row of claimJoin: the endpoint's fields an attempt
// uses (one value per endpoint, kept in eps), the event's but its
// transaction reference.
func scanClaimed(rows *sql.Rows, eps map[string]*ent.WebhookEndpoint) (claimedDelivery, error) {
	var (
		dl                          ent.WebhookDelivery
		next, until, done, flightAt sql.NullTime
		owner, lastErr              sql.NullString
		lastStatus, flight          sql.NullInt64

		epID, epMerchant, epMode, epURL, epSecret sql.NullString
		epEnabled                                 sql.NullBool
		epDeleted                                 sql.NullTime

		evSeq                                 sql.NullInt64
		evMerchant, evMode, evEventID, evType sql.NullString
		evCreated                             sql.NullTime
		evPayload                             []byte
		evTrace                               sql.NullString
	)
	err := rows.Scan(&dl.ID, &dl.MerchantID, &dl.Mode,
		&dl.EventSeq, &dl.EventID, &dl.EventType,
		&dl.EndpointID, &dl.URL, &dl.Status,
		&dl.Attempts, &dl.RunAttempts, &dl.Generation,
		&next, &owner, &until,
		&lastStatus, &lastErr,
		&dl.CreatedAt, &dl.UpdatedAt, &done,
		&flight, &flightAt,
		&epID, &epMerchant, &epMode, &epURL, &epSecret, &epEnabled, &epDeleted,
		&evSeq, &evMerchant, &evMode, &evEventID, &evType, &evCreated, &evPayload, &evTrace)
	if err != nil {
		return claimedDelivery{}, err
	}
	dl.NextAttemptAt = nullable(next.Time, next.Valid)
	dl.LeaseOwner = nullable(owner.String, owner.Valid)
	dl.LeaseUntil = nullable(until.Time, until.Valid)
	dl.LastStatusCode = nullable(int(lastStatus.Int64), lastStatus.Valid)
	dl.LastError = nullable(lastErr.String, lastErr.Valid)
	dl.CompletedAt = nullable(done.Time, done.Valid)
	dl.InflightAttempt = nullable(int(flight.Int64), flight.Valid)
	dl.InflightStartedAt = nullable(flightAt.Time, flightAt.Valid)
	a := claimedDelivery{dl: &dl}
	if epID.Valid {
		ep, ok := eps[epID.String]
		if !ok {
			ep = &ent.WebhookEndpoint{ID: epID.String, MerchantID: epMerchant.String, Mode: epMode.String,
				URL: epURL.String, Secret: epSecret.String, Enabled: epEnabled.Bool,
				DeletedAt: nullable(epDeleted.Time, epDeleted.Valid)}
			eps[ep.ID] = ep
		}
		a.ep = ep
	}
	if evSeq.Valid {
		a.ev = &ent.Event{ID: evSeq.Int64, MerchantID: evMerchant.String, Mode: evMode.String,
			EventID: evEventID.String, Type: evType.String, CreatedAt: evCreated.Time, Payload: evPayload,
			TraceParent: nullable(evTrace.String, evTrace.Valid)}
	}
	return a, nil
}

// recordPostgresSQL records a batch of attempts in one statement (so its
// own transaction, one round trip): the attempts are inserted and each
// delivery moved on. A delivery still held by the attempt's owner in the
// attempt's generation takes its settlement; one whose lease or generation
// moved on (a redelivery) only counts the attempt and loses the lease (and
// its attempt mark) if it is still the owner's, as advance does. Each :name is an array, one
// element per attempt (:owner and :now are single values): :ids delivery
// ids, :gens generations, :attempts attempts made after this one (also the
// attempt's number), :statuses new statuses (NULL: kept), :runs run
// attempts (NULL: kept), :nexts next attempts, :dones completions (NULL:
// kept), :codes status codes, :errs errors, then the attempts' :merchants,
// :modes, :starts, :latencies, :bodies and :oks.
//
// A known gap of that late path, in both databases: an attempt recorded after
// its lease ran out and another instance claimed the delivery keeps the
// number it was claimed with, so it can share it with an attempt the other
// instance records: the interrupted attempt that instance found (this very
// attempt, seen from outside), or, when this record lands before that
// claim's own, its real attempt. Only a lease outlived by its recording
// (a recorder or database stalled for about a minute) leads there. Both
// orders would need guarding (replacing the interrupted row, and the
// claimer reading the count again before it records), so it is left as is.
//
// It is sent unprepared (store.Unprepared), so it is planned at each use
// with the real number of deliveries and the table's current size.
// Prepared (one text for every batch), it kept the plan made while the
// table was small, at start: a scan of the whole table at every batch once
// it had grown.
const recordPostgresSQL = `WITH v AS (
	SELECT * FROM unnest(:ids::text[], :gens::bigint[], :attempts::bigint[], :statuses::text[], :runs::bigint[],
		:nexts::timestamptz[], :dones::timestamptz[], :codes::bigint[], :errs::text[])
		AS v(id, generation, attempts, status, run_attempts, next_attempt_at, completed_at, last_status_code, last_error)
), attempt AS (
	INSERT INTO webhook_attempts (merchant_id, mode, delivery_id, number, started_at, latency_ms,
		status_code, error, response_body, success)
	SELECT * FROM unnest(:merchants::text[], :modes::text[], :ids::text[], :attempts::bigint[], :starts::timestamptz[],
		:latencies::bigint[], :codes::bigint[], :errs::text[], :bodies::text[], :oks::boolean[])
)
UPDATE webhook_deliveries AS d SET
	attempts = CASE WHEN d.lease_owner = :owner AND d.generation = v.generation THEN v.attempts ELSE d.attempts + 1 END,
	status = CASE WHEN d.lease_owner = :owner AND d.generation = v.generation THEN COALESCE(v.status, d.status) ELSE d.status END,
	run_attempts = CASE WHEN d.lease_owner = :owner AND d.generation = v.generation THEN COALESCE(v.run_attempts, d.run_attempts) ELSE d.run_attempts END,
	next_attempt_at = CASE WHEN d.lease_owner = :owner AND d.generation = v.generation THEN v.next_attempt_at ELSE d.next_attempt_at END,
	completed_at = CASE WHEN d.lease_owner = :owner AND d.generation = v.generation THEN COALESCE(v.completed_at, d.completed_at) ELSE d.completed_at END,
	last_status_code = CASE WHEN d.lease_owner = :owner AND d.generation = v.generation THEN v.last_status_code ELSE d.last_status_code END,
	last_error = CASE WHEN d.lease_owner = :owner AND d.generation = v.generation THEN v.last_error ELSE d.last_error END,
	updated_at = CASE WHEN d.lease_owner = :owner AND d.generation = v.generation THEN :now::timestamptz ELSE d.updated_at END,
	inflight_attempt = CASE WHEN d.lease_owner = :owner THEN NULL ELSE d.inflight_attempt END,
	inflight_started_at = CASE WHEN d.lease_owner = :owner THEN NULL ELSE d.inflight_started_at END,
	lease_owner = CASE WHEN d.lease_owner = :owner THEN NULL ELSE d.lease_owner END,
	lease_until = CASE WHEN d.lease_owner = :owner THEN NULL ELSE d.lease_until END
FROM v WHERE d.id = ANY(:ids::text[]) AND d.id = v.id`

// recordPostgres records batch with recordPostgresSQL. The batch must not
// hold two attempts of one delivery, nor a 410 (which disables the
// endpoint: advance's work).
func (d *Dispatcher) recordPostgres(ctx context.Context, batch []recordReq, now time.Time) error {
	n := len(batch)
	ids, gens, attempts, statuses, runs := make(pgArray, n), make(pgArray, n), make(pgArray, n), make(pgArray, n), make(pgArray, n)
	nexts, dones, codes, errs := make(pgArray, n), make(pgArray, n), make(pgArray, n), make(pgArray, n)
	merchants, modes, starts, latencies, bodies, oks := make(pgArray, n), make(pgArray, n), make(pgArray, n), make(pgArray, n), make(pgArray, n), make(pgArray, n)
	for i, r := range batch {
		s := d.settlementOf(r.dl, r.out, now)
		ids[i] = pgText(r.dl.ID)
		gens[i] = pgInt(r.dl.Generation)
		attempts[i] = pgInt(s.attempts)
		statuses[i] = pgNullable(s.status, func(v string) string { return v })
		runs[i] = pgNullable(s.runAttempts, strconv.Itoa)
		nexts[i] = pgNullable(s.next, store.PGTime)
		dones[i] = pgNullable(s.completed, store.PGTime)
		codes[i] = pgNullable(s.lastStatus, strconv.Itoa)
		errs[i] = pgNullable(s.lastErr, func(v string) string { return v })
		merchants[i] = pgText(r.dl.MerchantID)
		modes[i] = pgText(r.dl.Mode)
		starts[i] = pgText(store.PGTime(r.out.started))
		latencies[i] = pgText(strconv.FormatInt(r.out.latency.Milliseconds(), 10))
		bodies[i] = pgText(r.out.body)
		oks[i] = pgText(strconv.FormatBool(r.out.succeeded()))
	}
	// Unprepared: planned at each use (see recordPostgresSQL); autocommit
	// on the write pool, so the statement is its own transaction.
	_, err := d.db.SQL().ExecContext(ctx, recordPostgresQuery,
		ids, gens, attempts, statuses, runs, nexts, dones, codes, errs,
		merchants, modes, starts, latencies, bodies, oks, d.owner, now)
	return err
}

// recordPostgresQuery is recordPostgresSQL with its names as the
// parameters recordPostgres passes, in that order.
var recordPostgresQuery = store.Unprepared + strings.NewReplacer(
	":ids", "$1", ":gens", "$2", ":attempts", "$3", ":statuses", "$4", ":runs", "$5",
	":nexts", "$6", ":dones", "$7", ":codes", "$8", ":errs", "$9",
	":merchants", "$10", ":modes", "$11", ":starts", "$12", ":latencies", "$13", ":bodies", "$14", ":oks", "$15",
	":owner", "$16", ":now", "$17",
).Replace(recordPostgresSQL)

// pgArray is a one-dimensional PostgreSQL array in text form, cast in the
// statement to its element type; a nil element is NULL.
type pgArray []*string

func pgText(s string) *string { return &s }

func pgInt(v int) *string { return pgText(strconv.Itoa(v)) }

func pgNullable[T any](v *T, format func(T) string) *string {
	if v == nil {
		return nil
	}
	return pgText(format(*v))
}

// Value is the array in PostgreSQL's text form (lib/pq's GenericArray: a
// nil element is NULL, the others quoted and escaped), a parameter the
// statement casts to its element type.
func (a pgArray) Value() (driver.Value, error) { return pq.GenericArray{A: []*string(a)}.Value() }
