package broker_test

import (
	"context"
	"database/sql"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"merchantpay/internal/broker"
	"merchantpay/internal/testdb"
)

// levels counts the log lines it is given, by level.
type levels struct {
	mu sync.Mutex
	n  map[slog.Level]int
}

func (l *levels) Enabled(context.Context, slog.Level) bool { return true }
func (l *levels) Handle(_ context.Context, rec slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[slog.Level]int{}
	}
	l.n[rec.Level]++
	return nil
}
func (l *levels) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *levels) WithGroup(string) slog.Handler      { return l }

func (l *levels) count(level slog.Level) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[level]
}

// While its database is gone, the hub fails at every poll and the listener
// at every reconnection attempt; each says so once, at WARN, as the other
// workers do, not at every poll or attempt.
func TestBrokerQuietWhileDatabaseGone(t *testing.T) {
	dbURL := testdb.MigratedPostgresURL(t)
	db := testdb.Open(t, dbURL)
	var hubLog, signalLog levels
	b := broker.New(db, broker.Config{PollInterval: 10 * time.Millisecond, Log: slog.New(&hubLog)})
	s := broker.NewSignal(db, dbURL, slog.New(&signalLog))
	woken := s.Register()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); b.Run(ctx) }()
	go func() { defer wg.Done(); s.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	select { // the listener's first look: LISTEN took hold
	case <-woken:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener never listened")
	}
	if _, err := b.Subscribe(ctx, alice, nil, ""); err != nil { // the hub reads the outbox
		t.Fatal(err)
	}

	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("postgres", os.Getenv("TEST_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "DROP DATABASE "+strings.TrimPrefix(u.Path, "/")+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	// About 200 polls, and the listener's attempts at 50 ms, 100 ms, ...
	time.Sleep(2 * time.Second)
	for what, l := range map[string]*levels{"hub": &hubLog, "listener": &signalLog} {
		if n := l.count(slog.LevelWarn); n != 1 {
			t.Errorf("%s: %d WARN lines in 2 s without a database, want 1", what, n)
		}
		if n := l.count(slog.LevelError); n != 0 {
			t.Errorf("%s: %d ERROR lines, want none", what, n)
		}
	}
}
