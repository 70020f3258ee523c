package broker_test

import (
	"context"
	"testing"
	"time"

	"merchantpay/internal/broker"
	"merchantpay/internal/testdb"
)

// Two instances on one PostgreSQL: a commit on one wakes the other through
// NOTIFY, and does not wake its own instance a second time through its own
// listener.
func TestSignalAcrossInstances(t *testing.T) {
	url := testdb.MigratedPostgresURL(t)
	start := func() (*broker.Signal, <-chan struct{}) {
		s := broker.NewSignal(testdb.Open(t, url), url, nil)
		woken := s.Register()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { s.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
		return s, woken
	}
	one, oneWoken := start()
	_, twoWoken := start()
	// Each listener's first wake-up is its own look at what came before it.
	for _, ch := range []<-chan struct{}{oneWoken, twoWoken} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal("a listener never started")
		}
	}
	for i := range 3 {
		one.Committed()
		select {
		case <-oneWoken:
		default:
			t.Fatalf("commit %d did not wake its own instance at once", i)
		}
		select {
		case <-twoWoken:
		case <-time.After(10 * time.Second):
			t.Fatalf("commit %d never reached the other instance", i)
		}
		// Its own NOTIFY comes back to it too, and is let pass.
		select {
		case <-oneWoken:
			t.Fatalf("commit %d woke its own instance again through its NOTIFY", i)
		case <-time.After(300 * time.Millisecond):
		}
	}
}
