package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// rtOp is one operation whose round trips are counted.
type rtOp struct {
	label string
	run   func(i int) error
}

// quietWorkers keeps the service's background workers from running on their
// own during the count: no polling, no ledger check, no payout due. What an
// operation's commit wakes at once (the outbox's fan-out, the payout
// worker's look for due work) still runs, and is counted with it.
var quietWorkers = []string{"JOBS_POLL_INTERVAL=1h", "EVENTS_POLL_INTERVAL=1h", "LEDGER_CHECK_INTERVAL=0", "SANDBOX_PAYOUT_DELAY=1h"}

// roundTripSuite counts the database round trips of each hot operation on
// a service whose workers do not poll (quietWorkers), then EXPLAINs each statement they sent against tables
// filled to a realistic size and analysed.
func roundTripSuite(ctx context.Context, o options, p *pg) error {
	const n = 50
	fmt.Printf("\n== roundtrips: database round trips per operation (mean of %d, counted on the wire; workers not polling, so what a commit wakes is counted)\n", n)
	dbURL, err := p.create(ctx, "rt")
	if err != nil {
		return err
	}
	proxy, err := newWireProxy(p.base.Host)
	if err != nil {
		return err
	}
	defer proxy.close()
	u, _ := url.Parse(dbURL)
	u.Host = proxy.addr()
	s, err := startService(ctx, u.String(), o, quietWorkers...)
	if err != nil {
		return err
	}
	defer s.stop()
	m, err := createMerchant(o, dbURL, "Bench Co")
	if err != nil {
		return err
	}
	if err := s.fund(m.Secret, "NGN"); err != nil {
		return err
	}
	bank, err := s.bankCode(m.Secret)
	if err != nil {
		return err
	}
	ben := map[string]any{"email": "ada@example.com", "bank": bank, "account_name": "Ada Obi", "account_number": "0123456789"}
	var refs []string
	withdraw := func(prefix string, idem bool) func(int) error {
		return func(i int) error {
			body := map[string]any{"beneficiary": ben, "amount": 100, "currency": "NGN", "reference": fmt.Sprintf("%s-%s-%d", prefix, runID, i)}
			var env struct {
				Data struct {
					Reference string `json:"reference"`
				} `json:"data"`
			}
			var err error
			if idem {
				_, err = s.callWith("POST", "/transactions/withdraw", m.Secret, body, &env, "Idempotency-Key", fmt.Sprintf("%s-%s-%d", prefix, runID, i))
			} else {
				_, err = s.call("POST", "/transactions/withdraw", m.Secret, body, &env)
			}
			refs = append(refs, env.Data.Reference)
			return err
		}
	}
	// gqlWithdraw is the http suite's GraphQL withdrawal: one query text,
	// the input as a variable, with idem an idempotencyKey in it.
	gqlWithdraw := func(prefix string, idem bool) func(int) error {
		return func(i int) error {
			ref := fmt.Sprintf("%s-%s-%d", prefix, runID, i)
			key := ""
			if idem {
				key = ref
			}
			var out struct {
				Errors []any `json:"errors"`
			}
			if _, err := s.call("POST", "/graphql", m.Secret, json.RawMessage(gqlWithdrawBody(bank, ref, key)), &out); err != nil {
				return err
			}
			if len(out.Errors) > 0 {
				return fmt.Errorf("GraphQL errors: %v", out.Errors)
			}
			return nil
		}
	}
	ops := []rtOp{
		{"POST /transactions/withdraw", withdraw("rt-idem", true)},
		{"POST /transactions/withdraw (no Idempotency-Key)", withdraw("rt-plain", false)},
		{"GET /transactions/{ref}", func(i int) error {
			_, err := s.call("GET", "/transactions/"+refs[i%len(refs)], m.Secret, nil, nil)
			return err
		}},
		{"GET /transactions/{merchant reference}", func(i int) error {
			_, err := s.call("GET", fmt.Sprintf("/transactions/rt-idem-%s-%d", runID, i%n), m.Secret, nil, nil)
			return err
		}},
		{"POST /rates/create", func(i int) error {
			_, err := s.callWith("POST", "/rates/create", m.Secret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 10, "transaction_type": "swap"},
				nil, "Idempotency-Key", fmt.Sprintf("rt-rate-%s-%d", runID, i))
			return err
		}},
		{"GraphQL mutation withdraw (idempotencyKey)", gqlWithdraw("rt-gql", true)},
		{"GraphQL mutation withdraw (no key)", gqlWithdraw("rt-gql-plain", false)},
	}
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, op := range ops {
		// A few unlabelled first: connections and caches warm.
		for i := 0; i < 5; i++ {
			if err := op.run(n + 100 + i); err != nil {
				return fmt.Errorf("%s: %w", op.label, err)
			}
		}
		// What the operations before woke is done before the count starts.
		if err := fannedOut(ctx, db, 2*time.Minute); err != nil {
			return err
		}
		proxy.setLabel(op.label)
		for i := 0; i < n; i++ {
			if err := op.run(i); err != nil {
				proxy.setLabel("")
				return fmt.Errorf("%s: %w", op.label, err)
			}
		}
		// The background work the last ones woke is theirs.
		if err := fannedOut(ctx, db, 2*time.Minute); err != nil {
			proxy.setLabel("")
			return err
		}
		proxy.setLabel("")
		fmt.Printf("%-50s %5.1f round trips\n", op.label, float64(proxy.roundTrips(op.label))/n)
	}

	if err := fill(ctx, db); err != nil {
		return fmt.Errorf("filling tables: %w", err)
	}
	fmt.Printf("\nEXPLAIN of every statement above, on tables filled to %d rows of %d other merchants and analysed:\n", fillRows, fillMerchants)
	for _, op := range ops {
		fmt.Printf("\n-- %s\n", op.label)
		for _, st := range proxy.statements(op.label) {
			fmt.Printf("\n%s   [x%.1f per operation]\n", oneLine(st.query), float64(st.count)/n)
			if plan := explain(ctx, db, st); plan != "" {
				fmt.Println(indent(plan))
			}
		}
	}
	return nil
}

// callWith is call with extra header name, value pairs.
func (s *service) callWith(method, path, key string, body, out any, hdr ...string) (int, error) {
	saved := s.extra
	s.extra = hdr
	defer func() { s.extra = saved }()
	return s.call(method, path, key, body, out)
}

const (
	fillRows      = 200_000
	fillMerchants = 200
)

// fill copies a row of each hot table fillRows times for other merchants,
// then analyses, so that EXPLAIN shows the plans a busy database gets.
func fill(ctx context.Context, db *sql.DB) error {
	tables := []struct{ table, over string }{
		{"transactions", `'id', 'fill-'||g, 'reference', 'FILL-'||g, 'merchant_id', 'fill-m-'||(g%%%[1]d),
			'merchant_reference', 'fill-'||g, 'merchant_reference_key', 'fill-'||g, 'next_run_at', null, 'prepay_id', null`},
		{"events", `'id', nextval(pg_get_serial_sequence('events','id')), 'event_id', 'evt_fill_'||g, 'merchant_id', 'fill-m-'||(g%%%[1]d), 'fanned_out', true`},
		{"ledger_entries", `'id', nextval(pg_get_serial_sequence('ledger_entries','id')), 'posting_id', 'fill-'||g, 'account_id', 'fill-m-'||(g%%%[1]d)||':test:NGN:main'`},
		{"idempotency_records", `'id', nextval(pg_get_serial_sequence('idempotency_records','id')), 'key', 'fill-'||g, 'merchant_id', 'fill-m-'||(g%%%[1]d)`},
		{"quotes", `'id', 'fill-'||g, 'merchant_id', 'fill-m-'||(g%%%[1]d)`},
		{"balance_slots", `'id', 'fill-m-'||(g%%%[1]d)||'-'||g||':test:NGN:main#1', 'account_id', 'fill-m-'||(g%%%[1]d)||'-'||g||':test:NGN:main'`},
		{"merchants", `'id', 'fill-m-'||g, 'name', 'Fill '||g, 'email', 'fill'||g||'@example.com', '_', %[1]d`},
		{"api_keys", `'id', 'fill-k-'||g, 'hash', md5(g::text)||md5((g+%[1]d)::text), 'merchant_id', 'fill-m-'||(g%%%[1]d)`},
	}
	for _, t := range tables {
		over := fmt.Sprintf(t.over, fillMerchants)
		q := fmt.Sprintf(`INSERT INTO %[1]s SELECT r.* FROM (SELECT * FROM %[1]s LIMIT 1) t, generate_series(1, %[3]d) g,
			LATERAL jsonb_populate_record(NULL::%[1]s, to_jsonb(t) || jsonb_build_object(%[2]s)) r`, t.table, over, fillRows)
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", t.table, err)
		}
	}
	_, err := db.ExecContext(ctx, "ANALYZE")
	return err
}

func explain(ctx context.Context, db *sql.DB, st *stmtSeen) string {
	verb := strings.ToUpper(strings.Fields(strings.TrimSpace(st.query) + " x")[0])
	switch verb {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "WITH":
	default:
		return ""
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PREPARE loadtest_stmt AS "+st.query); err != nil {
		return "  (prepare: " + err.Error() + ")"
	}
	defer conn.ExecContext(ctx, "DEALLOCATE loadtest_stmt") //nolint:errcheck
	args := make([]string, len(st.params))
	for i, p := range st.params {
		if p == nil {
			args[i] = "NULL"
		} else {
			args[i] = "'" + strings.ReplaceAll(*p, "'", "''") + "'"
		}
	}
	q := "EXPLAIN EXECUTE loadtest_stmt"
	if len(args) > 0 {
		q += "(" + strings.Join(args, ", ") + ")"
	}
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return "  (explain: " + err.Error() + ")"
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if rows.Scan(&l) == nil {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func oneLine(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 400 {
		q = q[:400] + " ..."
	}
	return q
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
