package store

import (
	"errors"
	"net/url"
	"strconv"
	"time"

	"github.com/lib/pq"
)

// DefaultMaxConns is the PostgreSQL pool of one instance when Options
// leaves it unset. Every instance holds up to this many connections, so N
// instances need N × DefaultMaxConns of the server's max_connections
// (100 by default), plus a reserve for administration and maintenance.
const DefaultMaxConns = 20

// Options size the connection pool and bound statements. They apply to
// PostgreSQL only: SQLite has one writer connection and a few readers, and
// no statement timeout.
type Options struct {
	// MaxConns is the most connections the instance opens, idle ones
	// included (as many may stay idle); 0 means DefaultMaxConns.
	MaxConns int
	// StatementTimeout is PostgreSQL's statement_timeout on every
	// connection: a statement running longer is cancelled by the server
	// and answered UNAVAILABLE. 0 leaves the server's own setting (or one
	// the URL gives).
	StatementTimeout time.Duration
}

func (o Options) maxConns() int {
	if o.MaxConns > 0 {
		return o.MaxConns
	}
	return DefaultMaxConns
}

// withStatementTimeout sets statement_timeout in a postgres:// URL when d
// is positive: lib/pq sends parameters it does not know itself to the
// server as run-time parameters when each connection starts, so every
// connection of the pool gets it without a statement of its own. The
// value is in milliseconds, rounded up.
func withStatementTimeout(rawURL string, d time.Duration) string {
	if d <= 0 {
		return rawURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL // lib/pq reports it
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	q := u.Query()
	q.Set("statement_timeout", strconv.FormatInt(int64(ms), 10))
	u.RawQuery = q.Encode()
	return u.String()
}

// statementCanceled reports whether PostgreSQL cancelled a statement
// (query_canceled): it ran past statement_timeout, or its caller gave up
// and lib/pq asked the server to stop it. Either way the database did not
// answer in time, which is unavailability, not a fault of the request.
func statementCanceled(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == "57014"
}
