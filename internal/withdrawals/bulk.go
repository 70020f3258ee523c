package withdrawals

import (
	"context"
	"fmt"
	"time"

	"github.com/lib/pq"

	"merchantpay/ent"
	"merchantpay/internal/store"
)

// On PostgreSQL a worker pass records its payouts' new states with one
// UPDATE per kind of answer instead of one per payout: the per-row values
// travel as arrays, so each statement has one text whatever the batch's
// size. They are sent unprepared (store.Unprepared), planned at each use
// with the arrays' real lengths: a prepared statement's generic plan,
// made while the table was small, scanned the whole transactions table at
// every pass once it had grown (237 scans, 275,000 rows read in a 5 s
// phase). SQLite, one writer in this process, updates row by row.

// settleRows moves the withdrawals of ps that are still pending and leased
// to owner to success, as succeedAll describes, in one statement, and
// returns the ids it moved.
const settleRowsSQL = store.Unprepared + `UPDATE transactions AS t SET status = $1, settled_at = v.at::timestamptz,
	settlement_date = v.at::timestamptz, rails_reference = COALESCE(NULLIF(v.rails, ''), t.rails_reference),
	updated_at = $2, next_run_at = NULL, lease_owner = NULL, lease_until = NULL
FROM unnest($3::text[], $4::text[], $5::text[]) AS v(id, at, rails)
WHERE t.id = v.id AND t.status = $6 AND t.lease_owner = $7
RETURNING t.id`

func settleRows(ctx context.Context, c *ent.Client, owner string, now time.Time, ids, at, rails []string) (map[string]bool, error) {
	rows, err := c.QueryContext(ctx, settleRowsSQL, StatusSuccess, now,
		pq.Array(ids), pq.Array(at), pq.Array(rails), StatusPending, owner)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("withdrawals: settle: %w", err))
	}
	defer rows.Close()
	moved := make(map[string]bool, len(ids))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		moved[id] = true
	}
	return moved, store.Classify(rows.Err())
}

// pendingRowsSQL records that the rails still hold payouts: each is looked
// at again at its next time, keeps its rails reference and submission time
// when the answer brought them (” leaves the stored value), and is given
// back.
const pendingRowsSQL = store.Unprepared + `UPDATE transactions AS t SET next_run_at = v.next::timestamptz,
	rails_reference = COALESCE(NULLIF(v.rails, ''), t.rails_reference),
	submitted_at = COALESCE(NULLIF(v.submitted, '')::timestamptz, t.submitted_at),
	lease_owner = NULL, lease_until = NULL, updated_at = $1
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS v(id, next, rails, submitted)
WHERE t.id = v.id AND t.status = $6 AND t.lease_owner = $7`

func pendingRows(ctx context.Context, c *ent.Client, owner string, now time.Time, ids, next, rails, submitted []string) error {
	_, err := c.ExecContext(ctx, pendingRowsSQL, now, pq.Array(ids), pq.Array(next), pq.Array(rails), pq.Array(submitted),
		StatusPending, owner)
	if err != nil {
		return store.Classify(fmt.Errorf("withdrawals: record pending payouts: %w", err))
	}
	return nil
}
