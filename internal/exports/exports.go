// Package exports makes one-time export tokens and streams the transactions
// an export names as CSV. A token is the export's only credential: only its
// SHA-256 is stored, it lasts TokenTTL, and it is used up by the statement
// that checks it, so it works once across every instance.
package exports

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/exporttoken"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/transactions"
)

// Path is where the export is served; its one parameter is token.
const Path = "/dashboard/export/transactions.csv"

// TokenTTL is how long a token may wait for its use.
const TokenTTL = 60 * time.Second

// Service makes and uses export tokens.
type Service struct {
	db    *store.DB
	clock clock.Clock
	txs   *transactions.Service
}

// New returns the exports service.
func New(db *store.DB, c clock.Clock, txs *transactions.Service) *Service {
	return &Service{db: db, clock: c, txs: txs}
}

// Token is a new export token.
type Token struct {
	Token     string
	ExpiresAt time.Time
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Create makes a token for an export of the ctx tenant's transactions that
// f selects (f already validated), in tx (nil: a transaction of its own).
func (s *Service) Create(ctx context.Context, tx *ent.Tx, f transactions.Filter) (Token, error) {
	if _, ok := tenant.From(ctx); !ok {
		return Token{}, tenant.ErrNoTenant
	}
	filter, err := json.Marshal(f)
	if err != nil {
		return Token{}, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Token{}, err
	}
	now := s.clock.Now()
	out := Token{Token: base64.RawURLEncoding.EncodeToString(b[:]), ExpiresAt: now.Add(TokenTTL)}
	err = s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		return tx.ExportToken.Create().SetID(hashToken(out.Token)).SetFilter(filter).
			SetCreatedAt(now).SetExpiresAt(out.ExpiresAt).Exec(ctx)
	})
	if err != nil {
		return Token{}, store.Classify(err)
	}
	return out, nil
}

// ErrUnusable is Use's answer for a token that is unknown, used or
// expired: the three are not told apart.
var ErrUnusable = apperr.New(apperr.NotFound, "this export link is unknown, was used already or has expired; ask for a new one")

// Use uses token up and returns the tenant and filter of its export.
func (s *Service) Use(ctx context.Context, token string) (tenant.Tenant, transactions.Filter, error) {
	if token == "" || len(token) > 100 {
		return tenant.Tenant{}, transactions.Filter{}, ErrUnusable
	}
	ctx = tenant.System(ctx)
	id, now := hashToken(token), s.clock.Now()
	var t tenant.Tenant
	var f transactions.Filter
	err := s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		n, err := c.ExportToken.Update().
			Where(exporttoken.ID(id), exporttoken.UsedAtIsNil(), exporttoken.ExpiresAtGT(now)).
			SetUsedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrUnusable
		}
		row, err := c.ExportToken.Get(ctx, id)
		if err != nil {
			return err
		}
		t = tenant.Tenant{MerchantID: row.MerchantID, Mode: row.Mode}
		return json.Unmarshal(row.Filter, &f)
	})
	if err != nil {
		return tenant.Tenant{}, transactions.Filter{}, store.Classify(err)
	}
	return t, f, nil
}

// Purge deletes tokens that expired before cutoff, used or not, in a
// transaction of its own (on SQLite, on the one writer).
func (s *Service) Purge(ctx context.Context, cutoff time.Time) (int, error) {
	ctx = tenant.System(ctx)
	var n int
	err := s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		n, err = tx.Client().ExportToken.Delete().Where(exporttoken.ExpiresAtLT(cutoff)).Exec(ctx)
		return err
	})
	return n, store.Classify(err)
}
