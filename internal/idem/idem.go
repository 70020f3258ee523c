// Package idem is the Idempotency-Key machinery (CONTRACT 4) shared by every
// REST POST and GraphQL mutation. Do runs one request in one database
// transaction; the first answer below 500 is stored in that same transaction
// and replayed byte for byte to repeats.
package idem

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"sync"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/idempotencyrecord"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// MaxKeyLength is the longest Idempotency-Key accepted.
const MaxKeyLength = 255

// TTL is how long a stored answer is replayed.
const TTL = 24 * time.Hour

// Response is a rendered answer.
type Response struct {
	Status      int
	Body        []byte
	ContentType string
}

// Request identifies one keyed request.
type Request struct {
	Tenant tenant.Tenant
	// Key is the Idempotency-Key; empty means none was sent.
	Key string
	// Hash identifies the request (method, path, body); see HashRequest.
	Hash string
}

// HashRequest hashes what makes two requests the same.
func HashRequest(method, path string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Store runs keyed requests.
type Store struct {
	db       *store.DB
	clock    clock.Clock
	mu       sync.Mutex
	inflight map[string]struct{}
}

// New returns the idempotency store.
func New(db *store.DB, c clock.Clock) *Store {
	return &Store{db: db, clock: c, inflight: map[string]struct{}{}}
}

// Handler renders one request inside the transaction carried by ctx. commit
// false rolls the effect back (the answer is an error); the answer is still
// stored when its status is below 500.
type Handler func(ctx context.Context) (resp Response, commit bool)

// Do runs h in one database transaction. With a key it first replays a
// stored answer (replayed true), refuses a different request under the same
// key (IDEMPOTENCY_KEY_REUSED) or one still running (IDEMPOTENCY_KEY_IN_USE),
// and otherwise stores h's answer in the same transaction as its effect.
func (s *Store) Do(ctx context.Context, req Request, h Handler) (resp Response, replayed bool, err error) {
	if req.Key == "" {
		resp, err = s.run(ctx, h)
		return resp, false, err
	}
	if len(req.Key) > MaxKeyLength {
		return Response{}, false, &apperr.Error{Kind: apperr.Validation,
			Message: "Idempotency-Key must be at most 255 characters",
			Fields:  []apperr.FieldError{{Field: "Idempotency-Key", Message: "must be at most 255 characters"}}}
	}
	slot := req.Tenant.MerchantID + "\x00" + req.Tenant.Mode + "\x00" + req.Key
	if !s.claim(slot) {
		return Response{}, false, inUse()
	}
	defer s.release(slot)

	sys := tenant.System(ctx)
	if rec, err := s.lookup(sys, s.db.Client(sys), req); err != nil {
		return Response{}, false, err
	} else if rec != nil {
		return replay(rec, req)
	}

	tx, err := s.db.Begin(ctx)
	if err != nil {
		return Response{}, false, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after commit
	txCtx := store.WithTx(ctx, tx)
	if s.db.IsPostgres() {
		// Another instance may be running the same key: its advisory lock
		// stays held until it commits.
		var got bool
		rows, err := tx.QueryContext(txCtx, "SELECT pg_try_advisory_xact_lock($1)", lockID(slot))
		if err != nil {
			return Response{}, false, store.Classify(err)
		}
		if rows.Next() {
			err = rows.Scan(&got)
		}
		rows.Close()
		if err != nil {
			return Response{}, false, err
		}
		if !got {
			return Response{}, false, inUse()
		}
		if rec, err := s.lookup(tenant.System(txCtx), tx.Client(), req); err != nil {
			return Response{}, false, err
		} else if rec != nil {
			return replay(rec, req)
		}
	}
	resp, commit := h(txCtx)
	if !commit {
		if err := tx.Rollback(); err != nil {
			return Response{}, false, store.Classify(err)
		}
		if resp.Status >= 500 {
			return resp, false, nil
		}
		// The error answer is stored on its own: there is no effect to keep.
		err := s.db.Tx(ctx, func(ctx context.Context) error {
			return s.save(ctx, req, resp)
		})
		if store.IsUniqueViolation(err) {
			return s.replayStored(ctx, req)
		}
		return resp, false, err
	}
	if resp.Status < 500 {
		if err := s.save(txCtx, req, resp); err != nil {
			return Response{}, false, err
		}
	}
	if err := tx.Commit(); err != nil {
		if store.IsUniqueViolation(err) {
			return s.replayStored(ctx, req)
		}
		return Response{}, false, store.Classify(err)
	}
	return resp, false, nil
}

func (s *Store) run(ctx context.Context, h Handler) (Response, error) {
	var resp Response
	err := s.db.Tx(ctx, func(ctx context.Context) error {
		var commit bool
		resp, commit = h(ctx)
		if !commit {
			return errRollback
		}
		return nil
	})
	if err == errRollback {
		err = nil
	}
	return resp, err
}

var errRollback = apperr.New(apperr.Internal, "rollback")

func (s *Store) claim(slot string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.inflight[slot]; busy {
		return false
	}
	s.inflight[slot] = struct{}{}
	return true
}

func (s *Store) release(slot string) {
	s.mu.Lock()
	delete(s.inflight, slot)
	s.mu.Unlock()
}

func (s *Store) lookup(ctx context.Context, c *ent.Client, req Request) (*ent.IdempotencyRecord, error) {
	rec, err := c.IdempotencyRecord.Query().Where(
		idempotencyrecord.MerchantID(req.Tenant.MerchantID),
		idempotencyrecord.Mode(req.Tenant.Mode),
		idempotencyrecord.Key(req.Key),
		idempotencyrecord.ExpiresAtGT(s.clock.Now()),
	).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return rec, store.Classify(err)
}

func (s *Store) replayStored(ctx context.Context, req Request) (Response, bool, error) {
	sys := tenant.System(ctx)
	rec, err := s.lookup(sys, s.db.Client(sys), req)
	if err != nil {
		return Response{}, false, err
	}
	if rec == nil {
		return Response{}, false, inUse()
	}
	return replay(rec, req)
}

func (s *Store) save(ctx context.Context, req Request, resp Response) error {
	ctx = tenant.System(ctx)
	c := s.db.Client(ctx)
	now := s.clock.Now()
	// An expired record of the same key gives way to the new one.
	if _, err := c.IdempotencyRecord.Delete().Where(
		idempotencyrecord.MerchantID(req.Tenant.MerchantID),
		idempotencyrecord.Mode(req.Tenant.Mode),
		idempotencyrecord.Key(req.Key),
		idempotencyrecord.ExpiresAtLTE(now),
	).Exec(ctx); err != nil {
		return err
	}
	return c.IdempotencyRecord.Create().
		SetMerchantID(req.Tenant.MerchantID).SetMode(req.Tenant.Mode).SetKey(req.Key).
		SetRequestHash(req.Hash).SetStatusCode(resp.Status).SetBody(resp.Body).
		SetContentType(resp.ContentType).SetCreatedAt(now).SetExpiresAt(now.Add(TTL)).Exec(ctx)
}

// Purge deletes expired records.
func (s *Store) Purge(ctx context.Context) (int, error) {
	ctx = tenant.System(ctx)
	return s.db.Client(ctx).IdempotencyRecord.Delete().
		Where(idempotencyrecord.ExpiresAtLTE(s.clock.Now())).Exec(ctx)
}

func replay(rec *ent.IdempotencyRecord, req Request) (Response, bool, error) {
	if rec.RequestHash != req.Hash {
		return Response{}, false, apperr.New(apperr.IdempotencyKeyReused,
			"this Idempotency-Key was already used with a different request; use a new key for a new request")
	}
	return Response{Status: rec.StatusCode, Body: rec.Body, ContentType: rec.ContentType}, true, nil
}

func inUse() error {
	return apperr.New(apperr.IdempotencyKeyInUse,
		"a request with this Idempotency-Key is still being processed; retry after it completes")
}

func lockID(slot string) int64 {
	h := fnv.New64a()
	h.Write([]byte("idem\x00" + slot))
	return int64(h.Sum64())
}
