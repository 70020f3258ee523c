package idem

import (
	"context"
	"errors"
	"fmt"

	"github.com/lib/pq"

	"merchantpay/ent"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// A Seat is one request's place in a write that the request does not
// begin itself. Seated runs a request's handler with its seat, and the
// operation the handler calls takes the seat either into a batch, which
// commits several requests' operations in one transaction
// (withdrawals.Service.WithdrawIn), or into a transaction of its own
// (Tx). Either way, with a key, the key is locked and looked up first, in
// that transaction (LockAll); the operation's outcome is handed to the
// handler before the commit, the handler renders its answer from it, and
// the answer is stored in the same transaction (SaveAll) before the
// commit. A member of a batch waits for that commit before Seated returns.
type Seat struct {
	store *Store
	req   Request
	// slot is the key's claim on this instance, "" without a key.
	slot string

	// tx is the seat's own transaction (Tx).
	tx *ent.Tx
	// joined: a batch took the seat; left: it gave the seat back before
	// any write (its answer is then stored on its own).
	joined, left bool
	// decided is the answer LockAll gave for the handler (a stored answer
	// replayed, or the key refused); the handler's own is then ignored.
	decided *decision
	// answer carries a keyed member's rendered answer to its batch; done
	// the batch's end (its commit's error).
	answer chan Response
	done   chan error
}

type decision struct {
	resp     Response
	replayed bool
	err      error
}

// ErrDecided is what an operation returns to a handler whose seat LockAll
// decided: the handler's answer is not used (Seated returns the decision).
var ErrDecided = errors.New("idem: answered from the key's record")

// SeatedHandler renders one request given its seat; see Handler.
type SeatedHandler func(ctx context.Context, seat *Seat) (resp Response, commit bool)

// Seated runs h with a seat (see Seat): Do for an operation that begins
// its own write. Should h answer without its seat taken (bad input), its
// answer is handled as Do handles a refusal: stored on its own, or the
// key's stored answer replayed.
func (s *Store) Seated(ctx context.Context, req Request, h SeatedHandler) (resp Response, replayed bool, err error) {
	seat := &Seat{store: s, req: req, answer: make(chan Response, 1), done: make(chan error, 1)}
	if req.Key != "" {
		defer func() { s.tally(replayed, err) }()
		if seat.slot, err = s.enter(req); err != nil {
			return Response{}, false, err
		}
		defer s.release(seat.slot)
	}
	resp, commit := seat.run(ctx, h)
	switch {
	case seat.decided != nil:
		return seat.decided.resp, seat.decided.replayed, seat.decided.err
	case seat.tx != nil:
		return s.finish(ctx, seat.tx, req, resp, commit)
	case seat.joined && !seat.left:
		if err := <-seat.done; err != nil {
			return Response{}, false, err
		}
		return resp, false, nil
	case req.Key == "":
		return resp, false, nil
	}
	if commit {
		return Response{}, false, fmt.Errorf("idem: a seated handler succeeded without writing")
	}
	return s.saveAlone(ctx, req, resp)
}

// run runs h and, for a keyed member of a batch, hands its answer to the
// batch, whatever becomes of h (a 5xx or a panic is not stored).
func (seat *Seat) run(ctx context.Context, h SeatedHandler) (resp Response, commit bool) {
	defer func() {
		if seat.joined && !seat.left && seat.decided == nil && seat.Keyed() {
			if r := recover(); r != nil {
				seat.answer <- Response{}
				panic(r)
			}
			a := resp
			if a.Status >= 500 {
				a = Response{}
			}
			seat.answer <- a
		}
	}()
	return h(ctx, seat)
}

// finish ends a seat's own transaction as once does: the answer stored
// and committed, or the refusal rolled back and its answer stored alone.
func (s *Store) finish(ctx context.Context, tx *ent.Tx, req Request, resp Response, commit bool) (Response, bool, error) {
	defer tx.Rollback() //nolint:errcheck // a no-op after commit
	if !commit {
		if err := tx.Rollback(); err != nil {
			return Response{}, false, store.Classify(err)
		}
		return s.saveAlone(ctx, req, resp)
	}
	if resp.Status < 500 && req.Key != "" {
		if err := s.save(store.WithTx(ctx, tx), req, resp); err != nil {
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

// saveAlone stores the answer of a request that wrote nothing, in a
// transaction of its own, or replays the key's stored answer.
func (s *Store) saveAlone(ctx context.Context, req Request, resp Response) (Response, bool, error) {
	if req.Key == "" || resp.Status >= 500 {
		return resp, false, nil
	}
	err := s.db.Tx(ctx, func(ctx context.Context) error { return s.save(ctx, req, resp) })
	if errors.Is(err, errTaken) || store.IsUniqueViolation(err) {
		return s.replayStored(ctx, req)
	}
	return resp, false, err
}

// Tx runs fn in a transaction of the seat's own: begun here, the key
// locked and looked up (ErrDecided when that answered the request), fn,
// and, after the handler returns, the answer stored and the commit
// (Seated). fn's error is returned for the handler to render; the
// transaction is rolled back then.
func (seat *Seat) Tx(ctx context.Context, fn func(ctx context.Context) error) error {
	tx, err := seat.store.db.Begin(ctx)
	if err != nil {
		return err
	}
	seat.tx = tx
	ctx = store.WithTx(ctx, tx)
	if _, err := LockAll(ctx, tx, []*Seat{seat}); err != nil {
		return err
	}
	if seat.decided != nil {
		return ErrDecided
	}
	return fn(ctx)
}

// Keyed reports whether the seat's request carries an Idempotency-Key.
func (seat *Seat) Keyed() bool { return seat.req.Key != "" }

// Tenant is the tenant the seat's request acts for.
func (seat *Seat) Tenant() tenant.Tenant { return seat.req.Tenant }

// Join marks the seat as taken by a batch, before any of its statements.
func (seat *Seat) Join() { seat.joined = true }

// Leave gives the seat back before the batch wrote anything of it: the
// handler's answer is stored on its own (a refusal the batch could only
// find by failing).
func (seat *Seat) Leave() { seat.left = true }

// Left reports whether the seat was given back (Leave).
func (seat *Seat) Left() bool { return seat.left }

// Decided reports whether LockAll answered for the seat's handler.
func (seat *Seat) Decided() bool { return seat.decided != nil }

// Answer returns a keyed member's rendered answer, once its handler has
// returned (Status 0: not to be stored), or ctx's error.
func (seat *Seat) Answer(ctx context.Context) (Response, error) {
	select {
	case a := <-seat.answer:
		return a, nil
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
}

// Done ends a batch member's wait: err nil once the batch committed.
func (seat *Seat) Done(err error) { seat.done <- err }

// LockAll takes, in the transaction tx, the keys of the keyed seats (their
// advisory locks, on PostgreSQL), and then looks up their stored answers
// in a statement of its own, which sees any answer committed before the
// lock was taken. A seat whose key holds an answer, is running on another
// instance, or whose API key is no longer live is decided: the operation
// returns ErrDecided to its handler. It returns the seats left.
func LockAll(ctx context.Context, tx *ent.Tx, seats []*Seat) ([]*Seat, error) {
	var keyed []*Seat
	for _, seat := range seats {
		if seat.Keyed() {
			keyed = append(keyed, seat)
		}
	}
	if len(keyed) == 0 {
		return seats, nil
	}
	s := keyed[0].store
	if s.db.IsPostgres() {
		ids := make([]int64, len(keyed))
		for i, seat := range keyed {
			ids[i] = lockID(seat.slot)
		}
		got, err := tryLocks(ctx, tx, ids)
		if err != nil {
			return nil, err
		}
		for i, seat := range keyed {
			if !got[i] {
				seat.decided = &decision{err: inUse()}
			}
		}
	}
	var ask []*Seat
	for _, seat := range keyed {
		if seat.decided == nil {
			ask = append(ask, seat)
		}
	}
	if len(ask) > 0 {
		found, err := s.lookupAll(ctx, tx, ask)
		if err != nil {
			return nil, err
		}
		for i, seat := range ask {
			switch f := found[i]; {
			case !f.live:
				seat.decided = &decision{err: ErrKeyNotLive}
			case f.rec != nil:
				resp, replayed, err := replay(f.rec, seat.req)
				seat.decided = &decision{resp: resp, replayed: replayed, err: err}
			}
		}
	}
	var left []*Seat
	for _, seat := range seats {
		if seat.decided == nil {
			left = append(left, seat)
		}
	}
	return left, nil
}

// tryLocks takes the transaction-scoped advisory locks ids, in one
// statement, and says which it got.
func tryLocks(ctx context.Context, tx *ent.Tx, ids []int64) ([]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT pg_try_advisory_xact_lock(id) FROM unnest($1::bigint[]) WITH ORDINALITY AS k(id, n) ORDER BY n`, pq.Array(ids))
	if err != nil {
		return nil, store.Classify(err)
	}
	got := make([]bool, 0, len(ids))
	for rows.Next() {
		var g bool
		if err := rows.Scan(&g); err != nil {
			rows.Close()
			return nil, err
		}
		got = append(got, g)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, store.Classify(err)
	}
	if len(got) != len(ids) {
		return nil, fmt.Errorf("idem: %d locks answered of %d", len(got), len(ids))
	}
	return got, nil
}

// found is a key's stored answer (nil: none), and whether the API key the
// request named for confirmation is live.
type found struct {
	rec  *ent.IdempotencyRecord
	live bool
}

// lookupAll reads the live records of seats' keys in tx, one statement for
// all on PostgreSQL, where it also confirms each Request.KeyHash.
func (s *Store) lookupAll(ctx context.Context, tx *ent.Tx, seats []*Seat) ([]found, error) {
	out := make([]found, len(seats))
	if !s.db.IsPostgres() {
		for i, seat := range seats {
			rec, err := s.lookup(tenant.System(ctx), tx.Client(), seat.req)
			if err != nil {
				return nil, err
			}
			out[i] = found{rec: rec, live: true}
		}
		return out, nil
	}
	merchants, modes, keys, keyHashes := make([]string, len(seats)), make([]string, len(seats)), make([]string, len(seats)), make([]string, len(seats))
	for i, seat := range seats {
		merchants[i], modes[i], keys[i], keyHashes[i] = seat.req.Tenant.MerchantID, seat.req.Tenant.Mode, seat.req.Key, seat.req.KeyHash
	}
	rows, err := tx.QueryContext(ctx, `SELECT k.n, r.request_hash, r.status_code, r.body, r.content_type,
			k.kh = '' OR EXISTS (SELECT 1 FROM api_keys a WHERE a.hash = k.kh AND a.revoked_at IS NULL)
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS k(merchant, mode, key, kh, n)
		LEFT JOIN idempotency_records r ON r.merchant_id = k.merchant AND r.mode = k.mode AND r.key = k.key AND r.expires_at > $5`,
		pq.Array(merchants), pq.Array(modes), pq.Array(keys), pq.Array(keyHashes), s.clock.Now())
	if err != nil {
		return nil, store.Classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n int
		var live bool
		var hash, contentType *string
		var status *int
		var body []byte
		if err := rows.Scan(&n, &hash, &status, &body, &contentType, &live); err != nil {
			return nil, err
		}
		if n < 1 || n > len(out) {
			return nil, fmt.Errorf("idem: look-up answered key %d of %d", n, len(out))
		}
		out[n-1].live = live
		if hash != nil {
			out[n-1].rec = &ent.IdempotencyRecord{RequestHash: *hash, StatusCode: *status, Body: body, ContentType: *contentType}
		}
	}
	return out, store.Classify(rows.Err())
}

// SaveAll stores, in ctx's transaction, one statement for all, the
// answers of keyed seats (Status 0: not stored). Their keys were locked by
// LockAll, so none holds a live answer; one that does fails the batch.
func SaveAll(ctx context.Context, seats []*Seat, answers []Response) error {
	var reqs []Request
	var resps []Response
	for i, seat := range seats {
		if answers[i].Status != 0 {
			reqs, resps = append(reqs, seat.req), append(resps, answers[i])
		}
	}
	if len(reqs) == 0 {
		return nil
	}
	s := seats[0].store
	query, args := s.saveStmt(reqs, resps)
	res, err := s.db.Client(ctx).ExecContext(tenant.System(ctx), query, args...)
	if err != nil {
		return store.Classify(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != int64(len(reqs)) {
		return errTaken
	}
	return nil
}
