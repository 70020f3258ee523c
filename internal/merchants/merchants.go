// Package merchants creates merchants, issues and rolls their API keys, and
// authenticates requests by key; the key decides the merchant and the mode.
// Keys are stored only as SHA-256 hashes; the plain key is returned once.
package merchants

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/apikey"
	"merchantpay/ent/merchant"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/validate"
)

// Key kinds.
const (
	Secret = "secret"
	Public = "public"
)

// Service manages merchants and keys.
type Service struct {
	db    *store.DB
	clock clock.Clock
	// authQuery reads a key's principal; its one argument is the key's hash.
	authQuery string
	// seen holds, by key hash, the principal of every key that has
	// authenticated in this process (see Seen). A principal never changes
	// but for its key's revocation, which only the database knows, and its
	// expiry, which Seen checks.
	seen sync.Map
	// usage holds when each key was last used, until FlushUsage writes it.
	usage usage
}

// New returns the merchants service.
func New(db *store.DB, c clock.Clock) *Service {
	return &Service{db: db, clock: c, authQuery: authQuery(db.Dialect), usage: usage{used: map[string]time.Time{}}}
}

// authQuery joins a live key to its merchant. It is built once: every
// request runs it. Its arguments are the key's hash and the time now.
func authQuery(dialect string) string {
	k, m := entsql.Table(apikey.Table).As("k"), entsql.Table(merchant.Table).As("m")
	query, _ := entsql.Dialect(dialect).
		Select(append(principalColumns(k, m), k.C(apikey.FieldExpiresAt))...).
		From(k).Join(m).On(k.C(apikey.FieldMerchantID), m.C(merchant.FieldID)).
		Where(entsql.And(entsql.EQ(k.C(apikey.FieldHash), ""), liveKey(k))).
		Limit(1).Query()
	return query
}

// liveKey is the condition on k that a key still works: not revoked, and
// not past the end of the overlap it was rolled with. Its one argument is
// the time now.
func liveKey(k *entsql.SelectTable) *entsql.Predicate {
	return entsql.And(entsql.IsNull(k.C(apikey.FieldRevokedAt)),
		entsql.Or(entsql.IsNull(k.C(apikey.FieldExpiresAt)), entsql.GT(k.C(apikey.FieldExpiresAt), time.Time{})))
}

// Created is what `merchant create` prints.
type Created struct {
	MerchantID    string `json:"merchant_id"`
	TestSecretKey string `json:"test_secret_key"`
	TestPublicKey string `json:"test_public_key"`
	LiveSecretKey string `json:"live_secret_key"`
	LivePublicKey string `json:"live_public_key"`
}

// Rolled is what `merchant roll-keys` prints.
type Rolled struct {
	MerchantID string `json:"merchant_id"`
	Mode       string `json:"mode"`
	SecretKey  string `json:"secret_key"`
	PublicKey  string `json:"public_key"`
	// OldKeysExpireAt is when the keys rolled stop working, when they were
	// given an overlap (nil: revoked at once).
	OldKeysExpireAt *time.Time `json:"old_keys_expire_at,omitempty"`
}

// Principal is an authenticated caller.
type Principal struct {
	MerchantID   string
	MerchantName string
	Email        string
	Mode         string
	Kind         string
	KeyPrefix    string
	// KeyHash is the stored form of the key that authenticated (set by
	// Authenticate): a long-lived connection checks it again (KeysLive).
	KeyHash string
	// ExpiresAt is when the key stops working, if it was rolled with an
	// overlap (set by Authenticate).
	ExpiresAt *time.Time
}

// Tenant is the principal's (merchant, mode).
func (p Principal) Tenant() tenant.Tenant {
	return tenant.Tenant{MerchantID: p.MerchantID, Mode: p.Mode}
}

// Hash is the stored form of a key.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func newKey(kind, mode string) string {
	p := "SECK_"
	if kind == Public {
		p = "PUBK_"
	}
	return p + strings.ToUpper(mode) + "_" + uuid.NewString()
}

// Create makes a merchant with a key pair for each mode.
func (s *Service) Create(ctx context.Context, name, email string) (Created, error) {
	var f apperr.Fields
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 {
		f.Add("name", "is required (1 to 200 characters)")
	}
	// The same check as every other e-mail of the API: notifications go
	// to this address.
	if msg := validate.Email(email); msg != "" {
		f.Add("email", "%s", msg)
	}
	if err := f.Err(); err != nil {
		return Created{}, err
	}
	ctx = tenant.System(ctx)
	out := Created{MerchantID: uuid.NewString()}
	err := s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		now := s.clock.Now()
		if err := c.Merchant.Create().SetID(out.MerchantID).SetName(name).SetEmail(email).
			SetCreatedAt(now).SetUpdatedAt(now).Exec(ctx); err != nil {
			return err
		}
		var err error
		if out.TestSecretKey, out.TestPublicKey, err = s.issue(ctx, c, out.MerchantID, tenant.Test); err != nil {
			return err
		}
		out.LiveSecretKey, out.LivePublicKey, err = s.issue(ctx, c, out.MerchantID, tenant.Live)
		return err
	})
	return out, err
}

func (s *Service) issue(ctx context.Context, c *ent.Client, merchantID, mode string) (secret, public string, err error) {
	now := s.clock.Now()
	secret, public = newKey(Secret, mode), newKey(Public, mode)
	for kind, key := range map[string]string{Secret: secret, Public: public} {
		err = c.APIKey.Create().SetID(uuid.NewString()).SetMerchantID(merchantID).SetMode(mode).
			SetKind(kind).SetHash(Hash(key)).SetPrefix(key[:14]).SetCreatedAt(now).SetUpdatedAt(now).Exec(ctx)
		if err != nil {
			return "", "", err
		}
	}
	return secret, public, nil
}

// Authenticate finds the merchant and mode of a key, in one query: every
// request runs it before anything else.
func (s *Service) Authenticate(ctx context.Context, key string) (Principal, error) {
	if !plausibleKey(key) {
		return Principal{}, apperr.New(apperr.Unauthorized, "invalid API key")
	}
	hash := Hash(key)
	rows, err := s.db.Reader().QueryContext(ctx, s.authQuery, hash, s.clock.Now())
	if err != nil {
		return Principal{}, store.Classify(err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return Principal{}, store.Classify(err)
		}
		return Principal{}, apperr.New(apperr.Unauthorized, "invalid API key")
	}
	var p Principal
	var expires entsql.NullTime
	if err := rows.Scan(append(p.dest(), &expires)...); err != nil {
		return Principal{}, store.Classify(err)
	}
	if expires.Valid {
		t := expires.Time.UTC()
		p.ExpiresAt = &t
	}
	p.KeyHash = hash
	s.seen.Store(p.KeyHash, p)
	s.usage.touch(hash, s.clock.Now())
	return p, nil
}

// Seen returns the principal key had when it last authenticated in this
// process, without asking the database: the key may have been rolled
// since. Only a caller that confirms the key in the first statement of its
// transaction may act on it (idem.Request.KeyHash: a keyed request on
// PostgreSQL confirms it with its idempotency look-up, a round trip it
// makes anyway), and must call Forget when it is no longer live.
func (s *Service) Seen(key string) (Principal, bool) {
	if !plausibleKey(key) {
		return Principal{}, false
	}
	v, ok := s.seen.Load(Hash(key))
	if !ok {
		return Principal{}, false
	}
	p := v.(Principal)
	now := s.clock.Now()
	if p.ExpiresAt != nil && !now.Before(*p.ExpiresAt) {
		s.seen.Delete(p.KeyHash)
		return Principal{}, false
	}
	s.usage.touch(p.KeyHash, now)
	return p, true
}

// forgetTenant drops what Seen knows of every key of a merchant's mode:
// after a roll, so that this process asks the database again.
func (s *Service) forgetTenant(merchantID, mode string) {
	s.seen.Range(func(k, v any) bool {
		if p := v.(Principal); p.MerchantID == merchantID && p.Mode == mode {
			s.seen.Delete(k)
		}
		return true
	})
}

// Forget drops what Seen knows of the key with this hash.
func (s *Service) Forget(hash string) { s.seen.Delete(hash) }

// KeysLive reports which of the key hashes still authenticate: the keys exist
// and were not rolled. A WebSocket connection, authenticated once, asks before
// each operation and each event it is sent, so that rolling a key voids it at
// once there too.
func (s *Service) KeysLive(ctx context.Context, hashes []string) (map[string]bool, error) {
	live := make(map[string]bool, len(hashes))
	if len(hashes) == 0 {
		return live, nil
	}
	ctx = tenant.System(ctx)
	found, err := s.db.Reader().APIKey.Query().
		Where(apikey.HashIn(hashes...), apikey.RevokedAtIsNil(),
			apikey.Or(apikey.ExpiresAtIsNil(), apikey.ExpiresAtGT(s.clock.Now()))).
		Select(apikey.FieldHash).Strings(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	for _, h := range found {
		live[h] = true
	}
	return live, nil
}

// principalColumns are the columns a Principal is read from (dest's order).
func principalColumns(k, m *entsql.SelectTable) []string {
	return []string{m.C(merchant.FieldID), m.C(merchant.FieldName), m.C(merchant.FieldEmail),
		k.C(apikey.FieldMode), k.C(apikey.FieldKind), k.C(apikey.FieldPrefix)}
}

func (p *Principal) dest() []any {
	return []any{&p.MerchantID, &p.MerchantName, &p.Email, &p.Mode, &p.Kind, &p.KeyPrefix}
}

func plausibleKey(key string) bool {
	if len(key) < 10 || len(key) > 128 {
		return false
	}
	return strings.HasPrefix(key, "SECK_") || strings.HasPrefix(key, "PUBK_")
}

// Count is the number of merchants.
func (s *Service) Count(ctx context.Context) (int, error) {
	return s.db.Reader().Merchant.Query().Count(ctx)
}

// Get returns a merchant.
func (s *Service) Get(ctx context.Context, id string) (*ent.Merchant, error) {
	m, err := s.db.Reader().Merchant.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "merchant not found")
	}
	return m, err
}

// ByEmail returns the oldest merchant with the e-mail address email
// (NOT_FOUND when there is none).
func (s *Service) ByEmail(ctx context.Context, email string) (*ent.Merchant, error) {
	m, err := s.db.Reader().Merchant.Query().Where(merchant.Email(email)).
		Order(ent.Asc(merchant.FieldCreatedAt), ent.Asc(merchant.FieldID)).First(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no merchant with this e-mail address")
	}
	return m, store.Classify(err)
}

// Describe formats a principal for logs.
func (p Principal) String() string {
	return fmt.Sprintf("%s/%s/%s", p.MerchantID, p.Mode, p.Kind)
}

type principalKey struct{}

// WithPrincipal returns ctx carrying the authenticated caller.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the authenticated caller of ctx.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Name is the name of merchant merchantID (from_merchant on transactions,
// account names): the authenticated caller's, without a query, when the
// caller is that merchant; else read through c.
func Name(ctx context.Context, c *ent.Client, merchantID string) (string, error) {
	if p, ok := PrincipalFrom(ctx); ok && p.MerchantID == merchantID && p.MerchantName != "" {
		return p.MerchantName, nil
	}
	m, err := c.Merchant.Get(ctx, merchantID)
	if err != nil {
		return "", store.Classify(err)
	}
	return m.Name, nil
}
