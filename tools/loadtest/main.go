// Command loadtest is the load harness of `make bench` (docs/PERFORMANCE.md).
// It is a module of its own, so that its load generator (vegeta) stays out
// of the service's dependencies, and it uses none of the service's code: it
// creates fresh PostgreSQL databases on the local server, starts the
// service's own binary (bin/server, `make build`) as a child process on a
// loopback port, creates a merchant with that binary's `merchant create`,
// funds it through the sandbox, and measures:
//
//   - http: at -c closed-loop clients (vegeta), REST withdrawals with an
//     Idempotency-Key and without, GraphQL withdrawals with an
//     idempotencyKey and without, and GET /transactions/{ref}, each between
//     two runs of pgbench (TPC-B-like around the withdrawals, select-only
//     around the GET) on a scale-10 database of the same server at the same
//     concurrency, and the targets met or not;
//   - roundtrips: the database round trips of each operation, counted on
//     the wire by a proxy, and EXPLAIN of every statement they sent;
//   - fanout: -subscribers GraphQL subscriptions (graphql-transport-ws),
//     one event, the time until all have it, and the server's memory per
//     idle subscriber (the clients run in a third process: this binary
//     again, in its subscribers role);
//   - dispatch: webhook deliveries per second to a local receiver;
//   - lifecycle (not in the default set; diagnosis): every round trip of a
//     withdrawal's whole life, its background work included.
//
// Run (from this directory): go run . -server ../../bin/server
// [-suites http,roundtrips,fanout,dispatch].
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The harness starts itself again, with roleEnv set, as the fan-out's
// subscriber clients.
const (
	roleEnv         = "LOADTEST_ROLE"
	roleSubscribers = "subscribers"
)

type options struct {
	suites          map[string]bool
	serverBin       string
	adminURL        string
	clients         int
	duration        time.Duration
	pgbenchScale    int
	subscribers     int
	events          int
	endpoints       int
	logLevel        string
	keep            bool
	profileDir      string
	countStatements bool
	phases          map[string]bool
}

// The http suite's phases; -phases picks among them, defaultPhases when
// it is empty.
var (
	allPhases     = []string{"withdraw", "withdraw-keyless", "graphql", "graphql-keyless", "get", "rates", "spread"}
	defaultPhases = []string{"withdraw", "withdraw-keyless", "graphql", "graphql-keyless", "get"}
)

// phase tells whether the http suite runs the phase named.
func (o options) phase(name string) bool { return o.phases[name] }

func main() {
	if os.Getenv(roleEnv) == roleSubscribers {
		os.Exit(runSubscribersRole())
	}
	var o options
	suites := flag.String("suites", "http,roundtrips,fanout,dispatch", "comma-separated: http, roundtrips, fanout, dispatch; lifecycle (diagnosis: round trips of a withdrawal's whole life)")
	flag.StringVar(&o.serverBin, "server", "../../bin/server", "the service's binary (make build)")
	flag.StringVar(&o.adminURL, "db", defaultAdminURL(), "PostgreSQL URL of a database on the server to benchmark; fresh databases are created beside it")
	flag.IntVar(&o.clients, "c", 8, "concurrent clients (HTTP phases and pgbench)")
	flag.DurationVar(&o.duration, "d", 10*time.Second, "duration of each HTTP phase and pgbench run")
	flag.IntVar(&o.pgbenchScale, "pgbench-scale", 10, "pgbench -i -s: at 10 its TPC-B-like workload has ten branch rows, so 8 clients do not queue on one")
	flag.IntVar(&o.subscribers, "subscribers", 10000, "WebSocket subscribers of the fan-out benchmark")
	flag.IntVar(&o.events, "events", 20000, "events of the dispatcher benchmark")
	flag.IntVar(&o.endpoints, "endpoints", 1, "webhook endpoints of the dispatcher benchmark (each event goes to all)")
	flag.StringVar(&o.logLevel, "log-level", "info", "the service's LOG_LEVEL (info writes one access-log line per request)")
	flag.BoolVar(&o.keep, "keep", false, "keep the databases afterwards")
	flag.StringVar(&o.profileDir, "profile", "", "directory for the service's CPU profile of each HTTP phase (pprof)")
	flag.BoolVar(&o.countStatements, "count-statements", false, "dispatch: send the service's database traffic through the counting proxy and list the statements per delivery (diagnosis only)")
	flag.BoolVar(&stdTransport, "std-transport", false, "HTTP phases: vegeta with net/http's Transport instead of the lean one (diagnosis: what the load generator's client costs)")
	phases := flag.String("phases", strings.Join(defaultPhases, ","), "http suite: comma-separated phases, among "+strings.Join(allPhases, ", "))
	flag.Parse()
	o.phases = map[string]bool{}
	for _, s := range strings.Split(*phases, ",") {
		if s = strings.TrimSpace(s); s != "" {
			o.phases[s] = true
		}
	}
	for name := range o.phases {
		if !slices.Contains(allPhases, name) {
			fmt.Fprintf(os.Stderr, "loadtest: -phases: no phase %q (among %s)\n", name, strings.Join(allPhases, ", "))
			os.Exit(2)
		}
	}
	o.suites = map[string]bool{}
	for _, s := range strings.Split(*suites, ",") {
		if s = strings.TrimSpace(s); s != "" {
			o.suites[s] = true
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

func defaultAdminURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

func run(ctx context.Context, o options) error {
	raiseNoFile()
	fmt.Printf("machine: %d cores (GOMAXPROCS %d), %s, %s/%s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	pg, err := newPG(ctx, o.adminURL)
	if err != nil {
		return err
	}
	pg.keep = o.keep
	defer pg.close()
	fmt.Printf("postgres: %s\n", pg.describe(ctx))
	if o.suites["http"] {
		if err := httpSuite(ctx, o, pg); err != nil {
			return fmt.Errorf("http: %w", err)
		}
	}
	if o.suites["roundtrips"] {
		if err := roundTripSuite(ctx, o, pg); err != nil {
			return fmt.Errorf("roundtrips: %w", err)
		}
	}
	if o.suites["lifecycle"] {
		if err := lifecycleSuite(ctx, o, pg); err != nil {
			return fmt.Errorf("lifecycle: %w", err)
		}
	}
	if o.suites["fanout"] {
		if err := fanoutSuite(ctx, o, pg); err != nil {
			return fmt.Errorf("fanout: %w", err)
		}
	}
	if o.suites["dispatch"] {
		if err := dispatchSuite(ctx, o, pg); err != nil {
			return fmt.Errorf("dispatch: %w", err)
		}
	}
	return nil
}

// raiseNoFile lifts the open-file limit to its hard maximum: thousands of
// WebSocket connections need as many descriptors.
func raiseNoFile() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

func noFileLimit() uint64 {
	var l syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l)
	return l.Cur
}
