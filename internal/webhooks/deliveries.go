package webhooks

import (
	"context"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/ent/webhookattempt"
	"merchantpay/ent/webhookdelivery"
	"merchantpay/ent/webhookendpoint"
	"merchantpay/internal/apperr"
	"merchantpay/internal/store"
)

// Delivery states.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Delivery is one event's delivery to one endpoint, with every attempt.
type Delivery struct {
	ID         string
	EventID    string // evt_...; also the webhook-id header
	EventType  string
	EndpointID string
	URL        string
	// Status is pending, succeeded or failed.
	Status string
	// AttemptCount counts every attempt, redeliveries included.
	AttemptCount   int
	NextAttemptAt  *time.Time
	LastStatusCode *int
	LastError      *string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	CompletedAt    *time.Time
	// Attempts, oldest first.
	Attempts []Attempt
}

// Attempt is one HTTP attempt.
type Attempt struct {
	Number    int
	StartedAt time.Time
	// LatencyMS is the time from sending to the answer (or the failure).
	LatencyMS int64
	// StatusCode is nil when no answer came (timeout, refused, ...).
	StatusCode *int
	Error      *string
	// ResponseBody is the first KiB of the answer.
	ResponseBody string
	Success      bool
}

// event finds one of the tenant's events by its evt_ id with c.
func findEvent(ctx context.Context, c *ent.Client, eventID string) (*ent.Event, error) {
	ev, err := c.Event.Query().Where(event.EventID(eventID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no event with id %q", eventID)
	}
	return ev, store.Classify(err)
}

// Deliveries lists an event's deliveries (oldest first) with their
// attempts, read in tx (a mutation's answer sees what it wrote) or, when tx
// is nil, outside any. An event of another merchant or mode is NOT_FOUND.
func (s *Service) Deliveries(ctx context.Context, tx *ent.Tx, eventID string) ([]Delivery, error) {
	c := s.db.ClientOf(tx)
	if _, err := findEvent(ctx, c, eventID); err != nil {
		return nil, err
	}
	return deliveries(ctx, c, eventID)
}

// deliveries reads an event's deliveries with their attempts with c.
func deliveries(ctx context.Context, c *ent.Client, eventID string) ([]Delivery, error) {
	rows, err := c.WebhookDelivery.Query().Where(webhookdelivery.EventID(eventID)).
		Order(ent.Asc(webhookdelivery.FieldCreatedAt), ent.Asc(webhookdelivery.FieldID)).All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	return withAttempts(ctx, c, rows)
}

// withAttempts views rows with their attempts, read in one query with c.
func withAttempts(ctx context.Context, c *ent.Client, rows []*ent.WebhookDelivery) ([]Delivery, error) {
	out := make([]Delivery, len(rows))
	idx := make(map[string]int, len(rows))
	ids := make([]string, len(rows))
	for i, d := range rows {
		out[i] = view(d)
		idx[d.ID] = i
		ids[i] = d.ID
	}
	if len(ids) == 0 {
		return out, nil
	}
	atts, err := c.WebhookAttempt.Query().Where(webhookattempt.DeliveryIDIn(ids...)).
		Order(ent.Asc(webhookattempt.FieldDeliveryID), ent.Asc(webhookattempt.FieldNumber)).All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	for _, a := range atts {
		i := idx[a.DeliveryID]
		out[i].Attempts = append(out[i].Attempts, Attempt{
			Number: a.Number, StartedAt: a.StartedAt, LatencyMS: a.LatencyMs, StatusCode: a.StatusCode,
			Error: a.Error, ResponseBody: a.ResponseBody, Success: a.Success,
		})
	}
	return out, nil
}

func view(d *ent.WebhookDelivery) Delivery {
	return Delivery{
		ID: d.ID, EventID: d.EventID, EventType: d.EventType, EndpointID: d.EndpointID, URL: d.URL,
		Status: d.Status, AttemptCount: d.Attempts, NextAttemptAt: d.NextAttemptAt,
		LastStatusCode: d.LastStatusCode, LastError: d.LastError,
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, CompletedAt: d.CompletedAt,
		Attempts: []Attempt{},
	}
}

// Redeliver sends an event again, now, to every enabled endpoint of the
// tenant that takes its type: an existing delivery (failed, succeeded or
// still retrying) starts a new run of the retry schedule with the same
// webhook-id; an endpoint without one gets a new delivery. It returns the
// event's deliveries. It runs in tx, the request's transaction handed to
// it, or, when tx is nil (tests), in one of its own.
func (s *Service) Redeliver(ctx context.Context, tx *ent.Tx, eventID string) ([]Delivery, error) {
	var out []Delivery
	err := s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		ev, err := findEvent(ctx, c, eventID)
		if err != nil {
			return err
		}
		eps, err := c.WebhookEndpoint.Query().
			Where(webhookendpoint.Enabled(true), webhookendpoint.DeletedAtIsNil()).All(ctx)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		var ids []string
		var pairs []newDeliveryPair
		for _, ep := range eps {
			if !Matches(ep, ev.Type) {
				continue
			}
			ids = append(ids, ep.ID)
			pairs = append(pairs, newDeliveryPair{ev, ep})
		}
		if len(ids) > 0 {
			// Endpoints that already have a delivery keep it (and its
			// attempts); the update below queues it again.
			if err := insertDeliveries(ctx, s.db, c, pairs, now); err != nil {
				return err
			}
			_, err = c.WebhookDelivery.Update().
				Where(webhookdelivery.EventID(ev.EventID), webhookdelivery.EndpointIDIn(ids...)).
				SetStatus(StatusPending).SetRunAttempts(0).AddGeneration(1).
				SetNextAttemptAt(now).ClearCompletedAt().SetUpdatedAt(now).Save(ctx)
			if err != nil {
				return err
			}
			store.OnCommit(tx, s.wake)
		}
		out, err = deliveries(ctx, c, ev.EventID)
		return err
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return out, nil
}
