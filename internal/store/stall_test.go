package store_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

// stallProxy forwards TCP to target until stalled; then it keeps every
// connection open and forwards nothing, as a hung server or a partition
// that drops packets does.
type stallProxy struct {
	ln      net.Listener
	stalled atomic.Bool
	mu      sync.Mutex
	conns   []net.Conn
}

func newStallProxy(t *testing.T, target string) *stallProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln}
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go p.pipe(c, up)
			go p.pipe(up, c)
		}
	}()
	return p
}

func (p *stallProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		for p.stalled.Load() {
			time.Sleep(10 * time.Millisecond) // hold the bytes, forever
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// A database that stops answering without closing its connections does
// not hang a statement past its context: it ends stallGrace after the
// context, as UNAVAILABLE, on a pooled connection and on a new one.
func TestStalledDatabaseEndsWithContext(t *testing.T) {
	base := testdb.MigratedPostgresURL(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p := newStallProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	db, err := store.Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sys := tenant.System(context.Background())
	if _, err := db.Reader().Merchant.Query().Count(sys); err != nil {
		t.Fatal(err)
	}
	p.stalled.Store(true)
	for i := range 2 { // the pooled connection, then (it was dropped) a new one
		ctx, cancel := context.WithTimeout(sys, 300*time.Millisecond)
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := db.Reader().Merchant.Query().Count(ctx)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("query %d answered through a stalled proxy", i)
			}
			if e := apperr.As(store.Classify(err)); e.Kind != apperr.Unavailable && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("query %d: %v, classified %s; want UNAVAILABLE or the deadline", i, err, e.Kind)
			}
			t.Logf("query %d ended after %v: %v", i, time.Since(start).Round(time.Millisecond), err)
		case <-time.After(20 * time.Second):
			t.Fatalf("query %d still hangs 20 s after its 300 ms deadline", i)
		}
		cancel()
	}
	ctx, cancel := context.WithTimeout(sys, 300*time.Millisecond)
	defer cancel()
	pinged := make(chan error, 1)
	go func() { pinged <- db.Ping(ctx) }()
	select {
	case err := <-pinged:
		if err == nil {
			t.Fatal("ping answered through a stalled proxy")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ping still hangs 20 s after its 300 ms deadline")
	}
}
