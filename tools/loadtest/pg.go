package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/lib/pq" // the service's driver
)

// pg is the PostgreSQL server under test, reached through an admin URL.
type pg struct {
	admin   *sql.DB
	base    *url.URL
	created []string
	keep    bool
}

func newPG(ctx context.Context, adminURL string) (*pg, error) {
	u, err := url.Parse(adminURL)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	q := u.Query()
	if q.Get("sslmode") == "" {
		q.Set("sslmode", "disable")
		u.RawQuery = q.Encode()
	}
	db, err := sql.Open("postgres", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(2)
	if err := db.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("PostgreSQL at %s: %w", u.Redacted(), err)
	}
	return &pg{admin: db, base: u}, nil
}

// url is the URL of database name on the same server.
func (p *pg) url(name string) string {
	u := *p.base
	u.Path = "/" + name
	return u.String()
}

// create makes a fresh database and returns its URL.
func (p *pg) create(ctx context.Context, prefix string) (string, error) {
	name := fmt.Sprintf("loadtest_%s_%d_%d", prefix, os.Getpid(), time.Now().UnixNano()%1e6)
	if _, err := p.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	p.created = append(p.created, name)
	return p.url(name), nil
}

func (p *pg) close() {
	if !p.keep {
		for _, name := range p.created {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if _, err := p.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
				fmt.Fprintf(os.Stderr, "drop database %s: %v\n", name, err)
			}
			cancel()
		}
	}
	p.admin.Close()
}

func (p *pg) describe(ctx context.Context) string {
	var version string
	_ = p.admin.QueryRowContext(ctx, "SHOW server_version").Scan(&version)
	var parts []string
	// current_setting gives each value in its own units (shared_buffers
	// "128MB", not a count of 8 kB pages).
	rows, err := p.admin.QueryContext(ctx, `SELECT name, current_setting(name) FROM pg_settings
		WHERE name IN ('autovacuum','max_connections','shared_buffers','synchronous_commit','fsync','wal_sync_method','commit_delay') ORDER BY name`)
	if err == nil {
		defer rows.Close()
		for rows.Next() {
			var n, s string
			if rows.Scan(&n, &s) == nil {
				parts = append(parts, n+"="+s)
			}
		}
	}
	return fmt.Sprintf("%s on %s (%s)", version, p.base.Host, strings.Join(parts, ", "))
}

// pgbenchResult is one pgbench run.
type pgbenchResult struct {
	TPS     float64
	Latency float64 // average, ms
	Command string
}

var (
	tpsRE     = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	latencyRE = regexp.MustCompile(`latency average = ([0-9.]+) ms`)
)

// pgbenchPath finds pgbench: on PATH, or in the Debian PostgreSQL layout.
func pgbenchPath() (string, error) {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	if len(matches) > 0 {
		return matches[len(matches)-1], nil
	}
	return "", fmt.Errorf("pgbench not found: install it with `apt-get install -y postgresql-contrib` (on Debian 12 that pulls in postgresql-15, whose bin directory holds pgbench)")
}

// pgbencher runs pgbench's workloads on a database of its own on the
// server under test, initialised once (pgbench -i -s scale).
type pgbencher struct {
	bin, dbURL string
	args       []string
}

// newPgbench creates and initialises pgbench's database at scale; run then
// runs TPC-B-like or select-only for d at clients, with prepared statements
// (-M prepared), as the service prepares its own.
//
// Each run vacuums all four of pgbench's tables first (-v), as the
// harness vacuums the service's tables before each phase: both sides start
// a run with no dead rows of the runs before.
//
// The scale matters: TPC-B-like updates one of scale branch rows per
// transaction, so at scale 1 every client queues on the same row and the
// yardstick measures that queue rather than the server. At 10 the 8
// clients spread over ten branches.
func (p *pg) newPgbench(ctx context.Context, clients, scale int, d time.Duration) (*pgbencher, error) {
	bin, err := pgbenchPath()
	if err != nil {
		return nil, err
	}
	dbURL, err := p.create(ctx, "pgbench")
	if err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, bin, "-i", "-q", "-s", strconv.Itoa(scale), dbURL).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgbench -i -s %d: %v: %s", scale, err, out)
	}
	jobs := min(2, clients)
	secs := strconv.Itoa(max(1, int(d.Seconds())))
	return &pgbencher{bin: bin, dbURL: dbURL, args: []string{"-M", "prepared", "-v", "-c", strconv.Itoa(clients), "-j", strconv.Itoa(jobs), "-T", secs}}, nil
}

func (b *pgbencher) run(ctx context.Context, selectOnly bool) (pgbenchResult, error) {
	args := slices.Clone(b.args)
	if selectOnly {
		args = append(args, "-S")
	}
	cmd := "pgbench " + strings.Join(args, " ")
	out, err := exec.CommandContext(ctx, b.bin, append(args, b.dbURL)...).CombinedOutput()
	if err != nil {
		return pgbenchResult{}, fmt.Errorf("%s: %v: %s", cmd, err, out)
	}
	m := tpsRE.FindSubmatch(out)
	if m == nil {
		return pgbenchResult{}, fmt.Errorf("%s: no tps in %s", cmd, out)
	}
	r := pgbenchResult{Command: cmd}
	r.TPS, _ = strconv.ParseFloat(string(m[1]), 64)
	if m := latencyRE.FindSubmatch(out); m != nil {
		r.Latency, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	return r, nil
}
