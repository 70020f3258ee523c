package webhooks

import (
	"context"
	"time"

	"entgo.io/ent/dialect/sql"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/ent/predicate"
	"merchantpay/ent/webhookdelivery"
	"merchantpay/ent/webhookendpoint"
	"merchantpay/internal/jobs"
	"merchantpay/internal/store"
)

// due selects deliveries whose attempt is due and that nobody holds.
func due(now time.Time) []predicate.WebhookDelivery {
	return []predicate.WebhookDelivery{
		webhookdelivery.Status(StatusPending),
		webhookdelivery.NextAttemptAtLTE(now),
		webhookdelivery.Or(webhookdelivery.LeaseUntilIsNil(), webhookdelivery.LeaseUntilLT(now)),
	}
}

// claimedDelivery is a leased delivery with what its attempt needs, read
// for the whole claim at once. ep is nil when the endpoint is gone; ev nil
// when the event could not be read. interrupted, when not nil, is when an
// attempt began whose instance stopped before recording it (see
// recordInterrupted).
type claimedDelivery struct {
	dl          *ent.WebhookDelivery
	ep          *ent.WebhookEndpoint
	ev          *ent.Event
	interrupted *time.Time
}

// claim leases up to n due deliveries to this instance and reads what
// their attempts need: on PostgreSQL in one statement (claimPostgres), on
// SQLite through lease, then the endpoints and events of the whole claim
// with one query each. Each lease also marks the attempt it is for (see
// markInflight).
func (d *Dispatcher) claim(ctx context.Context, n int) ([]claimedDelivery, error) {
	now := claimTime(d.clock.Now())
	if d.db.IsPostgres() {
		claimed, err := claimPostgres(ctx, d.db, d.owner, now, now.Add(d.cfg.Lease), n)
		for i := range claimed {
			claimed[i].interrupted = interruptedAt(claimed[i].dl, now)
		}
		return claimed, store.Classify(err)
	}
	dls, err := d.lease(ctx, now, n)
	if err != nil || len(dls) == 0 {
		return nil, err
	}
	c := d.db.Reader()
	// The endpoints and events of the whole claim, one query each.
	epIDs, evIDs := make([]string, 0, len(dls)), make([]string, 0, len(dls))
	for _, dl := range dls {
		epIDs = append(epIDs, dl.EndpointID)
		evIDs = append(evIDs, dl.EventID)
	}
	eps, err := c.WebhookEndpoint.Query().Where(webhookendpoint.IDIn(dedupe(epIDs)...)).All(ctx)
	if err != nil {
		return nil, err
	}
	evs, err := c.Event.Query().Where(event.EventIDIn(dedupe(evIDs)...)).All(ctx)
	if err != nil {
		return nil, err
	}
	epByID := make(map[string]*ent.WebhookEndpoint, len(eps))
	for _, ep := range eps {
		epByID[ep.ID] = ep
	}
	evByID := make(map[string]*ent.Event, len(evs))
	for _, ev := range evs {
		evByID[ev.EventID] = ev
	}
	out := make([]claimedDelivery, len(dls))
	for i, dl := range dls {
		out[i] = claimedDelivery{dl: dl, ep: epByID[dl.EndpointID], ev: evByID[dl.EventID],
			interrupted: interruptedAt(dl, now)}
	}
	return out, nil
}

// lease leases up to n due deliveries and returns them as leased, on
// SQLite, through jobs.LeaseRows: each lease a conditional update checked
// by rows affected, which also marks the attempt (markInflight). The rows
// are read before their update: their mark is set here as the update set
// it.
func (d *Dispatcher) lease(ctx context.Context, now time.Time, n int) ([]*ent.WebhookDelivery, error) {
	until := now.Add(d.cfg.Lease)
	mark := func(u *sql.UpdateBuilder) { markInflight(u, now) }
	dls, err := jobs.LeaseRows(ctx, d.db, jobs.RowLeaser[*ent.WebhookDelivery]{
		Candidates: func(ctx context.Context, c *ent.Client, lock bool) ([]*ent.WebhookDelivery, error) {
			q := c.WebhookDelivery.Query().Where(due(now)...).
				Order(ent.Asc(webhookdelivery.FieldNextAttemptAt), ent.Asc(webhookdelivery.FieldID)).Limit(n)
			if lock {
				q = q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
			}
			return q.All(ctx)
		},
		ID: func(dl *ent.WebhookDelivery) string { return dl.ID },
		LeaseAll: func(ctx context.Context, c *ent.Client, ids []string) error {
			return c.WebhookDelivery.Update().Where(webhookdelivery.IDIn(ids...)).
				SetLeaseOwner(d.owner).SetLeaseUntil(until).Modify(mark).Exec(ctx)
		},
		LeaseOne: func(ctx context.Context, c *ent.Client, id string) (bool, error) {
			k, err := c.WebhookDelivery.Update().Where(append(due(now), webhookdelivery.ID(id))...).
				SetLeaseOwner(d.owner).SetLeaseUntil(until).Modify(mark).Save(ctx)
			return k == 1, err
		},
	})
	for _, dl := range dls {
		owner, u := d.owner, until
		dl.LeaseOwner, dl.LeaseUntil = &owner, &u
		if !liveMark(dl) {
			number, at := dl.Attempts+1, now
			dl.InflightAttempt, dl.InflightStartedAt = &number, &at
		}
	}
	return dls, err
}
