package store

import (
	"context"
	"database/sql/driver"
	"net"
	"net/url"
	"sync"
	"time"
)

// A database that stops answering without closing its connections (a
// stalled server, a partition that drops packets) must not hang the
// service: lib/pq's answer to a cancelled context is a CancelRequest on a
// new connection, and it goes on waiting on the old one, so a query on a
// dead connection never returned, and neither did /readyz, the request or
// the shutdown waiting on it. Each connection therefore watches the
// context of what it runs: once that context is done, lib/pq has
// stallGrace to end the statement its own way, after which the
// connection's deadline ends it (an i/o timeout: the connection is
// dropped, and the request answered 503 UNAVAILABLE). Establishing a
// connection is bounded by connect_timeout (defaultConnectTimeout unless
// the URL sets one).

// stallGrace is how long after its context ends a statement may still
// take to finish before its connection is cut.
const stallGrace = 2 * time.Second

// defaultConnectTimeout bounds the set-up of a connection (TCP and the
// start-up exchange) when the URL does not say.
const defaultConnectTimeout = "10"

// withConnectTimeout adds connect_timeout to a postgres:// URL without one.
func withConnectTimeout(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL // lib/pq reports it
	}
	q := u.Query()
	if q.Get("connect_timeout") != "" {
		return rawURL
	}
	q.Set("connect_timeout", defaultConnectTimeout)
	u.RawQuery = q.Encode()
	return u.String()
}

// dialer is lib/pq's dialer, which hands the network connection it makes
// for a new database connection to Connect (through the context), so that
// the connection's deadline can be set.
type dialer struct{ d net.Dialer }

type dialSlotKey struct{}

// dialSlot is where DialContext leaves the network connection for the
// Connect that asked (found through the context). Once that Connect's
// context ends, the connection's deadline is now: lib/pq's start-up
// exchange does not watch the context, and would otherwise wait for
// connect_timeout.
type dialSlot struct {
	mu    sync.Mutex
	nc    net.Conn
	ended bool
}

func (s *dialSlot) set(nc net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nc = nc
	if s.ended {
		_ = nc.SetDeadline(time.Now())
	}
}

func (s *dialSlot) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	if s.nc != nil {
		_ = s.nc.SetDeadline(time.Now())
	}
}

func (d dialer) Dial(network, address string) (net.Conn, error) {
	return d.d.Dial(network, address)
}

func (d dialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout(network, address, timeout)
}

func (d dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	nc, err := d.d.DialContext(ctx, network, address)
	if slot, ok := ctx.Value(dialSlotKey{}).(*dialSlot); ok && err == nil {
		slot.set(nc)
	}
	return nc, err
}

// connect runs open (lib/pq's Connect) with a dial slot in its context and
// returns the connection with its network connection (nil if the dialer
// was not asked).
func connect(ctx context.Context, open func(context.Context) (driver.Conn, error)) (driver.Conn, net.Conn, error) {
	slot := &dialSlot{}
	stop := context.AfterFunc(ctx, slot.end)
	conn, err := open(context.WithValue(ctx, dialSlotKey{}, slot))
	stopped := stop()
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if !stopped && err == nil && slot.nc != nil {
		// The context ended just as the connection was made: it stands.
		_ = slot.nc.SetDeadline(time.Time{})
	}
	return conn, slot.nc, err
}

// watch cuts its connection stallGrace after ctx ends, unless stopped.
type watch struct {
	mu   sync.Mutex
	done bool
	nc   net.Conn
	stop func() bool
}

// watchCtx arms a watch for what the connection runs next with ctx,
// replacing the previous one.
func (c *cachingConn) watchCtx(ctx context.Context) {
	c.unwatch()
	if c.nc == nil || ctx.Done() == nil {
		return
	}
	w := &watch{nc: c.nc}
	w.stop = context.AfterFunc(ctx, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.done {
			_ = w.nc.SetDeadline(time.Now().Add(stallGrace))
		}
	})
	c.w = w
}

// unwatch disarms the watch, clearing a deadline it may have set (the
// statement finished in time after all).
func (c *cachingConn) unwatch() {
	w := c.w
	if w == nil {
		return
	}
	c.w = nil
	if w.stop() {
		return
	}
	w.mu.Lock()
	w.done = true
	_ = w.nc.SetDeadline(time.Time{})
	w.mu.Unlock()
}

// Ping is watched like a statement (the readiness check).
func (c *cachingConn) Ping(ctx context.Context) error {
	c.watchCtx(ctx)
	return c.pqConn.Ping(ctx)
}

// ResetSession disarms the last use's watch before the connection is
// used again.
func (c *cachingConn) ResetSession(ctx context.Context) error {
	c.unwatch()
	return c.pqConn.ResetSession(ctx)
}
