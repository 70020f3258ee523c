package webhooks

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/webhookdelivery"
	"merchantpay/ent/webhookendpoint"
	"merchantpay/internal/apperr"
	"merchantpay/internal/page"
	"merchantpay/internal/store"
)

// PingEvent is the type of a test delivery. A ping has a delivery (and its
// attempts) but no event row: it is not among the merchant's events, their
// list or their subscription. Its body is built from the delivery.
const PingEvent = "ping"

// pingEvent is the event a ping delivery carries, made from the delivery:
// {"endpoint_id": ...} as data, the delivery's event id as webhook-id.
func pingEvent(dl *ent.WebhookDelivery) *ent.Event {
	data, _ := json.Marshal(map[string]string{"endpoint_id": dl.EndpointID})
	return &ent.Event{MerchantID: dl.MerchantID, Mode: dl.Mode, EventID: dl.EventID,
		Type: PingEvent, CreatedAt: dl.CreatedAt, Payload: data}
}

// SendTest queues a ping to one of the tenant's enabled endpoints, due at
// once, and returns its delivery. field names the endpoint id in errors.
// It runs in tx, the request's transaction handed to it, or, when tx is nil
// (tests), in one of its own.
func (s *Service) SendTest(ctx context.Context, tx *ent.Tx, endpointID, field string) (Delivery, error) {
	var out Delivery
	err := s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		ep, err := c.WebhookEndpoint.Query().
			Where(webhookendpoint.ID(endpointID), webhookendpoint.DeletedAtIsNil()).Only(ctx)
		if ent.IsNotFound(err) {
			return notFound(endpointID)
		}
		if err != nil {
			return err
		}
		if !ep.Enabled {
			var f apperr.Fields
			f.Add(field, "names a disabled endpoint; enable it first")
			return f.Err()
		}
		now := s.clock.Now()
		dl, err := c.WebhookDelivery.Create().SetID(deliveryIDPrefix + uuid.NewString()).
			SetMerchantID(ep.MerchantID).SetMode(ep.Mode).
			SetEventSeq(0).SetEventID("evt_" + uuid.NewString()).SetEventType(PingEvent).
			SetEndpointID(ep.ID).SetURL(ep.URL).SetStatus(StatusPending).
			SetNextAttemptAt(now).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		store.OnCommit(tx, s.wake)
		out = view(dl)
		return nil
	})
	if err != nil {
		return Delivery{}, store.Classify(err)
	}
	return out, nil
}

// Resend queues one of the tenant's deliveries again, now: a new run of
// the retry schedule on the same delivery, with the same webhook-id. Its
// endpoint must still be enabled (field names the delivery id in errors).
// tx is SendTest's.
func (s *Service) Resend(ctx context.Context, tx *ent.Tx, deliveryID, field string) (Delivery, error) {
	var out Delivery
	err := s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		dl, err := c.WebhookDelivery.Query().Where(webhookdelivery.ID(deliveryID)).Only(ctx)
		if ent.IsNotFound(err) {
			return apperr.New(apperr.NotFound, "no webhook delivery with id %q", deliveryID)
		}
		if err != nil {
			return err
		}
		ep, err := c.WebhookEndpoint.Query().Where(webhookendpoint.ID(dl.EndpointID)).Only(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return err
		}
		if ep == nil || ep.DeletedAt != nil || !ep.Enabled {
			var f apperr.Fields
			f.Add(field, "belongs to an endpoint that is deleted or disabled")
			return f.Err()
		}
		now := s.clock.Now()
		if err := c.WebhookDelivery.Update().Where(webhookdelivery.ID(dl.ID)).
			SetStatus(StatusPending).SetRunAttempts(0).AddGeneration(1).
			SetNextAttemptAt(now).ClearCompletedAt().SetUpdatedAt(now).Exec(ctx); err != nil {
			return err
		}
		store.OnCommit(tx, s.wake)
		dl, err = c.WebhookDelivery.Get(ctx, dl.ID)
		if err != nil {
			return err
		}
		views, err := withAttempts(ctx, c, []*ent.WebhookDelivery{dl})
		if err != nil {
			return err
		}
		out = views[0]
		return nil
	})
	if err != nil {
		return Delivery{}, store.Classify(err)
	}
	return out, nil
}

// ListDeliveries returns a page of the tenant's deliveries, to one
// endpoint when endpointID is not nil, newest first, with their attempts.
func (s *Service) ListDeliveries(ctx context.Context, endpointID *string, p page.Params) ([]Delivery, page.Info, error) {
	c := s.db.Reader()
	q := c.WebhookDelivery.Query()
	if endpointID != nil {
		q = q.Where(webhookdelivery.EndpointID(*endpointID))
	}
	if p.After != nil {
		q = q.Where(webhookdelivery.Or(
			webhookdelivery.CreatedAtLT(p.After.Time),
			webhookdelivery.And(webhookdelivery.CreatedAt(p.After.Time), webhookdelivery.IDLT(p.After.ID)),
		))
	}
	rows, err := q.Order(ent.Desc(webhookdelivery.FieldCreatedAt), ent.Desc(webhookdelivery.FieldID)).
		Limit(p.Limit + 1).All(ctx)
	if err != nil {
		return nil, page.Info{}, store.Classify(err)
	}
	rows, info := page.Cut(rows, p.Limit, func(d *ent.WebhookDelivery) page.Cursor {
		return page.Cursor{Time: d.CreatedAt, ID: d.ID}
	})
	out, err := withAttempts(ctx, c, rows)
	return out, info, err
}

// DeliveryCursorID is the form of the ids in deliveries' cursors.
var DeliveryCursorID = page.Prefixed(deliveryIDPrefix)

// DeliveryCursor is a delivery's position in ListDeliveries.
func DeliveryCursor(d Delivery) page.Cursor { return page.Cursor{Time: d.CreatedAt, ID: d.ID} }
