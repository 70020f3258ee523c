package idem

// This file holds the stored answers: a key's record, looked up, saved in
// the request's transaction (or in one of its own) and replayed; and the
// purge of expired ones.

import (
	"context"
	"errors"

	entsql "entgo.io/ent/dialect/sql"

	"merchantpay/ent"
	"merchantpay/ent/idempotencyrecord"
	"merchantpay/internal/apperr"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// saveAlone stores resp as req's record in a transaction of its own (an
// answer with no effect to keep); if another run stored the key first,
// that one is replayed.
func (s *Store) saveAlone(ctx context.Context, req Request, resp Response) (Response, bool, error) {
	err := s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error { return s.save(ctx, tx, req, resp) })
	if errors.Is(err, errTaken) || store.IsUniqueViolation(err) {
		return s.replayStored(ctx, req)
	}
	return resp, false, err
}

// lookup reads the key's live record through c, or nil when it has none.
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

// replayStored replays the live record another run stored under req's key;
// with none found it answers IDEMPOTENCY_KEY_IN_USE.
func (s *Store) replayStored(ctx context.Context, req Request) (Response, bool, error) {
	sys := tenant.System(ctx)
	rec, err := s.lookup(sys, s.db.Reader(), req)
	if err != nil {
		return Response{}, false, err
	}
	if rec == nil {
		return Response{}, false, inUse()
	}
	return replay(rec, req)
}

// replay answers req with rec: its stored answer, or IDEMPOTENCY_KEY_REUSED
// when rec was stored for a different request.
func replay(rec *ent.IdempotencyRecord, req Request) (Response, bool, error) {
	if rec.RequestHash != req.Hash {
		return Response{}, false, apperr.New(apperr.IdempotencyKeyReused,
			"this Idempotency-Key was already used with a different request; use a new key for a new request")
	}
	return Response{Status: rec.StatusCode, Body: rec.Body, ContentType: rec.ContentType}, true, nil
}

// errTaken: the key has a live record (stored by a concurrent request).
var errTaken = errors.New("idem: key already has a live record")

// save stores the answer in one statement: an insert that takes the place
// of an expired record of the same key, and fails with errTaken when a live
// one holds it. It writes in tx.
func (s *Store) save(ctx context.Context, tx *ent.Tx, req Request, resp Response) error {
	ctx = tenant.System(ctx)
	query, args := s.saveStmt(req, resp)
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return store.Classify(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return errTaken
	}
	return nil
}

// saveStmt inserts resp as req's record, or replaces an expired one; it
// writes no row when the key has a live record.
func (s *Store) saveStmt(req Request, resp Response) (string, []any) {
	now := s.clock.Now()
	return entsql.Dialect(s.db.Dialect).Insert(idempotencyrecord.Table).
		Columns(idempotencyrecord.FieldMerchantID, idempotencyrecord.FieldMode, idempotencyrecord.FieldKey,
			idempotencyrecord.FieldRequestHash, idempotencyrecord.FieldStatusCode, idempotencyrecord.FieldBody,
			idempotencyrecord.FieldContentType, idempotencyrecord.FieldCreatedAt, idempotencyrecord.FieldExpiresAt).
		Values(req.Tenant.MerchantID, req.Tenant.Mode, req.Key, req.Hash, resp.Status, resp.Body,
			resp.ContentType, now, now.Add(TTL)).
		OnConflict(
			entsql.ConflictColumns(idempotencyrecord.FieldMerchantID, idempotencyrecord.FieldMode, idempotencyrecord.FieldKey),
			entsql.ResolveWithNewValues(),
			// The builder qualifies the column with the table: the existing row.
			entsql.UpdateWhere(entsql.LTE(idempotencyrecord.FieldExpiresAt, now)),
		).Query()
}

// Purge deletes expired records, in a transaction of its own (on SQLite,
// on the one writer).
func (s *Store) Purge(ctx context.Context) (int, error) {
	ctx = tenant.System(ctx)
	var n int
	err := s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		n, err = tx.Client().IdempotencyRecord.Delete().
			Where(idempotencyrecord.ExpiresAtLTE(s.clock.Now())).Exec(ctx)
		return err
	})
	return n, store.Classify(err)
}
