package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/ent/predicate"
	"merchantpay/ent/transaction"
	"merchantpay/internal/jobs"
	"merchantpay/internal/ledger"
	"merchantpay/internal/merchants"
	"merchantpay/internal/rails"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/internal/withdrawals"
	"merchantpay/present/txview"
	"merchantpay/server/servertest"
)

// The HTTP tests of withdrawals (POST /transactions/withdraw, paid out by the
// sandbox rails): every scenario runs on both databases and ends with the
// ledger's invariants.

const wdPath = "/transactions/withdraw"

// wdPoll makes the payout worker look for due payouts every 20 ms of real
// time; the fake clock decides what is due.
var wdPoll = servertest.With("JOBS_POLL_INTERVAL", "20ms")

var wdRefRE = regexp.MustCompile(`^WTH-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

var wdTimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// wdDirectTypes are the spec's Transaction fields with their JSON types for a
// direct withdrawal.
var wdDirectTypes = map[string]string{
	"reference": "string", "merchant_reference": "string", "type": "string", "purpose": "string",
	"status": "string", "from_amount": "number", "amount": "number", "amount_charged": "number",
	"amount_settled": "number", "currency": "string", "from_currency": "string", "to_amount": "null",
	"to_currency": "null", "trx_rate": "null", "rateId": "null", "from": "string", "to": "string",
	"channel": "string", "narration": "string", "beneficiary": "string", "fee_bearer": "string", "fee": "number",
	"destination": "string", "payment_slug": "string", "from_merchant": "string", "to_merchant": "null",
	"settled_at": "string", "settlement_time": "null", "settlement_date": "null",
	"reject_reason": "null", "trace_id": "null", "payment_proof": "null", "created_at": "string", "updated_at": "string",
}

// wdCrossTypes differ from the direct ones where the quote fills them in.
var wdCrossTypes = func() map[string]string {
	m := map[string]string{}
	for k, v := range wdDirectTypes {
		m[k] = v
	}
	m["to_amount"], m["to_currency"], m["trx_rate"], m["rateId"] = "number", "string", "number", "string"
	return m
}()

func wdEach(t *testing.T, fn func(t *testing.T, e *servertest.Env)) {
	t.Helper()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		fn(t, e)
		wdLedger(t, e)
	}, wdPoll)
}

func wdLedger(t *testing.T, e *servertest.Env) {
	t.Helper()
	if err := ledger.Check(context.Background(), e.App.DB); err != nil {
		t.Fatalf("ledger invariants: %v", err)
	}
}

// wdBanks are real codes read from GET /misc/banks.
type wdBanks struct {
	ng, gh, ghBranch, ghOther, ghOtherBranch string
}

func wdBankCodes(t *testing.T, e *servertest.Env, key string) wdBanks {
	t.Helper()
	var b wdBanks
	for _, x := range e.REST("GET", "/misc/banks?country=NG", key, nil).Expect(200).List() {
		if m := x.(map[string]any); m["name"] == "Access Bank" {
			b.ng = m["code"].(string)
		}
	}
	for _, x := range e.REST("GET", "/misc/banks?country=GH", key, nil).Expect(200).List() {
		m := x.(map[string]any)
		brs := m["branches"].([]any)
		if len(brs) == 0 {
			continue
		}
		code, branch := m["code"].(string), brs[0].(map[string]any)["branch_code"].(string)
		switch {
		case b.gh == "":
			b.gh, b.ghBranch = code, branch
		case b.ghOther == "":
			b.ghOther, b.ghOtherBranch = code, branch
		}
	}
	if b.ng != "044" || b.gh == "" || b.ghOther == "" {
		t.Fatalf("bank codes: %+v", b)
	}
	return b
}

func ngBen(bank string) map[string]any {
	return map[string]any{"email": "ada.obi@example.com", "phone": "+2348031234567", "bank": bank,
		"account_name": "Ada Obi", "account_number": "0123456789"}
}

func ghBen(bank, branch string) map[string]any {
	return map[string]any{"email": "kofi.mensah@example.com", "phone": "+233241234567", "country": "GH", "bank": bank,
		"branch": branch, "account_name": "Kofi Mensah", "account_number": "1234567890123", "account_type": "individual"}
}

func wdFund(e *servertest.Env, key, cur string, amount any) {
	e.T.Helper()
	e.REST("POST", "/sandbox/balances/fund", key, map[string]any{"currency": cur, "amount": amount}).Expect(200)
}

func wdPost(e *servertest.Env, key string, body any, headers ...string) *servertest.Resp {
	e.T.Helper()
	return e.REST("POST", wdPath, key, body, headers...)
}

func wdDec(t *testing.T, v any) decimal.Decimal {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%#v is not a JSON number", v)
	}
	return decimal.RequireFromString(n.String())
}

// wdAvailable is the merchant's available balance in cur.
func wdAvailable(t *testing.T, e *servertest.Env, key, cur string) decimal.Decimal {
	t.Helper()
	for _, x := range e.REST("GET", "/balances", key, nil).Expect(200).List() {
		if b := x.(map[string]any); b["currency"] == cur {
			return wdDec(t, b["available"])
		}
	}
	t.Fatalf("no %s balance", cur)
	return decimal.Decimal{}
}

func wdWantAvailable(t *testing.T, e *servertest.Env, key, cur, want string) {
	t.Helper()
	if got := wdAvailable(t, e, key, cur); !got.Equal(decimal.RequireFromString(want)) {
		t.Errorf("%s available %s, want %s", cur, got, want)
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// wdTypes checks that d has exactly the fields of want with their types.
func wdTypes(t *testing.T, d map[string]any, want map[string]string) {
	t.Helper()
	for k, typ := range want {
		v, ok := d[k]
		if !ok {
			t.Errorf("field %s missing", k)
			continue
		}
		if got := jsonType(v); got != typ {
			t.Errorf("field %s: %s (%v), want %s", k, got, v, typ)
		}
	}
	for k := range d {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected field %s", k)
		}
	}
	for _, k := range []string{"created_at", "updated_at", "settled_at", "settlement_date"} {
		if s, ok := d[k].(string); ok && !wdTimeRE.MatchString(s) {
			t.Errorf("%s %q is not a UTC timestamp with milliseconds", k, s)
		}
	}
}

// wdWant checks string and number fields of d (numbers compared exactly).
func wdWant(t *testing.T, d map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		switch w := w.(type) {
		case decimal.Decimal:
			if n, ok := d[k].(json.Number); !ok || !decimal.RequireFromString(n.String()).Equal(w) {
				t.Errorf("%s = %v, want %s", k, d[k], w)
			}
		default:
			if d[k] != w {
				t.Errorf("%s = %#v, want %#v", k, d[k], w)
			}
		}
	}
}

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// wdRow reads a withdrawal's row.
func wdRow(t *testing.T, e *servertest.Env, ref string) *ent.Transaction {
	t.Helper()
	ctx := tenant.System(context.Background())
	row, err := e.App.DB.Reader().Transaction.Query().Where(transaction.Reference(ref)).Only(ctx)
	if err != nil {
		t.Fatalf("read %s: %v", ref, err)
	}
	return row
}

// wdEvents lists the types of the outbox's events about ref, in order.
func wdEvents(t *testing.T, e *servertest.Env, ref string) []string {
	t.Helper()
	ctx := tenant.System(context.Background())
	evs, err := e.App.DB.Reader().Event.Query().Where(event.TransactionRef(ref)).Order(ent.Asc(event.FieldID)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// wdSettle waits until the worker has handed every ref to the rails, moves
// the clock past SANDBOX_PAYOUT_DELAY (3s in tests) and waits until none is
// pending.
func wdSettle(t *testing.T, e *servertest.Env, refs ...string) {
	t.Helper()
	wdWaitSubmitted(t, e, refs...)
	e.Clock.Advance(3 * time.Second)
	servertest.Eventually(t, 30*time.Second, "the payouts to settle", func() bool {
		return wdRows(t, e, refs, transaction.Status("pending")) == 0
	})
}

// wdWaitSubmitted waits until the worker has handed every ref to the rails.
func wdWaitSubmitted(t *testing.T, e *servertest.Env, refs ...string) {
	t.Helper()
	servertest.Eventually(t, 30*time.Second, "the payouts to be submitted", func() bool {
		return wdRows(t, e, refs, transaction.SubmittedAtIsNil()) == 0
	})
}

// wdRows counts the rows of refs that match p.
func wdRows(t *testing.T, e *servertest.Env, refs []string, p predicate.Transaction) int {
	t.Helper()
	ctx := tenant.System(context.Background())
	n, err := e.App.DB.Reader().Transaction.Query().Where(transaction.ReferenceIn(refs...), p).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// wdCount is the number of the merchant's withdrawals (with status, if given).
func wdCount(t *testing.T, e *servertest.Env, key, status string) int {
	t.Helper()
	n, cursor := 0, ""
	for {
		q := "/transactions?type=WITHDRAWAL&limit=100"
		if status != "" {
			q += "&status=" + status
		}
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		r := e.REST("GET", q, key, nil).Expect(200)
		n += len(r.List())
		meta := r.JSON["meta"].(map[string]any)
		if meta["has_more"] != true {
			return n
		}
		cursor = meta["next_cursor"].(string)
	}
}

func TestWithdrawDirectNigeria(t *testing.T) {
	wdEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		b := wdBankCodes(t, e, m.TestSecret)
		wdFund(e, m.TestSecret, "NGN", 10000)
		now := e.Clock.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		ben := ngBen(b.ng)
		r := wdPost(e, m.TestSecret, map[string]any{"beneficiary": ben, "amount": 1000, "currency": "NGN",
			"narration": "Refund for order 1", "reference": "Order-1"}).Expect(200)
		if r.JSON["status"] != true || r.JSON["statusCode"] != json.Number("200") ||
			!strings.Contains(strings.ToLower(r.JSON["message"].(string)), "completed") {
			t.Errorf("envelope: %s", r.Body)
		}
		got := r.Data()
		wdTypes(t, got, wdDirectTypes)
		ref := got["reference"].(string)
		if !wdRefRE.MatchString(ref) {
			t.Errorf("reference %q", ref)
		}
		wdWant(t, got, map[string]any{
			"merchant_reference": "Order-1", "type": "WITHDRAWAL", "purpose": "WITHDRAWAL", "status": "pending",
			"from_amount": d("1000"), "amount": d("1000"), "amount_charged": d("1010.75"), "amount_settled": d("1000"),
			"currency": "NGN", "from_currency": "NGN", "from": "SELF", "to": "OTHER", "channel": "API",
			"narration": "Refund for order 1", "fee_bearer": "merchant", "fee": d("10.75"),
			"destination": "main_balance", "payment_slug": "instant-bank-payout", "from_merchant": "Ada Stores",
			"settled_at": now, "created_at": now, "updated_at": now,
		})
		var sent map[string]any
		if err := json.Unmarshal([]byte(got["beneficiary"].(string)), &sent); err != nil {
			t.Fatalf("beneficiary is not a JSON string of an object: %v", err)
		}
		if fmt.Sprint(sent) != fmt.Sprint(ben) {
			t.Errorf("beneficiary %v, want %v", sent, ben)
		}
		// Exact numbers, never through float64.
		if !strings.Contains(string(r.Body), `"amount_charged":1010.75,`) {
			t.Errorf("amount_charged is not the number 1010.75: %s", r.Body)
		}
		wdWantAvailable(t, e, m.TestSecret, "NGN", "8989.25")
		if evs := wdEvents(t, e, ref); !slices.Equal(evs, []string{"withdrawal.pending"}) {
			t.Errorf("events %v", evs)
		}

		// The look-up by either reference (the merchant's in any case)
		// shows the same Transaction.
		for _, key := range []string{ref, "Order-1", "order-1", "ORDER-1"} {
			g := e.REST("GET", "/transactions/"+key, m.TestSecret, nil).Expect(200).Data()
			if fmt.Sprint(g) != fmt.Sprint(got) {
				t.Errorf("GET /transactions/%s = %v, want %v", key, g, got)
			}
		}
		// The event carries the Transaction as the look-up shows it.
		ctx := tenant.System(context.Background())
		ev, err := e.App.DB.Reader().Event.Query().Where(event.TransactionRef(ref)).Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(txview.View(wdRow(t, e, ref)))
		if string(ev.Payload) != string(want) {
			t.Errorf("event payload %s, want %s", ev.Payload, want)
		}
		// Another merchant and the live mode see nothing.
		e.REST("GET", "/transactions/"+ref, m.LiveSecret, nil).Expect(404)
		e.REST("GET", "/transactions/"+ref, e.Merchant("Other Co").TestSecret, nil).Expect(404)
	})
}

func TestWithdrawFeeTable(t *testing.T) {
	wdEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Fee Co")
		b := wdBankCodes(t, e, m.TestSecret)
		wdFund(e, m.TestSecret, "NGN", 1000000)
		wdFund(e, m.TestSecret, "GHS", 100000)
		tests := []struct {
			cur, amount, bearer          string
			fee, charged, settled, spent string
		}{
			// NIP bands: up to 5,000; up to 50,000; above.
			{"NGN", "1000", "merchant", "10.75", "1010.75", "1000", "1010.75"},
			{"NGN", "5000", "merchant", "10.75", "5010.75", "5000", "5010.75"},
			{"NGN", "5000.01", "", "26.88", "5026.89", "5000.01", "5026.89"},
			{"NGN", "10000", "beneficiary", "26.88", "10000", "9973.12", "10000"},
			{"NGN", "60000", "beneficiary", "53.75", "60000", "59946.25", "60000"},
			{"NGN", "60000", "merchant", "53.75", "60053.75", "60000", "60053.75"},
			{"NGN", "10.76", "beneficiary", "10.75", "10.76", "0.01", "10.76"},
			// Ghana: 1%, rounded up to the pesewa, at most 10 GHS.
			{"GHS", "250", "merchant", "2.5", "252.5", "250", "252.5"},
			{"GHS", "0.5", "merchant", "0.01", "0.51", "0.5", "0.51"},
			{"GHS", "2000", "beneficiary", "10", "2000", "1990", "2000"},
			{"GHS", "999.99", "beneficiary", "10", "999.99", "989.99", "999.99"},
		}
		for i, tc := range tests {
			before := wdAvailable(t, e, m.TestSecret, tc.cur)
			body := map[string]any{"amount": json.Number(tc.amount), "currency": tc.cur}
			if tc.cur == "NGN" {
				body["beneficiary"] = ngBen(b.ng)
			} else {
				body["beneficiary"] = ghBen(b.gh, b.ghBranch)
			}
			bearer := tc.bearer
			if bearer != "" {
				body["fee_bearer"] = bearer
			} else {
				bearer = "merchant"
			}
			got := wdPost(e, m.TestSecret, body).Expect(200).Data()
			wdWant(t, got, map[string]any{"amount": d(tc.amount), "from_amount": d(tc.amount), "fee": d(tc.fee),
				"amount_charged": d(tc.charged), "amount_settled": d(tc.settled), "fee_bearer": bearer, "currency": tc.cur})
			if spent := before.Sub(wdAvailable(t, e, m.TestSecret, tc.cur)); !spent.Equal(d(tc.spent)) {
				t.Errorf("case %d: balance fell by %s, want %s", i, spent, tc.spent)
			}
		}
	})
}

func TestWithdrawGhana(t *testing.T) {
	wdEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Accra Traders")
		b := wdBankCodes(t, e, m.TestSecret)
		wdFund(e, m.TestSecret, "GHS", 1000)
		ben := ghBen(b.gh, b.ghBranch)
		delete(ben, "country") // optional
		delete(ben, "phone")   // optional
		ben["account_type"] = "corporate"
		got := wdPost(e, m.TestSecret, map[string]any{"beneficiary": ben, "amount": 250, "currency": "GHS"}).Expect(200).Data()
		types := map[string]string{}
		for k, v := range wdDirectTypes {
			types[k] = v
		}
		types["merchant_reference"] = "null"
		wdTypes(t, got, types)
		wdWant(t, got, map[string]any{"currency": "GHS", "from_currency": "GHS", "amount": d("250"),
			"amount_charged": d("252.5"), "fee": d("2.5"), "narration": "", "status": "pending"})
		var sent map[string]any
		if err := json.Unmarshal([]byte(got["beneficiary"].(string)), &sent); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(sent) != fmt.Sprint(ben) {
			t.Errorf("beneficiary %v, want %v", sent, ben)
		}
		wdWantAvailable(t, e, m.TestSecret, "GHS", "747.5")
		wdSettle(t, e, got["reference"].(string))
		g := e.REST("GET", "/transactions/"+got["reference"].(string), m.TestSecret, nil).Expect(200).Data()
		if g["status"] != "success" || jsonType(g["settlement_date"]) != "string" {
			t.Errorf("after settlement: %v", g)
		}
	})
}

// wdQuote creates a withdrawal quote.
func wdQuote(t *testing.T, e *servertest.Env, key string, body map[string]any) map[string]any {
	t.Helper()
	if _, ok := body["transaction_type"]; !ok {
		body["transaction_type"] = "withdrawal"
	}
	return e.REST("POST", "/rates/create", key, body).Expect(200).Data()
}

func TestWithdrawCross(t *testing.T) {
	wdEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Cross Co")
		b := wdBankCodes(t, e, m.TestSecret)
		wdFund(e, m.TestSecret, "USDT", 25)
		wdFund(e, m.TestSecret, "USD", 500)
		wdFund(e, m.TestSecret, "NGN", 1)

		// USDT → NGN to a Nigerian bank; fee_bearer beneficiary changes
		// nothing: the quote's fee is the only fee.
		q := wdQuote(t, e, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 10})
		r := wdPost(e, m.TestSecret, map[string]any{"beneficiary": ngBen(b.ng), "rate_reference": q["reference"],
			"fee_bearer": "beneficiary", "reference": "cross-1"}).Expect(200)
		got := r.Data()
		wdTypes(t, got, wdCrossTypes)
		to, fee := wdDec(t, q["to_amount"]), wdDec(t, q["fee"])
		wdWant(t, got, map[string]any{
			"status": "pending", "type": "WITHDRAWAL", "from_amount": d("10"), "from_currency": "USDT",
			"amount": to, "currency": "NGN", "to_amount": to, "to_currency": "NGN", "fee": fee,
			"amount_charged": to.Add(fee), "amount_settled": to, "trx_rate": wdDec(t, q["rate"]),
			"rateId": q["reference"], "fee_bearer": "beneficiary",
		})
		// At the static mid: 10 × 1600 × 0.995 = 15920, less the 100 NGN fee.
		if !to.Equal(d("15820")) || !fee.Equal(d("100")) {
			t.Errorf("quote: to_amount %s, fee %s", to, fee)
		}
		wdWantAvailable(t, e, m.TestSecret, "USDT", "15")
		wdWantAvailable(t, e, m.TestSecret, "NGN", "1")
		// The quote is used up.
		if r := wdPost(e, m.TestSecret, map[string]any{"beneficiary": ngBen(b.ng), "rate_reference": q["reference"]}); r.Status != 409 || r.Code() != "RATE_USED" {
			t.Errorf("second use: %d %s", r.Status, r.Body)
		}
		if r := e.REST("POST", "/rates/refresh", m.TestSecret, map[string]any{"reference": q["reference"]}); r.Code() != "RATE_USED" {
			t.Errorf("refresh of a used quote: %s", r.Body)
		}

		// USD → GHS to a Ghanaian bank, quoted by to_amount.
		q2 := wdQuote(t, e, m.TestSecret, map[string]any{"from_currency": "USD", "to_currency": "GHS", "to_amount": 1000})
		got2 := wdPost(e, m.TestSecret, map[string]any{"beneficiary": ghBen(b.gh, b.ghBranch), "rate_reference": q2["reference"]}).Expect(200).Data()
		from2 := wdDec(t, q2["from_amount"])
		wdWant(t, got2, map[string]any{"from_amount": from2, "from_currency": "USD", "amount": d("1000"),
			"currency": "GHS", "to_currency": "GHS", "fee": wdDec(t, q2["fee"]), "fee_bearer": "merchant",
			"amount_charged": d("1000").Add(wdDec(t, q2["fee"]))})
		wdWantAvailable(t, e, m.TestSecret, "USD", d("500").Sub(from2).String())

		wdSettle(t, e, got["reference"].(string), got2["reference"].(string))
		for _, ref := range []string{got["reference"].(string), got2["reference"].(string)} {
			if evs := wdEvents(t, e, ref); !slices.Equal(evs, []string{"withdrawal.pending", "withdrawal.success"}) {
				t.Errorf("%s events %v", ref, evs)
			}
		}
		wdWantAvailable(t, e, m.TestSecret, "USDT", "15")
	})
}

func TestWithdrawCrossErrors(t *testing.T) {
	wdEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Cross Errors")
		b := wdBankCodes(t, e, m.TestSecret)
		wdFund(e, m.TestSecret, "USDT", 5)
		wdFund(e, m.TestSecret, "NGN", 100000)
		post := func(q map[string]any, ben map[string]any, extra ...any) *servertest.Resp {
			body := map[string]any{"beneficiary": ben, "rate_reference": q["reference"]}
			for i := 0; i+1 < len(extra); i += 2 {
				body[extra[i].(string)] = extra[i+1]
			}
			return wdPost(e, m.TestSecret, body)
		}
		expect := func(r *servertest.Resp, status int, code string, fields ...string) {
			t.Helper()
			if r.Status != status || r.Code() != code || (fields != nil && !slices.Equal(r.Fields(), fields)) {
				t.Errorf("got %d %s %v, want %d %s %v: %s", r.Status, r.Code(), r.Fields(), status, code, fields, r.Body)
			}
		}
		ngQuote := func(amount any) map[string]any {
			return wdQuote(t, e, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": amount})
		}

		// Amount or currency beside rate_reference must be the quote's:
		// judged without the quote when no quote could match, else against it.
		q := ngQuote(1)
		expect(post(q, ngBen(b.ng), "amount", 0, "currency", "EUR"), 400, "VALIDATION_ERROR", "currency", "amount")
		expect(post(q, ngBen(b.ng), "amount", 100, "currency", "NGN"), 400, "VALIDATION_ERROR", "amount")
		expect(post(q, ngBen(b.ng), "amount", q["to_amount"], "currency", "GHS"), 400, "VALIDATION_ERROR", "currency")
		expect(post(map[string]any{"reference": ""}, ngBen(b.ng)), 400, "VALIDATION_ERROR", "rate_reference")
		// Unknown, of another merchant, of another type.
		expect(post(map[string]any{"reference": "4f1c2d6e-0000-4000-8000-000000000000"}, ngBen(b.ng)), 404, "NOT_FOUND")
		other := e.Merchant("Other Co")
		expect(post(wdQuote(t, e, other.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 1}), ngBen(b.ng)), 404, "NOT_FOUND")
		swapQ := wdQuote(t, e, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 1, "transaction_type": "swap"})
		expect(post(swapQ, ngBen(b.ng)), 422, "RATE_TYPE_MISMATCH")
		// A quote paying out an asset is no payout to a bank.
		buyQ := wdQuote(t, e, m.TestSecret, map[string]any{"from_currency": "NGN", "to_currency": "USDT", "to_amount": 1})
		expect(post(buyQ, ngBen(b.ng)), 400, "VALIDATION_ERROR", "rate_reference")
		// The beneficiary's shape follows the quote's to_currency: an NGN
		// quote needs a 10-digit account at a Nigerian bank.
		expect(post(q, ghBen(b.gh, b.ghBranch)), 400, "VALIDATION_ERROR", "beneficiary.account_number", "beneficiary.bank")
		gh := ghBen(b.gh, b.ghBranch)
		gh["account_number"] = "0123456789"
		expect(post(q, gh), 422, "UNKNOWN_BANK", "beneficiary.bank")
		// A code in neither list is unknown whatever the quote pays out: it
		// is named with the other bad fields, before the quote is read.
		bad := ngBen("999")
		bad["email"] = "not-an-email"
		expect(post(q, bad), 400, "VALIDATION_ERROR", "beneficiary.email", "beneficiary.bank")
		expect(post(q, ngBen("999")), 422, "UNKNOWN_BANK", "beneficiary.bank")
		ghQ := wdQuote(t, e, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "GHS", "from_amount": 1})
		expect(post(ghQ, ngBen(b.ng)), 400, "VALIDATION_ERROR", "beneficiary.branch", "beneficiary.account_type", "beneficiary.bank")
		expect(post(ghQ, ghBen(b.gh, b.ghOtherBranch)), 422, "UNKNOWN_BRANCH", "beneficiary.branch")
		// More than the balance: nothing written.
		expect(post(ngQuote(6), ngBen(b.ng)), 422, "INSUFFICIENT_BALANCE")
		// Every failure left the quotes usable.
		e.REST("POST", "/rates/refresh", m.TestSecret, map[string]any{"reference": ghQ["reference"]}).Expect(200)
		post(q, ngBen(b.ng)).Expect(200)
		// Expired quotes must be refreshed first.
		late := ngQuote(1)
		e.Clock.Advance(91 * time.Second)
		expect(post(late, ngBen(b.ng)), 409, "RATE_EXPIRED")
		e.REST("POST", "/rates/refresh", m.TestSecret, map[string]any{"reference": late["reference"]}).Expect(200)
		post(late, ngBen(b.ng)).Expect(200)
		// The quote's own amount and currency beside it are accepted.
		same := ngQuote(1)
		if got := post(same, ngBen(b.ng), "amount", same["to_amount"], "currency", "NGN").Expect(200).Data(); fmt.Sprint(got["amount"]) != fmt.Sprint(same["to_amount"]) || got["rateId"] != same["reference"] {
			t.Errorf("with the quote's amount and currency: %v", got)
		}
		if n := wdCount(t, e, m.TestSecret, ""); n != 3 {
			t.Errorf("%d withdrawals, want 3", n)
		}
		wdWantAvailable(t, e, m.TestSecret, "USDT", "2")
		wdWantAvailable(t, e, m.TestSecret, "NGN", "100000")
	})
}

func TestWithdrawValidation(t *testing.T) {
	wdEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Strict Co")
		b := wdBankCodes(t, e, m.TestSecret)
		wdFund(e, m.TestSecret, "NGN", 100000)
		wdFund(e, m.TestSecret, "GHS", 100000)
		ng := func(change func(body, ben map[string]any)) map[string]any {
			ben := ngBen(b.ng)
			body := map[string]any{"beneficiary": ben, "amount": 100, "currency": "NGN"}
			change(body, ben)
			return body
		}
		gh := func(change func(body, ben map[string]any)) map[string]any {
			ben := ghBen(b.gh, b.ghBranch)
			body := map[string]any{"beneficiary": ben, "amount": 100, "currency": "GHS"}
			change(body, ben)
			return body
		}
		tests := []struct {
			name   string
			body   any
			status int
			code   string
			fields []string
		}{
			{"not JSON", "{", 400, "BAD_REQUEST", nil},
			{"not an object", "[]", 400, "BAD_REQUEST", nil},
			{"empty", map[string]any{}, 400, "VALIDATION_ERROR", []string{"currency", "amount", "beneficiary"}},
			{"beneficiary not an object", ng(func(b, _ map[string]any) { b["beneficiary"] = "Ada" }), 400, "VALIDATION_ERROR", []string{"beneficiary"}},
			{"empty beneficiary", ng(func(b, _ map[string]any) { b["beneficiary"] = map[string]any{} }), 400, "VALIDATION_ERROR",
				[]string{"beneficiary.email", "beneficiary.bank", "beneficiary.account_name", "beneficiary.account_number"}},
			{"currency USD", ng(func(b, _ map[string]any) { b["currency"] = "USD" }), 400, "VALIDATION_ERROR", []string{"currency"}},
			{"currency lower case", ng(func(b, _ map[string]any) { b["currency"] = "ngn" }), 400, "VALIDATION_ERROR", []string{"currency"}},
			{"amount string", ng(func(b, _ map[string]any) { b["amount"] = "100" }), 400, "VALIDATION_ERROR", []string{"amount"}},
			{"amount zero", ng(func(b, _ map[string]any) { b["amount"] = 0 }), 400, "VALIDATION_ERROR", []string{"amount"}},
			{"amount negative", ng(func(b, _ map[string]any) { b["amount"] = -5 }), 400, "VALIDATION_ERROR", []string{"amount"}},
			{"amount decimals", ng(func(b, _ map[string]any) { b["amount"] = json.Number("1.001") }), 400, "VALIDATION_ERROR", []string{"amount"}},
			{"amount too large", ng(func(b, _ map[string]any) { b["amount"] = json.Number("10000000000.01") }), 400, "VALIDATION_ERROR", []string{"amount"}},
			{"no amount", ng(func(b, _ map[string]any) { delete(b, "amount") }), 400, "VALIDATION_ERROR", []string{"amount"}},
			{"bad email", ng(func(_, x map[string]any) { x["email"] = "ada at example" }), 400, "VALIDATION_ERROR", []string{"beneficiary.email"}},
			{"bad phone", ng(func(_, x map[string]any) { x["phone"] = "call me" }), 400, "VALIDATION_ERROR", []string{"beneficiary.phone"}},
			{"short account", ng(func(_, x map[string]any) { x["account_number"] = "12345" }), 400, "VALIDATION_ERROR", []string{"beneficiary.account_number"}},
			{"11-digit account", ng(func(_, x map[string]any) { x["account_number"] = "01234567890" }), 400, "VALIDATION_ERROR", []string{"beneficiary.account_number"}},
			{"numeric account", ng(func(_, x map[string]any) { x["account_number"] = 123456789 }), 400, "VALIDATION_ERROR", []string{"beneficiary.account_number"}},
			{"empty name", ng(func(_, x map[string]any) { x["account_name"] = " " }), 400, "VALIDATION_ERROR", []string{"beneficiary.account_name"}},
			{"numeric bank", ng(func(_, x map[string]any) { x["bank"] = 44 }), 400, "VALIDATION_ERROR", []string{"beneficiary.bank"}},
			{"fee bearer", ng(func(b, _ map[string]any) { b["fee_bearer"] = "both" }), 400, "VALIDATION_ERROR", []string{"fee_bearer"}},
			{"reference", ng(func(b, _ map[string]any) { b["reference"] = "bad ref!" }), 400, "VALIDATION_ERROR", []string{"reference"}},
			{"narration", ng(func(b, _ map[string]any) { b["narration"] = strings.Repeat("n", 256) }), 400, "VALIDATION_ERROR", []string{"narration"}},
			{"GH without branch and type", gh(func(_, x map[string]any) { delete(x, "branch"); delete(x, "account_type") }), 400, "VALIDATION_ERROR",
				[]string{"beneficiary.branch", "beneficiary.account_type"}},
			{"GH account type", gh(func(_, x map[string]any) { x["account_type"] = "personal" }), 400, "VALIDATION_ERROR", []string{"beneficiary.account_type"}},
			{"GH country", gh(func(_, x map[string]any) { x["country"] = "NG" }), 400, "VALIDATION_ERROR", []string{"beneficiary.country"}},
			{"GH account", gh(func(_, x map[string]any) { x["account_number"] = "12-34" }), 400, "VALIDATION_ERROR", []string{"beneficiary.account_number"}},
			{"everything at once", ng(func(b, x map[string]any) {
				b["amount"], b["fee_bearer"], x["email"], x["account_number"], x["bank"] = 0, "nobody", "x", "1", "999"
			}), 400, "VALIDATION_ERROR", []string{"amount", "fee_bearer", "beneficiary.email", "beneficiary.account_number", "beneficiary.bank"}},
			{"unknown NG bank", ng(func(_, x map[string]any) { x["bank"] = "999" }), 422, "UNKNOWN_BANK", []string{"beneficiary.bank"}},
			{"GH bank for NGN", ng(func(_, x map[string]any) { x["bank"] = b.gh }), 422, "UNKNOWN_BANK", []string{"beneficiary.bank"}},
			{"NG bank for GHS", gh(func(_, x map[string]any) { x["bank"] = b.ng }), 422, "UNKNOWN_BANK", []string{"beneficiary.bank"}},
			{"unknown GH bank", gh(func(_, x map[string]any) { x["bank"] = "GH990100" }), 422, "UNKNOWN_BANK", []string{"beneficiary.bank"}},
			{"branch of another bank", gh(func(_, x map[string]any) { x["branch"] = b.ghOtherBranch }), 422, "UNKNOWN_BRANCH", []string{"beneficiary.branch"}},
			{"unknown branch", gh(func(_, x map[string]any) { x["branch"] = "GH999999" }), 422, "UNKNOWN_BRANCH", []string{"beneficiary.branch"}},
			{"fee eats the amount", ng(func(b, _ map[string]any) { b["amount"], b["fee_bearer"] = 10.75, "beneficiary" }), 422, "AMOUNT_TOO_SMALL", nil},
		}
		for _, tc := range tests {
			r := wdPost(e, m.TestSecret, tc.body)
			if r.Status != tc.status || r.Code() != tc.code {
				t.Errorf("%s: %d %s, want %d %s: %s", tc.name, r.Status, r.Code(), tc.status, tc.code, r.Body)
				continue
			}
			if tc.fields != nil {
				got, want := slices.Sorted(slices.Values(r.Fields())), slices.Sorted(slices.Values(tc.fields))
				if !slices.Equal(got, want) {
					t.Errorf("%s: fields %v, want %v", tc.name, got, want)
				}
			}
			if r.JSON["status"] != false || r.JSON["data"] != nil {
				t.Errorf("%s: envelope %s", tc.name, r.Body)
			}
		}
		if n := wdCount(t, e, m.TestSecret, ""); n != 0 {
			t.Errorf("%d withdrawals written by refused requests", n)
		}
		wdWantAvailable(t, e, m.TestSecret, "NGN", "100000")
		wdWantAvailable(t, e, m.TestSecret, "GHS", "100000")
		// Limits that pass.
		wdPost(e, m.TestSecret, ng(func(b, _ map[string]any) { b["narration"] = strings.Repeat("ñ", 255) })).Expect(200)
		wdPost(e, m.TestSecret, ng(func(b, x map[string]any) { delete(x, "phone"); b["fee_bearer"] = "merchant" })).Expect(200)
	})
}

func TestWithdrawDuplicateReference(t *testing.T) {
	wdEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Dup Co")
		b := wdBankCodes(t, e, m.TestSecret)
		wdFund(e, m.TestSecret, "NGN", 10000)
		body := func(ref string) map[string]any {
			return map[string]any{"beneficiary": ngBen(b.ng), "amount": 100, "currency": "NGN", "reference": ref}
		}
		wdPost(e, m.TestSecret, body("INV-7")).Expect(200)
		for i, r := range []*servertest.Resp{
			wdPost(e, m.TestSecret, body("INV-7")),
			wdPost(e, m.TestSecret, body("inv-7")),
			wdPost(e, m.TestSecret, body("Inv-7"), "Idempotency-Key", "a-fresh-key"),
		} {
			if r.Status != 409 || r.Code() != "DUPLICATE_REFERENCE" || !slices.Equal(r.Fields(), []string{"reference"}) {
				t.Errorf("repeat %d: %d %s", i, r.Status, r.Body)
			}
		}
		// The same reference is free in the live mode and for other merchants.
		wdFund(e, m.LiveSecret, "NGN", 1000)
		wdPost(e, m.LiveSecret, body("inv-7")).Expect(200)
		if n := wdCount(t, e, m.TestSecret, ""); n != 1 {
			t.Errorf("%d withdrawals, want 1", n)
		}
		wdWantAvailable(t, e, m.TestSecret, "NGN", "9889.25")
	})
}

func TestWithdrawInsufficientBalance(t *testing.T) {
	wdEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Short Co")
		b := wdBankCodes(t, e, m.TestSecret)
		wdFund(e, m.TestSecret, "NGN", 110.74)
		body := map[string]any{"beneficiary": ngBen(b.ng), "amount": 100, "currency": "NGN", "reference": "short-1"}
		// 100 + 10.75 fee is one kobo more than the balance.
		r := wdPost(e, m.TestSecret, body)
		if r.Status != 422 || r.Code() != "INSUFFICIENT_BALANCE" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		// Nothing written: no transaction, no event, the balance unchanged.
		if n := wdCount(t, e, m.TestSecret, ""); n != 0 {
			t.Errorf("%d withdrawals", n)
		}
		e.REST("GET", "/transactions/short-1", m.TestSecret, nil).Expect(404)
		ctx := tenant.System(context.Background())
		if n, err := e.App.DB.Reader().Event.Query().Count(ctx); err != nil || n != 0 {
			t.Errorf("%d events, %v", n, err)
		}
		if n, err := e.App.DB.Reader().LedgerEntry.Query().Count(ctx); err != nil || n != 2 {
			t.Errorf("%d ledger entries (want the funding's 2), %v", n, err)
		}
		wdWantAvailable(t, e, m.TestSecret, "NGN", "110.74")
		// With the beneficiary bearing the fee it fits, under the same reference.
		body["fee_bearer"] = "beneficiary"
		wdPost(e, m.TestSecret, body).Expect(200)
		wdWantAvailable(t, e, m.TestSecret, "NGN", "10.74")
		// A currency never held.
		r = wdPost(e, m.TestSecret, map[string]any{"beneficiary": ghBen(b.gh, b.ghBranch), "amount": 1, "currency": "GHS"})
		if r.Code() != "INSUFFICIENT_BALANCE" {
			t.Errorf("GHS: %s", r.Body)
		}
	})
}

func TestWithdrawLifecycle(t *testing.T) {
	wdEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Life Co")
		b := wdBankCodes(t, e, m.TestSecret)
		wdFund(e, m.TestSecret, "NGN", json.Number("5000.37"))
		wdFund(e, m.TestSecret, "USDT", json.Number("12.345678"))

		ok := wdPost(e, m.TestSecret, map[string]any{"beneficiary": ngBen(b.ng), "amount": json.Number("1234.56"),
			"currency": "NGN", "fee_bearer": "beneficiary"}).Expect(200).Data()
		failBen := ngBen(b.ng)
		failBen["account_number"] = "0000000000"
		bad := wdPost(e, m.TestSecret, map[string]any{"beneficiary": failBen, "amount": json.Number("1000.01"),
			"currency": "NGN"}).Expect(200).Data()
		q := wdQuote(t, e, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 10})
		badCross := wdPost(e, m.TestSecret, map[string]any{"beneficiary": failBen, "rate_reference": q["reference"]}).Expect(200).Data()
		wdWantAvailable(t, e, m.TestSecret, "NGN", "2755.05") // 5000.37 − 1234.56 − 1010.76
		wdWantAvailable(t, e, m.TestSecret, "USDT", "2.345678")

		refs := []string{ok["reference"].(string), bad["reference"].(string), badCross["reference"].(string)}
		// Submitted but not yet settled: still pending.
		wdWaitSubmitted(t, e, refs...)
		submitted := *wdRow(t, e, refs[0]).SubmittedAt
		e.Clock.Advance(2 * time.Second)
		// A pass of a worker finds nothing to settle yet.
		probe := e.App.Withdrawals.Payouts(withdrawals.PayoutOptions{WorkerOptions: jobs.WorkerOptions{Owner: "probe"}})
		if _, err := probe.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, ref := range refs {
			if s := wdRow(t, e, ref).Status; s != "pending" {
				t.Fatalf("%s is %s before the payout delay", ref, s)
			}
		}
		wdSettle(t, e, refs...)

		// Success: settlement_date set, the money stays out.
		g := e.REST("GET", "/transactions/"+refs[0], m.TestSecret, nil).Expect(200).Data()
		wdTypes(t, g, map[string]string{
			"reference": "string", "merchant_reference": "null", "type": "string", "purpose": "string",
			"status": "string", "from_amount": "number", "amount": "number", "amount_charged": "number",
			"amount_settled": "number", "currency": "string", "from_currency": "string", "to_amount": "null",
			"to_currency": "null", "trx_rate": "null", "rateId": "null", "from": "string", "to": "string",
			"channel": "string", "narration": "string", "beneficiary": "string", "fee_bearer": "string", "fee": "number",
			"destination": "string", "payment_slug": "string", "from_merchant": "string", "to_merchant": "null",
			"settled_at": "string", "settlement_time": "null", "settlement_date": "string",
			"reject_reason": "null", "trace_id": "null", "payment_proof": "null", "created_at": "string", "updated_at": "string",
		})
		paid := submitted.Add(3 * time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
		wdWant(t, g, map[string]any{"status": "success", "settlement_date": paid, "settled_at": paid,
			"amount_settled": d("1223.81"), "amount_charged": d("1234.56"), "fee": d("10.75")})

		// Failures: reject_reason set, the debit reversed to the minor unit.
		for _, ref := range refs[1:] {
			g := e.REST("GET", "/transactions/"+ref, m.TestSecret, nil).Expect(200).Data()
			if g["status"] != "failed" || jsonType(g["reject_reason"]) != "string" || g["reject_reason"] == "" || g["settlement_date"] != nil {
				t.Errorf("%s: %v", ref, g)
			}
		}
		wdWantAvailable(t, e, m.TestSecret, "NGN", "3765.81") // 5000.37 − 1234.56
		wdWantAvailable(t, e, m.TestSecret, "USDT", "12.345678")
		if evs := wdEvents(t, e, refs[0]); !slices.Equal(evs, []string{"withdrawal.pending", "withdrawal.success"}) {
			t.Errorf("success events %v", evs)
		}
		for _, ref := range refs[1:] {
			if evs := wdEvents(t, e, ref); !slices.Equal(evs, []string{"withdrawal.pending", "withdrawal.failed"}) {
				t.Errorf("failure events %v", evs)
			}
		}
		// The service's accounts: the payout left through the rails, the fee
		// stayed as revenue, nothing is left in flight.
		sums := wdSystemSums(t, e)
		for acct, want := range map[string]int64{"NGN:payouts_in_flight": 0, "NGN:rails_clearing": 122381, "NGN:fees": 1075, "USDT:fx": 0} {
			if sums[acct] != want {
				t.Errorf("%s sums to %d, want %d (all: %v)", acct, sums[acct], want, sums)
			}
		}
		if n := wdCount(t, e, m.TestSecret, "pending"); n != 0 {
			t.Errorf("%d still pending", n)
		}
		// A finish by a worker whose lease is gone changes nothing.
		if done, err := e.App.Withdrawals.Fail(context.Background(), nil, wdRow(t, e, refs[0]), "someone", railsFailed()); done || err != nil {
			t.Errorf("stale finish: %v, %v", done, err)
		}
	})
}

// wdSystemSums sums the test mode's system ledger entries by
// "currency:kind" in minor units.
func wdSystemSums(t *testing.T, e *servertest.Env) map[string]int64 {
	t.Helper()
	ctx := tenant.System(context.Background())
	rows, err := e.App.DB.Reader().LedgerEntry.Query().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		a, err := ledger.ParseAccountID(r.AccountID)
		if err != nil || a.Owner != ledger.SystemOwner || a.Mode != tenant.Test {
			continue
		}
		out[string(a.Currency)+":"+string(a.Kind)] += r.Amount
	}
	return out
}

func TestWithdrawConcurrent(t *testing.T) {
	wdEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Busy Co")
		b := wdBankCodes(t, e, m.TestSecret)
		// Exactly 100 withdrawals of 100 NGN plus the 10.75 fee.
		wdFund(e, m.TestSecret, "NGN", 11075)
		res := wdAtOnce(200, func(i int) *servertest.Resp {
			return wdPost(e, m.TestSecret, map[string]any{"beneficiary": ngBen(b.ng), "amount": 100, "currency": "NGN",
				"reference": fmt.Sprintf("busy-%d", i)})
		})
		count := map[string]int{}
		for _, r := range res {
			count[fmt.Sprint(r.Status, r.Code())]++
		}
		if count["200"] != 100 || count["422INSUFFICIENT_BALANCE"] != 100 {
			t.Fatalf("outcomes %v", count)
		}
		wdWantAvailable(t, e, m.TestSecret, "NGN", "0")
		wdLedger(t, e)
		if got := wdCount(t, e, m.TestSecret, "pending"); got != 100 {
			t.Fatalf("%d pending withdrawals", got)
		}
		// All of them are paid out, each once.
		var refs []string
		ctx := tenant.System(context.Background())
		rows, err := e.App.DB.Reader().Transaction.Query().Where(transaction.Type("WITHDRAWAL")).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			refs = append(refs, r.Reference)
		}
		wdSettle(t, e, refs...)
		if got := wdCount(t, e, m.TestSecret, "success"); got != 100 {
			t.Errorf("%d successful", got)
		}
		if sums := wdSystemSums(t, e); sums["NGN:payouts_in_flight"] != 0 || sums["NGN:fees"] != 107500 || sums["NGN:rails_clearing"] != 1000000 {
			t.Errorf("system accounts %v", sums)
		}
	})
}

func TestWithdrawIdempotencyKeyRace(t *testing.T) {
	wdEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Retry Co")
		b := wdBankCodes(t, e, m.TestSecret)
		wdFund(e, m.TestSecret, "NGN", 1000)
		body, _ := json.Marshal(map[string]any{"beneficiary": ngBen(b.ng), "amount": 100, "currency": "NGN"})
		res := wdAtOnce(20, func(int) *servertest.Resp {
			return wdPost(e, m.TestSecret, body, "Idempotency-Key", "pay-once")
		})
		var first []byte
		for i, r := range res {
			switch {
			case r.Status == 200:
				if first == nil {
					first = r.Body
				} else if string(r.Body) != string(first) {
					t.Errorf("answer %d differs: %s", i, r.Body)
				}
			case r.Status == 409 && r.Code() == "IDEMPOTENCY_KEY_IN_USE":
			default:
				t.Errorf("answer %d: %d %s", i, r.Status, r.Body)
			}
		}
		if first == nil {
			t.Fatal("no request succeeded")
		}
		again := wdPost(e, m.TestSecret, body, "Idempotency-Key", "pay-once").Expect(200)
		if string(again.Body) != string(first) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: %s", again.Body)
		}
		if got := wdCount(t, e, m.TestSecret, ""); got != 1 {
			t.Errorf("%d withdrawals, want 1", got)
		}
		wdWantAvailable(t, e, m.TestSecret, "NGN", "889.25")
	})
}

// TestWithdrawRestart accepts payouts on one instance, stops it before they
// settle, and sees a new instance on the same database carry them through,
// including one whose worker died while holding its lease.
func TestWithdrawRestart(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, dbURL string) {
		// The first instance only works when woken, so it stays quiet once
		// its database is closed.
		a := servertest.New(t, dbURL, servertest.With("JOBS_POLL_INTERVAL", "1h"))
		m := a.Merchant("Restart Co")
		b := wdBankCodes(t, a, m.TestSecret)
		wdFund(a, m.TestSecret, "NGN", 10000)
		failBen := ngBen(b.ng)
		failBen["account_number"] = "0000000000"
		var refs []string
		for i, ben := range []map[string]any{ngBen(b.ng), failBen, ngBen(b.ng)} {
			d := wdPost(a, m.TestSecret, map[string]any{"beneficiary": ben, "amount": 1000, "currency": "NGN",
				"reference": fmt.Sprintf("restart-%d", i)}).Expect(200).Data()
			refs = append(refs, d["reference"].(string))
		}
		wdWaitSubmitted(t, a, refs...)
		// The process dies: no more requests, no database.
		a.Srv.Close()
		a.App.Close()

		// A worker of another instance took the last payout when it fell due
		// and died holding its lease.
		db := testdb.Open(t, dbURL)
		due := a.Clock.Now().Add(3 * time.Second)
		crashed, err := jobs.Claim(context.Background(), db, "crashed", due, time.Minute, 10, transaction.Reference(refs[2]))
		if err != nil || len(crashed) != 1 {
			t.Fatalf("crashed claim: %d, %v", len(crashed), err)
		}

		e := servertest.New(t, dbURL, wdPoll)
		e.Clock.Set(due)
		servertest.Eventually(t, 30*time.Second, "the payouts to settle after the restart", func() bool {
			return wdRow(t, e, refs[0]).Status == "success" && wdRow(t, e, refs[1]).Status == "failed"
		})
		if s := wdRow(t, e, refs[2]).Status; s != "pending" {
			t.Fatalf("the leased payout is %s before its lease expired", s)
		}
		e.Clock.Advance(time.Minute + time.Millisecond)
		servertest.Eventually(t, 30*time.Second, "the leased payout to settle", func() bool {
			return wdRow(t, e, refs[2]).Status == "success"
		})
		for i, want := range []string{"withdrawal.success", "withdrawal.failed", "withdrawal.success"} {
			if evs := wdEvents(t, e, refs[i]); !slices.Equal(evs, []string{"withdrawal.pending", want}) {
				t.Errorf("%s events %v", refs[i], evs)
			}
		}
		wdWantAvailable(t, e, m.TestSecret, "NGN", "7978.5") // 10000 − 2 × 1010.75
		wdLedger(t, e)
	})
}

func railsFailed() rails.PayoutResult {
	return rails.PayoutResult{Status: rails.PayoutFailed, Reason: "refused"}
}

// A keyed withdrawal whose debit is refused must still answer, store and
// replay the refusal, and write nothing. Many keyed withdrawals at once
// against a balance covering half of them: exactly half are accepted, each
// key replays its own answer, and the balance ends at zero.
func TestWithdrawKeyedRefusals(t *testing.T) {
	wdEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Keyed Co")
		b := wdBankCodes(t, e, m.TestSecret)
		wdFund(e, m.TestSecret, "NGN", 110.74)
		body := map[string]any{"beneficiary": ngBen(b.ng), "amount": 100, "currency": "NGN", "reference": "keyed-short"}
		r := wdPost(e, m.TestSecret, body, "Idempotency-Key", "short")
		if r.Status != 422 || r.Code() != "INSUFFICIENT_BALANCE" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		again := wdPost(e, m.TestSecret, body, "Idempotency-Key", "short")
		if again.Status != 422 || string(again.Body) != string(r.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: %d %s (replayed %q)", again.Status, again.Body, again.Header.Get("Idempotent-Replayed"))
		}
		if n := wdCount(t, e, m.TestSecret, ""); n != 0 {
			t.Errorf("%d withdrawals after a refusal", n)
		}
		ctx := tenant.System(context.Background())
		if n, err := e.App.DB.Reader().Event.Query().Count(ctx); err != nil || n != 0 {
			t.Errorf("%d events, %v", n, err)
		}
		wdWantAvailable(t, e, m.TestSecret, "NGN", "110.74")

		wdFund(e, m.TestSecret, "NGN", json.Number("1996.76")) // 2107.50: 19 × 110.75 + 3.25
		res := wdAtOnce(38, func(i int) *servertest.Resp {
			return wdPost(e, m.TestSecret, map[string]any{"beneficiary": ngBen(b.ng), "amount": 100, "currency": "NGN"},
				"Idempotency-Key", fmt.Sprintf("many-%d", i))
		})
		count := map[string]int{}
		for i, r := range res {
			count[fmt.Sprint(r.Status, r.Code())]++
			again := wdPost(e, m.TestSecret, map[string]any{"beneficiary": ngBen(b.ng), "amount": 100, "currency": "NGN"},
				"Idempotency-Key", fmt.Sprintf("many-%d", i))
			if again.Status != r.Status || string(again.Body) != string(r.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("key %d: %d %s, replayed as %d %s", i, r.Status, r.Body, again.Status, again.Body)
			}
		}
		if count["200"] != 19 || count["422INSUFFICIENT_BALANCE"] != 19 {
			t.Fatalf("outcomes %v", count)
		}
		wdWantAvailable(t, e, m.TestSecret, "NGN", "3.25")
		if got := wdCount(t, e, m.TestSecret, ""); got != 19 {
			t.Errorf("%d withdrawals, want 19", got)
		}
		if n, err := e.App.DB.Reader().Event.Query().Count(ctx); err != nil || n < 19 {
			t.Errorf("%d events, %v", n, err)
		}
	})
}

// wdAtOnce makes n calls of call at once and returns their answers in
// order.
func wdAtOnce(n int, call func(i int) *servertest.Resp) []*servertest.Resp {
	res := make([]*servertest.Resp, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = call(i)
		}()
	}
	wg.Wait()
	return res
}

// A keyed POST of a key seen before skips its own authentication statement
// (merchants.Seen) and confirms the key in its idempotency look-up: a key
// rolled since, even by another process, gets 401 and moves nothing, its
// replays too, and so does every later request.
func TestWithdrawRolledKeySeenBefore(t *testing.T) {
	wdEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Rolled Co")
		b := wdBankCodes(t, e, m.TestSecret)
		wdFund(e, m.TestSecret, "NGN", 10000)
		body := map[string]any{"beneficiary": ngBen(b.ng), "amount": 100, "currency": "NGN"}
		wdPost(e, m.TestSecret, body, "Idempotency-Key", "before-roll").Expect(200)
		// Rolled by another instance, as the CLI or a second instance
		// would: this one still has the key as seen, so the first keyed
		// request takes the seen-key shortcut and its idempotency look-up
		// must refuse the key.
		other := merchants.New(e.App.DB, e.App.Clock)
		rolled, err := other.RollKeys(t.Context(), m.ID, "test")
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range []*servertest.Resp{
			wdPost(e, m.TestSecret, body, "Idempotency-Key", "after-roll"),
			wdPost(e, m.TestSecret, body, "Idempotency-Key", "before-roll"), // a replay
			wdPost(e, m.TestSecret, body, "Idempotency-Key", "after-roll"),
			wdPost(e, m.TestSecret, body),
		} {
			if r.Status != 401 || r.Code() != "UNAUTHORIZED" {
				t.Errorf("request %d with the rolled key: %d %s", i, r.Status, r.Body)
			}
		}
		if n := wdCount(t, e, rolled.SecretKey, ""); n != 1 {
			t.Errorf("%d withdrawals, want the one made before the roll", n)
		}
		wdWantAvailable(t, e, rolled.SecretKey, "NGN", "9889.25")
		// The new key works, keyed, twice (the second time as a key seen).
		for _, k := range []string{"new-1", "new-2"} {
			wdPost(e, rolled.SecretKey, body, "Idempotency-Key", k).Expect(200)
		}
		wdWantAvailable(t, e, rolled.SecretKey, "NGN", "9667.75")
	})
}
