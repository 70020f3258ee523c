// Package idem is the Idempotency-Key machinery shared by every REST POST and
// GraphQL mutation. Do runs one request in one database transaction; the first
// answer below 500 is stored in that same transaction and replayed byte for
// byte to repeats.
//
// idem.go runs a keyed request (its claim on this instance, its lock and
// look-up, its transaction); records.go holds the stored answers.
package idem

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/validate"
)

// MaxKeyLength is the longest Idempotency-Key accepted, in characters.
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
	// KeyHash, when set, is the hash of an API key that was not read from
	// the database for this request (merchants.Seen): on PostgreSQL the
	// key's look-up confirms it is still live, in the same statement, and
	// the request fails with ErrKeyNotLive if it is not. Only Do honours
	// it, and only where ConfirmsKeys.
	KeyHash string
}

// ErrKeyNotLive: Request.KeyHash names a key that was rolled or revoked.
var ErrKeyNotLive = apperr.New(apperr.Unauthorized, "invalid API key")

// ConfirmsKeys reports whether Do confirms Request.KeyHash (PostgreSQL).
func (s *Store) ConfirmsKeys() bool { return s.db.IsPostgres() }

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

	replays, reused, inUse atomic.Uint64
}

// Counts are how many keyed requests this store answered with a stored
// answer (Replays) or refused: the key used for another request (Reused),
// or still running (InUse).
type Counts struct{ Replays, Reused, InUse uint64 }

// Counts returns the counts so far.
func (s *Store) Counts() Counts {
	return Counts{Replays: s.replays.Load(), Reused: s.reused.Load(), InUse: s.inUse.Load()}
}

// tally counts a keyed request's outcome.
func (s *Store) tally(replayed bool, err error) {
	switch {
	case replayed:
		s.replays.Add(1)
	case err == nil:
	case apperr.As(err).Kind == apperr.IdempotencyKeyReused:
		s.reused.Add(1)
	case apperr.As(err).Kind == apperr.IdempotencyKeyInUse:
		s.inUse.Add(1)
	}
}

// New returns the idempotency store.
func New(db *store.DB, c clock.Clock) *Store {
	return &Store{db: db, clock: c, inflight: map[string]struct{}{}}
}

// Handler renders one request inside tx, the transaction Do opened for it
// and hands it as an argument (nil under DoLookup, which runs it outside any
// transaction); ctx does not carry it: the handler passes tx on as an
// argument to every operation that reads or writes in it.
// commit false rolls the effect back (the answer is an error); the answer is
// still stored when its status is below 500.
type Handler func(ctx context.Context, tx *ent.Tx) (resp Response, commit bool)

// Do runs h in one database transaction. With a key it first replays a
// stored answer (replayed true), refuses a different request under the same
// key (IDEMPOTENCY_KEY_REUSED) or one still running (IDEMPOTENCY_KEY_IN_USE),
// and otherwise stores h's answer in the same transaction as its effect.
//
// On PostgreSQL the key's advisory lock and the look-up of its record are
// one statement inside the transaction (no look-up before it): a new key
// costs one round trip here and one for its record, a replay a few more.
// Should another instance commit the same key between that statement's
// snapshot and its lock, the record's unique index refuses this run's
// record, this run rolls back and the stored answer is replayed.
//
// The order within a keyed request's transaction, which is what the
// handler may rely on: BEGIN; the key's lock and look-up; the handler's
// statements, in the order it sends them; the record; COMMIT.
func (s *Store) Do(ctx context.Context, req Request, h Handler) (resp Response, replayed bool, err error) {
	if req.Key == "" {
		resp, err = s.run(ctx, h)
		return resp, false, err
	}
	defer func() { s.tally(replayed, err) }()
	slot, err := s.enter(req)
	if err != nil {
		return Response{}, false, err
	}
	defer s.release(slot)
	return s.once(ctx, req, slot, h)
}

// enter checks req's key and claims it on this instance: its slot, to be
// released, or VALIDATION_ERROR (a key too long) or
// IDEMPOTENCY_KEY_IN_USE (the key is running here).
func (s *Store) enter(req Request) (string, error) {
	if err := CheckKey(req.Key); err != nil {
		return "", err
	}
	slot := req.Tenant.MerchantID + "\x00" + req.Tenant.Mode + "\x00" + req.Key
	if !s.claim(slot) {
		return "", inUse()
	}
	return slot, nil
}

// CheckKey checks an Idempotency-Key: VALIDATION_ERROR when it is too long
// (more than MaxKeyLength characters, not bytes) or not text.
func CheckKey(key string) error {
	if utf8.RuneCountInString(key) > MaxKeyLength {
		return &apperr.Error{Kind: apperr.Validation,
			Message: "Idempotency-Key must be at most 255 characters",
			Fields:  []apperr.FieldError{{Field: "Idempotency-Key", Message: "must be at most 255 characters"}}}
	}
	if msg := validate.Text(key); msg != "" {
		return &apperr.Error{Kind: apperr.Validation, Message: "Idempotency-Key " + msg,
			Fields: []apperr.FieldError{{Field: "Idempotency-Key", Message: msg}}}
	}
	return nil
}

// DoLookup is Do for a request that changes nothing in the database and
// may wait on the rails (a bank account name enquiry), or whose operation
// calls a live provider before opening its own transaction (a live virtual
// account or crypto-pay checkout): h runs outside any transaction, so that
// none is held open across the rails' call. With a
// key the guarantees are Do's: a stored answer is replayed, a different
// request under the key is refused, and h's answer below 500 is stored (in
// a transaction of its own; should another instance have stored one
// first, that one is replayed).
func (s *Store) DoLookup(ctx context.Context, req Request, h Handler) (resp Response, replayed bool, err error) {
	if req.Key == "" {
		resp, _ = h(ctx, nil)
		return resp, false, nil
	}
	defer func() { s.tally(replayed, err) }()
	slot, err := s.enter(req)
	if err != nil {
		return Response{}, false, err
	}
	defer s.release(slot)
	sys := tenant.System(ctx)
	if rec, err := s.lookup(sys, s.db.Reader(), req); err != nil {
		return Response{}, false, err
	} else if rec != nil {
		return replay(rec, req)
	}
	resp, _ = h(ctx, nil)
	if resp.Status >= 500 {
		return resp, false, nil
	}
	return s.saveAlone(ctx, req, resp)
}

// once runs a keyed request in one transaction: the key's look-up, the
// handler, the handler's answer as the key's record, the commit. A refusal
// (commit false) is rolled back and its answer stored on its own.
func (s *Store) once(ctx context.Context, req Request, slot string, h Handler) (resp Response, replayed bool, err error) {
	if !s.db.IsPostgres() {
		// SQLite has one writer: a replay is read without taking it.
		sys := tenant.System(ctx)
		if rec, err := s.lookup(sys, s.db.Reader(), req); err != nil {
			return Response{}, false, err
		} else if rec != nil {
			return replay(rec, req)
		}
	}

	// txCtx carries the transaction's span: the look-up's, the handler's
	// and the record's statements are its children. What runs after the
	// rollback (saveAlone, replayStored) opens its own, under ctx.
	txCtx, tx, err := s.db.Begin(ctx)
	if err != nil {
		return Response{}, false, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after commit
	defer func() {
		// Runs before the rollback above, which ends the span.
		if r := recover(); r != nil {
			s.db.Failed(txCtx, fmt.Errorf("idem: panic in handler: %v", r))
			panic(r)
		}
		if err != nil {
			s.failedIfError(txCtx, apperr.KindOf(err).Status(), err)
		}
	}()
	if s.db.IsPostgres() {
		// Another instance may be running the same key: its advisory lock
		// stays held until it commits.
		got, rec, err := s.lockAndLookup(txCtx, tx, req, slot)
		if err != nil {
			return Response{}, false, err
		}
		if !got {
			return Response{}, false, inUse()
		}
		if rec != nil {
			return replay(rec, req)
		}
	}
	resp, commit := h(txCtx, tx)
	if !commit {
		s.failedIfError(txCtx, resp.Status, nil)
		if err := tx.Rollback(); err != nil {
			return Response{}, false, store.Classify(err)
		}
		if resp.Status >= 500 {
			return resp, false, nil
		}
		return s.saveAlone(ctx, req, resp)
	}
	if resp.Status < 500 {
		if err := s.save(txCtx, tx, req, resp); err != nil {
			if errors.Is(err, errTaken) || store.IsUniqueViolation(err) {
				_ = tx.Rollback()
				return s.replayStored(ctx, req)
			}
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

// lockAndLookup takes the key's transaction-scoped advisory lock and, if it
// got it, reads the key's live record, in one round trip; with
// req.KeyHash it also confirms that API key is live (ErrKeyNotLive).
func (s *Store) lockAndLookup(ctx context.Context, tx *ent.Tx, req Request, slot string) (bool, *ent.IdempotencyRecord, error) {
	rows, err := tx.QueryContext(ctx, `SELECT l.got, r.request_hash, r.status_code, r.body, r.content_type,
			$6 = '' OR EXISTS (SELECT 1 FROM api_keys k WHERE k.hash = $6 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $5))
		FROM (SELECT pg_try_advisory_xact_lock($1) AS got) l
		LEFT JOIN idempotency_records r ON l.got AND r.merchant_id = $2 AND r.mode = $3 AND r.key = $4 AND r.expires_at > $5`,
		lockID(slot), req.Tenant.MerchantID, req.Tenant.Mode, req.Key, s.clock.Now(), req.KeyHash)
	if err != nil {
		return false, nil, store.Classify(err)
	}
	defer rows.Close()
	var got, live bool
	var hash, contentType *string
	var status *int
	var body []byte
	if rows.Next() {
		if err := rows.Scan(&got, &hash, &status, &body, &contentType, &live); err != nil {
			return false, nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return false, nil, store.Classify(err)
	}
	if !live {
		return false, nil, ErrKeyNotLive
	}
	if hash == nil {
		return got, nil, nil
	}
	return got, &ent.IdempotencyRecord{RequestHash: *hash, StatusCode: *status, Body: body, ContentType: *contentType}, nil
}

// run runs a request without a key: h in a transaction of its own, handed
// to it as once does, committed unless h says otherwise; nothing is stored.
func (s *Store) run(ctx context.Context, h Handler) (Response, error) {
	var resp Response
	err := s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		var commit bool
		resp, commit = h(ctx, tx)
		if !commit {
			s.failedIfError(ctx, resp.Status, nil)
			return store.ErrRollback
		}
		return nil
	})
	if errors.Is(err, store.ErrRollback) {
		err = nil
	}
	return resp, err
}

// failedIfError applies one rule to the rollback of a write's transaction,
// keyed or not: a refusal answered below 500 is the handler's choice, and
// its transaction's span stays unmarked; a status of 500 or more is an
// error, and marks it failed (with err, or the status when err is nil).
func (s *Store) failedIfError(txCtx context.Context, status int, err error) {
	if status < 500 {
		return
	}
	if err == nil {
		err = fmt.Errorf("idem: the handler answered %d", status)
	}
	s.db.Failed(txCtx, err)
}

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

func inUse() error {
	return apperr.New(apperr.IdempotencyKeyInUse,
		"a request with this Idempotency-Key is still being processed; retry after it completes")
}

func lockID(slot string) int64 {
	h := fnv.New64a()
	h.Write([]byte("idem\x00" + slot))
	return int64(h.Sum64())
}
