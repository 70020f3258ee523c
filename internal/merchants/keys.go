package merchants

import (
	"context"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/apikey"
	"merchantpay/internal/apperr"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// MaxOverlap is the longest a rolled key may keep working beside its
// successor.
const MaxOverlap = 24 * time.Hour

// RollKeys voids a mode's keys at once and issues a new pair, in a
// transaction of its own (for callers outside a request).
func (s *Service) RollKeys(ctx context.Context, merchantID, mode string) (Rolled, error) {
	return s.RollKeysWithOverlap(ctx, nil, merchantID, mode, 0)
}

// ValidateOverlap names field when overlap is negative or longer than
// MaxOverlap.
func ValidateOverlap(overlap time.Duration, field string, f *apperr.Fields) {
	if overlap < 0 || overlap > MaxOverlap {
		f.Add(field, "must be between 0 and %d seconds (24 hours)", int(MaxOverlap/time.Second))
	}
}

// RollKeysWithOverlap issues a new key pair for a mode. With overlap 0 the
// mode's keys stop working at once; otherwise they keep working until
// overlap from now (a key already due to expire sooner keeps its own
// expiry), and Rolled.OldKeysExpireAt says when. It runs in tx, the
// request's transaction handed to it, or, when tx is nil (the CLI, tests),
// in one of its own.
func (s *Service) RollKeysWithOverlap(ctx context.Context, tx *ent.Tx, merchantID, mode string, overlap time.Duration) (Rolled, error) {
	var f apperr.Fields
	if mode != tenant.Test && mode != tenant.Live {
		f.Add("mode", "must be test or live")
	}
	ValidateOverlap(overlap, "overlap", &f)
	if err := f.Err(); err != nil {
		return Rolled{}, err
	}
	ctx = tenant.System(ctx)
	out := Rolled{MerchantID: merchantID, Mode: mode}
	err := s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		if _, err := c.Merchant.Get(ctx, merchantID); err != nil {
			if ent.IsNotFound(err) {
				return apperr.New(apperr.NotFound, "no merchant %q", merchantID)
			}
			return err
		}
		now := s.clock.Now()
		live := c.APIKey.Update().Where(apikey.MerchantID(merchantID), apikey.Mode(mode), apikey.RevokedAtIsNil())
		if overlap == 0 {
			if _, err := live.SetRevokedAt(now).SetUpdatedAt(now).Save(ctx); err != nil {
				return err
			}
		} else {
			until := now.Add(overlap)
			out.OldKeysExpireAt = &until
			if _, err := live.Where(apikey.Or(apikey.ExpiresAtIsNil(), apikey.ExpiresAtGT(until))).
				SetExpiresAt(until).SetUpdatedAt(now).Save(ctx); err != nil {
				return err
			}
		}
		var err error
		out.SecretKey, out.PublicKey, err = s.issue(ctx, c, merchantID, mode)
		return err
	})
	if err != nil {
		return Rolled{}, store.Classify(err)
	}
	s.forgetTenant(merchantID, mode)
	return out, nil
}

// Key is an API key as the dashboard lists it: never the key itself.
type Key struct {
	ID         string
	Kind       string
	Mode       string
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	ExpiresAt  *time.Time
}

// Keys lists the ctx tenant's keys that still work, newest first, each
// with when it was last used (by this process, if it has not written it
// yet).
func (s *Service) Keys(ctx context.Context) ([]Key, error) {
	t, ok := tenant.From(ctx)
	if !ok {
		return nil, tenant.ErrNoTenant
	}
	now := s.clock.Now()
	rows, err := s.db.Reader().APIKey.Query().
		Where(apikey.MerchantID(t.MerchantID), apikey.Mode(t.Mode), apikey.RevokedAtIsNil(),
			apikey.Or(apikey.ExpiresAtIsNil(), apikey.ExpiresAtGT(now))).
		Order(ent.Desc(apikey.FieldCreatedAt), ent.Asc(apikey.FieldKind), ent.Asc(apikey.FieldID)).All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	out := make([]Key, len(rows))
	for i, k := range rows {
		out[i] = Key{ID: k.ID, Kind: k.Kind, Mode: k.Mode, Prefix: k.Prefix, CreatedAt: k.CreatedAt,
			LastUsedAt: s.usage.latest(k.Hash, k.LastUsedAt), ExpiresAt: k.ExpiresAt}
	}
	return out, nil
}
