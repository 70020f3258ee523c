package transactions

import (
	"sync"
	"sync/atomic"
)

// Rendered is a transaction's JSON as txview.Transaction.AppendJSON writes
// it.
type Rendered []byte

// AppendJSON appends r.
func (r Rendered) AppendJSON(b []byte) []byte { return append(b, r...) }

// MarshalJSON is r, so that encoding/json writes it as it is.
func (r Rendered) MarshalJSON() ([]byte, error) { return r, nil }

// renderedCache keeps the JSON of transactions GetWithKey rendered, by the
// service's reference, with the version of the row it was rendered from:
// PostgreSQL's xmin, the transaction that wrote that version of the row.
// Every update of a row writes a new version with its writer's xmin, so
// an entry is served only while the row is still exactly the one it was
// rendered from; the look-up that checks the version still authenticates
// the key and confirms the row is the key's tenant's, in its one round
// trip. A merchant polling a transaction's status is answered from a row
// of five columns instead of forty-one, with nothing to decode or render.
//
// Two versions of one row can only share an xmin if the transaction ids
// wrapped around (2^32 transactions later) while the entry was kept; the
// cache holds at most 2*renderedGeneration entries and ages the least
// recently read out first, so an entry that old is long gone.
type renderedCache struct {
	mu sync.Mutex
	// cur takes new and re-read entries; when it is full it becomes old
	// and old is dropped, so an entry read again within a generation
	// stays (an approximation of least recently used, with no list).
	cur, old map[string]renderedEntry
	max      int

	hits, misses atomic.Uint64
}

type renderedEntry struct {
	version int64
	json    Rendered
}

// renderedGeneration bounds one generation: with a transaction's JSON about
// a kilobyte, the cache stays under about 40 MiB.
const renderedGeneration = 16384

func newRenderedCache(max int) *renderedCache {
	return &renderedCache{cur: make(map[string]renderedEntry), old: make(map[string]renderedEntry), max: max}
}

// get returns ref's entry, keeping it among the recently read.
func (c *renderedCache) get(ref string) (renderedEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.cur[ref]; ok {
		return e, true
	}
	e, ok := c.old[ref]
	if ok {
		delete(c.old, ref)
		c.putLocked(ref, e)
	}
	return e, ok
}

// put keeps e as ref's entry, replacing any other.
func (c *renderedCache) put(ref string, e renderedEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.old, ref)
	c.putLocked(ref, e)
}

func (c *renderedCache) putLocked(ref string, e renderedEntry) {
	if _, ok := c.cur[ref]; !ok && len(c.cur) >= c.max {
		c.old, c.cur = c.cur, make(map[string]renderedEntry, c.max)
	}
	c.cur[ref] = e
}

func (c *renderedCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.old)
}
