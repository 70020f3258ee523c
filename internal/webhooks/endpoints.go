// Package webhooks manages merchants' webhook endpoints and carries outbox
// events to them: the dispatcher fans each event out into one
// delivery per matching endpoint, then sends it signed, retrying on the
// schedule, and records every attempt. Signing, the SSRF guard and the
// retry arithmetic are internal/hookwire's.
package webhooks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/webhookendpoint"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/page"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// Service manages endpoints and reads and redelivers deliveries.
type Service struct {
	db    *store.DB
	clock clock.Clock
	// allowPrivate is WEBHOOK_ALLOW_PRIVATE: endpoints (in either mode) may
	// then point at loopback, private and other non-public addresses.
	allowPrivate bool
	// Lookup is how endpoint hosts are looked up (zero: the system's
	// resolver, hookwire.DefaultLookupTimeout); tests replace it.
	Lookup hookwire.Lookup
	// wake nudges the dispatchers after a redelivery commits.
	wake func()
}

// New returns the endpoints service. wake (may be nil) is called after a
// redelivery commits.
func New(db *store.DB, c clock.Clock, allowPrivate bool, wake func()) *Service {
	if wake == nil {
		wake = func() {}
	}
	return &Service{db: db, clock: c, allowPrivate: allowPrivate, wake: wake}
}

// CreateInput is a new endpoint, shared by REST and GraphQL. URL nil means
// absent (or of the wrong type, already reported by the decoder); Events
// nil or empty means every event.
type CreateInput struct {
	URL    *string
	Events []string
}

// Validate collects the bad fields of in that need no network: url present
// and a valid http(s) URL, event names known (as events[i]). Create also
// checks where url points.
func Validate(in CreateInput, f *apperr.Fields) {
	if in.URL == nil {
		f.Add("url", "is required")
	} else if err := hookwire.CheckURL(context.Background(), *in.URL, true, hookwire.Lookup{}); err != nil {
		// allowPrivate true: only the form is checked, nothing is looked up.
		var ue *hookwire.URLError
		if errors.As(err, &ue) {
			f.Add("url", "%s", ue.Reason)
		}
	}
	for i, name := range in.Events {
		if !hookwire.ValidEventName(name) {
			f.Add(fmt.Sprintf("events[%d]", i), "must be one of %s", strings.Join(hookwire.EventTypes, ", "))
		}
	}
}

// Create adds an endpoint for the context's tenant with a new whsec_
// secret. In either mode, unless WEBHOOK_ALLOW_PRIVATE, a URL whose host is
// or resolves to a loopback, private, link-local or other special-purpose
// address, or is a name that only resolves locally, is refused: test keys
// are handed to every merchant, so test mode must not reach inside either.
// The endpoint is written in tx, the request's transaction handed to it, or,
// when tx is nil (tests), in one of its own.
func (s *Service) Create(ctx context.Context, tx *ent.Tx, in CreateInput) (*ent.WebhookEndpoint, error) {
	if _, ok := tenant.From(ctx); !ok {
		return nil, tenant.ErrNoTenant
	}
	var f apperr.Fields
	Validate(in, &f)
	if f.Len() == 0 {
		if err := s.checkURL(ctx, *in.URL); err != nil {
			var ue *hookwire.URLError
			if !errors.As(err, &ue) {
				return nil, err
			}
			f.Add("url", "%s", ue.Reason)
		}
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	secret, err := hookwire.NewSecret()
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	var ep *ent.WebhookEndpoint
	err = s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		ep, err = tx.Client().WebhookEndpoint.Create().
			SetID(endpointIDPrefix + uuid.NewString()).SetURL(*in.URL).SetEvents(dedupe(in.Events)).
			SetSecret(secret).SetEnabled(true).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		return err
	})
	return ep, store.Classify(err)
}

// checkURL checks where raw points (hookwire.CheckURL, whose lookup is
// bounded by s.Lookup's Timeout).
func (s *Service) checkURL(ctx context.Context, raw string) error {
	return hookwire.CheckURL(ctx, raw, s.allowPrivate, s.Lookup)
}

// dedupe keeps the first of each name, in order; never nil, so an endpoint
// for every event stores [].
func dedupe(names []string) []string {
	out := make([]string, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// List returns a page of the tenant's endpoints, newest first.
func (s *Service) List(ctx context.Context, p page.Params) ([]*ent.WebhookEndpoint, page.Info, error) {
	q := s.db.Reader().WebhookEndpoint.Query().Where(webhookendpoint.DeletedAtIsNil())
	if p.After != nil {
		q = q.Where(webhookendpoint.Or(
			webhookendpoint.CreatedAtLT(p.After.Time),
			webhookendpoint.And(webhookendpoint.CreatedAt(p.After.Time), webhookendpoint.IDLT(p.After.ID)),
		))
	}
	rows, err := q.Order(ent.Desc(webhookendpoint.FieldCreatedAt), ent.Desc(webhookendpoint.FieldID)).Limit(p.Limit + 1).All(ctx)
	if err != nil {
		return nil, page.Info{}, store.Classify(err)
	}
	rows, info := page.Cut(rows, p.Limit, Cursor)
	return rows, info, nil
}

// Endpoints' and deliveries' ids are these prefixes followed by a UUID.
const (
	endpointIDPrefix = "we_"
	deliveryIDPrefix = "dlv_"
)

// CursorID is the form of the ids in endpoints' cursors.
var CursorID = page.Prefixed(endpointIDPrefix)

// Cursor is an endpoint's position in List.
func Cursor(e *ent.WebhookEndpoint) page.Cursor { return page.Cursor{Time: e.CreatedAt, ID: e.ID} }

// Get finds one of the tenant's endpoints.
func (s *Service) Get(ctx context.Context, id string) (*ent.WebhookEndpoint, error) {
	ep, err := s.db.Reader().WebhookEndpoint.Query().
		Where(webhookendpoint.ID(id), webhookendpoint.DeletedAtIsNil()).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, notFound(id)
	}
	return ep, store.Classify(err)
}

func notFound(id string) error {
	return apperr.New(apperr.NotFound, "no webhook endpoint with id %q", id)
}

// Delete removes an endpoint: it stops receiving events, and its
// deliveries stay readable. Pending deliveries to it end failed. tx is
// Create's.
func (s *Service) Delete(ctx context.Context, tx *ent.Tx, id string) error {
	now := s.clock.Now()
	return store.Classify(s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		n, err := tx.Client().WebhookEndpoint.Update().
			Where(webhookendpoint.ID(id), webhookendpoint.DeletedAtIsNil()).
			SetDeletedAt(now).SetEnabled(false).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return notFound(id)
		}
		return nil
	}))
}

// RollSecret gives an endpoint a new secret; the old one stops signing at
// once (attempts already under way keep the one they started with). tx is
// Create's.
func (s *Service) RollSecret(ctx context.Context, tx *ent.Tx, id string) (*ent.WebhookEndpoint, error) {
	secret, err := hookwire.NewSecret()
	if err != nil {
		return nil, err
	}
	return s.updateEndpoint(ctx, tx, id, func(u *ent.WebhookEndpointUpdate) *ent.WebhookEndpointUpdate {
		return u.SetSecret(secret)
	})
}

// SetEnabled enables or disables one of the tenant's endpoints. A disabled
// endpoint gets no new deliveries and its pending ones end failed; enabling
// it clears why it was disabled. tx is Create's.
func (s *Service) SetEnabled(ctx context.Context, tx *ent.Tx, id string, enabled bool) (*ent.WebhookEndpoint, error) {
	return s.updateEndpoint(ctx, tx, id, func(u *ent.WebhookEndpointUpdate) *ent.WebhookEndpointUpdate {
		u = u.SetEnabled(enabled)
		if enabled {
			u = u.ClearDisabledReason()
		}
		return u
	})
}

// updateEndpoint applies set to one of the tenant's live (not deleted)
// endpoints, stamps updated_at and reads the endpoint back, in tx (nil: a
// transaction of its own); NOT_FOUND when there is no such endpoint.
func (s *Service) updateEndpoint(ctx context.Context, tx *ent.Tx, id string, set func(*ent.WebhookEndpointUpdate) *ent.WebhookEndpointUpdate) (*ent.WebhookEndpoint, error) {
	var ep *ent.WebhookEndpoint
	err := s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		u := c.WebhookEndpoint.Update().Where(webhookendpoint.ID(id), webhookendpoint.DeletedAtIsNil()).
			SetUpdatedAt(s.clock.Now())
		n, err := set(u).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return notFound(id)
		}
		ep, err = c.WebhookEndpoint.Get(ctx, id)
		return err
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return ep, nil
}

// Matches reports whether the endpoint takes events of type typ.
func Matches(ep *ent.WebhookEndpoint, typ string) bool {
	if len(ep.Events) == 0 {
		return true
	}
	for _, e := range ep.Events {
		if e == typ {
			return true
		}
	}
	return false
}
