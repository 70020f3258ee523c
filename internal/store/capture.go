package store

import (
	"context"
	"errors"
	"fmt"

	"entgo.io/ent/dialect"

	"merchantpay/ent"
)

// Capture runs build against a client that runs nothing: the one write
// statement build's ent builder sends is returned instead of executed, so
// that it can be a Prelude (the row of a withdrawal rides in the round trip
// of its debit). ent fills in the node as it would after the insert
// (defaults, hooks), which is what build may keep. build may send one
// statement only, one that returns nothing (an INSERT with its id set in
// Go); anything else fails the capture.
func (db *DB) Capture(ctx context.Context, build func(ctx context.Context, c *ent.Client) error) (Stmt, error) {
	var got captured
	if err := build(context.WithValue(ctx, captureKey{}, &got), db.captor); err != nil {
		return Stmt{}, err
	}
	if !got.done {
		return Stmt{}, errors.New("store: capture: the builder sent no statement")
	}
	return got.st, nil
}

type captureKey struct{}

type captured struct {
	st   Stmt
	done bool
}

// captor is the driver of DB.captor: it keeps the statement of a Capture.
type captor struct{ dialect string }

func newCaptor(d string) *ent.Client { return ent.NewClient(ent.Driver(captor{dialect: d})) }

func (d captor) Exec(ctx context.Context, query string, args, v any) error {
	got, ok := ctx.Value(captureKey{}).(*captured)
	switch {
	case !ok:
		return errors.New("store: the capturing client used outside Capture")
	case got.done:
		return errors.New("store: capture: the builder sent a second statement")
	case v != nil:
		return fmt.Errorf("store: capture: the builder reads the result of %q", query)
	}
	a, ok := args.([]any)
	if !ok && args != nil {
		return fmt.Errorf("store: capture: arguments of type %T", args)
	}
	got.st, got.done = Stmt{SQL: query, Args: a}, true
	return nil
}

func (d captor) Query(_ context.Context, query string, _, _ any) error {
	return fmt.Errorf("store: capture: the builder reads (%q)", query)
}

func (d captor) Tx(context.Context) (dialect.Tx, error) { return dialect.NopTx(d), nil }
func (d captor) Close() error                           { return nil }
func (d captor) Dialect() string                        { return d.dialect }
