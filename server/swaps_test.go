package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/internal/jobs"
	"merchantpay/internal/ledger"
	"merchantpay/internal/tenant"
	"merchantpay/server/servertest"
)

// Swap tests poll for due settlements every 50 ms of real time.
var swapPoll = servertest.With("JOBS_POLL_INTERVAL", "50ms")

var swapRef = regexp.MustCompile(`^SWP-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// swapTxFields are the spec's Transaction fields and their JSON types.
var swapTxFields = map[string]string{
	"reference": "string", "merchant_reference": "null|string", "type": "string", "purpose": "string",
	"status": "string", "from_amount": "number", "amount": "number", "amount_charged": "number",
	"amount_settled": "number", "currency": "string", "from_currency": "string", "to_amount": "number",
	"to_currency": "string", "trx_rate": "number", "rateId": "string", "from": "string", "to": "string",
	"channel": "string", "narration": "string", "beneficiary": "null", "fee_bearer": "string", "fee": "number",
	"destination": "string", "payment_slug": "string", "from_merchant": "string", "to_merchant": "null|string",
	"settled_at": "null|string", "settlement_time": "string", "settlement_date": "null|string",
	"reject_reason": "null", "trace_id": "null", "payment_proof": "null", "created_at": "string", "updated_at": "string",
}

func eachSwapLedger(t *testing.T, fn func(t *testing.T, e *servertest.Env)) {
	t.Helper()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		fn(t, e)
		if err := ledger.Check(context.Background(), e.App.DB); err != nil {
			t.Fatalf("ledger invariants: %v", err)
		}
	}, swapPoll)
}

func fund(e *servertest.Env, key, currency string, amount any) {
	e.T.Helper()
	e.REST(http.MethodPost, "/sandbox/balances/fund", key, map[string]any{"currency": currency, "amount": amount}).Expect(200)
}

func postSwap(e *servertest.Env, key string, body any) *servertest.Resp {
	e.T.Helper()
	return e.REST(http.MethodPost, "/transactions/swap", key, body)
}

// wantBalance checks one currency's available and pending.
func wantBalance(t *testing.T, e *servertest.Env, key, cur, available, pending string) {
	t.Helper()
	b := balances(t, e, key)[cur]
	if b == nil {
		t.Fatalf("no %s balance", cur)
	}
	if !num(t, b["available"]).Equal(num(t, json.Number(available))) || !num(t, b["pending"]).Equal(num(t, json.Number(pending))) {
		t.Errorf("%s balance: available %v, pending %v; want %s, %s", cur, b["available"], b["pending"], available, pending)
	}
}

// swapEvents returns the outbox's events about the transaction ref, in order.
func swapEvents(t *testing.T, e *servertest.Env, ref string) []*ent.Event {
	t.Helper()
	ctx := tenant.System(context.Background())
	evs, err := e.App.DB.Reader().Event.Query().Where(event.TransactionRef(ref)).Order(ent.Asc(event.FieldID)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func decodeJSON(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

func TestSwapEndToEnd(t *testing.T) {
	eachSwapLedger(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Swap Co")
		fund(e, m.TestSecret, "USDT", 100)
		q := createQuote(e, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 10})
		quoteRef := q["reference"].(string)
		// SELL at 1592: gross 15920 NGN, fee 0.5% = 79.60, to_amount 15840.40.
		wantNum(t, q, "to_amount", "15840.4")
		created := e.Clock.Now()

		r := postSwap(e, m.TestSecret, map[string]any{"rate_reference": quoteRef, "reference": "Order-1"}).Expect(200)
		if r.JSON["status"] != true || r.JSON["statusCode"] != json.Number("200") {
			t.Errorf("envelope: %s", r.Body)
		}
		d := r.Data()
		checkShape(t, "swap", d, swapTxFields)
		ref, _ := d["reference"].(string)
		if !swapRef.MatchString(ref) {
			t.Errorf("reference %q is not SWP-<uuid>", ref)
		}
		want := map[string]any{
			"merchant_reference": "Order-1", "type": "SWAP", "purpose": "SWAP", "status": "pending",
			"currency": "NGN", "from_currency": "USDT", "to_currency": "NGN", "rateId": quoteRef,
			"from": "SELF", "to": "SELF", "channel": "API", "fee_bearer": "merchant", "destination": "main_balance",
			"payment_slug": "instant-swap", "from_merchant": "Swap Co", "settlement_time": "30",
			"settled_at": nil, "settlement_date": nil, "beneficiary": nil, "reject_reason": nil,
			"narration": "Swap 10 USDT to 15840.4 NGN",
		}
		for k, v := range want {
			if d[k] != v {
				t.Errorf("%s = %v, want %v", k, d[k], v)
			}
		}
		for field, v := range map[string]string{"from_amount": "10", "amount": "15840.4", "to_amount": "15840.4",
			"fee": "79.6", "trx_rate": "1592", "amount_charged": "15920", "amount_settled": "15840.4"} {
			wantNum(t, d, field, v)
		}
		wantTime(t, d, "created_at", created)
		wantTime(t, d, "updated_at", created)
		// settlement_time is a string on every Transaction (GraphQL types it
		// String too); the quote shows the same minutes as a number.
		if !bytes.Contains(r.Body, []byte(`"settlement_time":"30"`)) || !bytes.Contains(r.Body, []byte(`"from_amount":10,`)) {
			t.Errorf("body: %s", r.Body)
		}

		// Debited at once; the incoming amount is pending.
		wantBalance(t, e, m.TestSecret, "USDT", "90", "0")
		wantBalance(t, e, m.TestSecret, "NGN", "0", "15840.4")
		if r := e.REST(http.MethodPost, "/rates/refresh", m.TestSecret, map[string]any{"reference": quoteRef}); r.Code() != "RATE_USED" {
			t.Errorf("refresh of the swapped quote: %d %s", r.Status, r.Code())
		}

		// Not due a moment before the settlement delay.
		e.Clock.Advance(30*time.Minute - time.Second)
		if n, err := e.App.Swaps.SettleDue(context.Background(), "probe", time.Minute, 10); n != 0 || err != nil {
			t.Fatalf("settled %d early (%v)", n, err)
		}
		if got := e.REST(http.MethodGet, "/transactions/"+ref, m.TestSecret, nil).Expect(200).Data(); got["status"] != "pending" {
			t.Fatalf("status before the delay: %v", got["status"])
		}

		e.Clock.Advance(2 * time.Second)
		settledAt := e.Clock.Now()
		var got map[string]any
		servertest.Eventually(t, 30*time.Second, "the swap to settle", func() bool {
			got = e.REST(http.MethodGet, "/transactions/"+ref, m.TestSecret, nil).Expect(200).Data()
			return got["status"] == "success"
		})
		checkShape(t, "settled swap", got, swapTxFields)
		wantTime(t, got, "settled_at", settledAt)
		wantTime(t, got, "settlement_date", settledAt)
		wantTime(t, got, "updated_at", settledAt)
		wantTime(t, got, "created_at", created)
		for k, v := range d {
			if k == "status" || k == "settled_at" || k == "settlement_date" || k == "updated_at" {
				continue
			}
			if !reflect.DeepEqual(got[k], v) {
				t.Errorf("after settlement %s = %v, was %v", k, got[k], v)
			}
		}
		// The merchant reference finds it too, without regard to case.
		if byRef := e.REST(http.MethodGet, "/transactions/ORDER-1", m.TestSecret, nil).Expect(200).Data(); byRef["reference"] != ref {
			t.Errorf("by merchant reference: %v", byRef["reference"])
		}
		wantBalance(t, e, m.TestSecret, "USDT", "90", "0")
		wantBalance(t, e, m.TestSecret, "NGN", "15840.4", "0")

		evs := swapEvents(t, e, ref)
		if len(evs) != 2 || evs[0].Type != "swap.pending" || evs[1].Type != "swap.success" {
			t.Fatalf("events: %v", evs)
		}
		if p := decodeJSON(t, evs[0].Payload); !reflect.DeepEqual(p, d) {
			t.Errorf("swap.pending carries %v, want the swap as created %v", p, d)
		}
		if p := decodeJSON(t, evs[1].Payload); !reflect.DeepEqual(p, got) {
			t.Errorf("swap.success carries %v, want the swap as GET shows it %v", p, got)
		}

		// Nothing more happens later.
		e.Clock.Advance(time.Hour)
		if n, err := e.App.Swaps.SettleDue(context.Background(), "probe", time.Minute, 10); n != 0 || err != nil {
			t.Fatalf("settled swaps claimed again: %d, %v", n, err)
		}
		if evs := swapEvents(t, e, ref); len(evs) != 2 {
			t.Errorf("%d events after settlement", len(evs))
		}
	})
}

func TestSwapBuyWithoutReference(t *testing.T) {
	eachSwapLedger(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Buyer")
		fund(e, m.TestSecret, "NGN", 200000)
		// BUY at 1608 paying out exactly 100 USDT: from_amount 161608.05 NGN,
		// fee 0.502513 USDT.
		q := createQuote(e, m.TestSecret, map[string]any{"from_currency": "NGN", "to_currency": "USDT", "to_amount": 100})
		body := map[string]any{"rate_reference": q["reference"], "reference": nil}
		first := e.REST(http.MethodPost, "/transactions/swap", m.TestSecret, body, "Idempotency-Key", "swap-key-1").Expect(200)
		d := first.Data()
		// A repeat with the same key replays the answer and swaps nothing more.
		again := e.REST(http.MethodPost, "/transactions/swap", m.TestSecret, body, "Idempotency-Key", "swap-key-1").Expect(200)
		if again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Body, first.Body) {
			t.Errorf("replay: %s %s", again.Header.Get("Idempotent-Replayed"), again.Body)
		}
		if d["merchant_reference"] != nil || d["currency"] != "USDT" || d["from_currency"] != "NGN" {
			t.Errorf("swap: %v", d)
		}
		wantNum(t, d, "from_amount", "161608.05")
		wantNum(t, d, "amount", "100")
		wantNum(t, d, "fee", "0.502513")
		wantNum(t, d, "amount_charged", "100.502513")
		wantNum(t, d, "trx_rate", "1608")
		wantBalance(t, e, m.TestSecret, "NGN", "38391.95", "0")
		wantBalance(t, e, m.TestSecret, "USDT", "0", "100")
		e.Clock.Advance(31 * time.Minute)
		servertest.Eventually(t, 30*time.Second, "the swap to settle", func() bool {
			return e.REST(http.MethodGet, "/transactions/"+d["reference"].(string), m.TestSecret, nil).Expect(200).Data()["status"] == "success"
		})
		wantBalance(t, e, m.TestSecret, "USDT", "100", "0")
	})
}

func TestSwapErrors(t *testing.T) {
	eachSwapLedger(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Swap Errors")
		key := m.TestSecret
		quote := func(body map[string]any) string {
			return createQuote(e, key, body)["reference"].(string)
		}
		swapQuote := func(from any) string {
			return quote(map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": from})
		}
		expect := func(what string, r *servertest.Resp, status int, code string, fields ...string) {
			t.Helper()
			if r.Status != status || r.Code() != code {
				t.Errorf("%s: %d %s, want %d %s: %s", what, r.Status, r.Code(), status, code, r.Body)
			}
			if fields != nil && !slices.Equal(r.Fields(), fields) {
				t.Errorf("%s: fields %v, want %v", what, r.Fields(), fields)
			}
		}

		// Validation: every bad field at once.
		expect("empty body", postSwap(e, key, map[string]any{}), 400, "VALIDATION_ERROR", "rate_reference")
		expect("wrong types", postSwap(e, key, map[string]any{"rate_reference": 5, "reference": 7}), 400, "VALIDATION_ERROR",
			"rate_reference", "reference")
		expect("bad values", postSwap(e, key, map[string]any{"rate_reference": "", "reference": "no spaces please"}), 400,
			"VALIDATION_ERROR", "rate_reference", "reference")
		expect("NUL", postSwap(e, key, `{"rate_reference": "a\u0000b"}`), 400, "VALIDATION_ERROR", "rate_reference")
		expect("not an object", postSwap(e, key, `[1]`), 400, "BAD_REQUEST")
		expect("public key", postSwap(e, m.TestPublic, map[string]any{"rate_reference": "x"}), 403, "FORBIDDEN")

		// Unknown, other merchant's, other mode's quote.
		expect("unknown", postSwap(e, key, map[string]any{"rate_reference": "8d7c7f4e-5b1a-4a57-9a4e-3f0e2b7c1d00"}), 404, "NOT_FOUND")
		ref := swapQuote(1)
		other := e.Merchant("Someone Else")
		fund(e, other.TestSecret, "USDT", 10)
		expect("other merchant", postSwap(e, other.TestSecret, map[string]any{"rate_reference": ref}), 404, "NOT_FOUND")
		expect("live mode", postSwap(e, m.LiveSecret, map[string]any{"rate_reference": ref}), 404, "NOT_FOUND")

		// A withdrawal quote is not a swap quote.
		wq := quote(map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 1, "transaction_type": "withdrawal"})
		expect("withdrawal quote", postSwap(e, key, map[string]any{"rate_reference": wq}), 422, "RATE_TYPE_MISMATCH")

		// Insufficient balance: nothing written, the quote stays usable.
		fund(e, key, "USDT", 5)
		big := swapQuote(10)
		expect("insufficient", postSwap(e, key, map[string]any{"rate_reference": big, "reference": "big-1"}), 422, "INSUFFICIENT_BALANCE")
		if list := e.REST(http.MethodGet, "/transactions?type=SWAP", key, nil).Expect(200).List(); len(list) != 0 {
			t.Errorf("a failed swap left transactions: %v", list)
		}
		expect("failed swap's reference", e.REST(http.MethodGet, "/transactions/big-1", key, nil), 404, "NOT_FOUND")
		wantBalance(t, e, key, "USDT", "5", "0")
		wantBalance(t, e, key, "NGN", "0", "0")
		ctx := tenant.System(context.Background())
		if n, err := e.App.DB.Reader().Event.Query().Count(ctx); err != nil || n != 0 {
			t.Errorf("%d events after failures (%v)", n, err)
		}
		fund(e, key, "USDT", 5)
		d := postSwap(e, key, map[string]any{"rate_reference": big, "reference": "big-1"}).Expect(200).Data()
		wantBalance(t, e, key, "USDT", "0", "0")

		// Used.
		expect("used", postSwap(e, key, map[string]any{"rate_reference": big}), 409, "RATE_USED")

		// Duplicate reference, compared without regard to case; the quote
		// stays usable.
		fund(e, key, "USDT", 10)
		q2 := swapQuote(2)
		expect("duplicate", postSwap(e, key, map[string]any{"rate_reference": q2, "reference": "BIG-1"}), 409, "DUPLICATE_REFERENCE", "reference")
		d2 := postSwap(e, key, map[string]any{"rate_reference": q2, "reference": "big-2"}).Expect(200).Data()
		if d2["merchant_reference"] != "big-2" || d["reference"] == d2["reference"] {
			t.Errorf("second swap: %v", d2)
		}
		// Another merchant may use the same reference.
		postSwap(e, other.TestSecret, map[string]any{"rate_reference": smallQuote(e, other.TestSecret), "reference": "big-1"}).Expect(200)

		// Expired: RATE_EXPIRED until refreshed.
		q3 := swapQuote(1)
		e.Clock.Advance(91 * time.Second)
		r := postSwap(e, key, map[string]any{"rate_reference": q3})
		expect("expired", r, 409, "RATE_EXPIRED")
		if msg, _ := r.JSON["message"].(string); !regexp.MustCompile(`refresh`).MatchString(msg) {
			t.Errorf("expired message %q does not say to refresh", msg)
		}
		e.REST(http.MethodPost, "/rates/refresh", key, map[string]any{"reference": q3}).Expect(200)
		postSwap(e, key, map[string]any{"rate_reference": q3}).Expect(200)
	})
}

// raceSwaps posts a swap of each quote at once and returns the answers.
func raceSwaps(e *servertest.Env, key string, refs []string) []*servertest.Resp {
	out := make([]*servertest.Resp, len(refs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = postSwap(e, key, map[string]any{"rate_reference": ref})
		}()
	}
	close(start)
	wg.Wait()
	return out
}

func smallQuote(e *servertest.Env, key string) string {
	e.T.Helper()
	return createQuote(e, key, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 2})["reference"].(string)
}

// TestSwapRace races concurrent swaps of one quote (exactly one wins) and
// swaps of several quotes on a balance that covers only some of them.
func TestSwapRace(t *testing.T) {
	eachSwapLedger(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Swap Racer")
		fund(e, m.TestSecret, "USDT", 25)
		race := func(refs []string) []*servertest.Resp { return raceSwaps(e, m.TestSecret, refs) }
		count := func(rs []*servertest.Resp) map[string]int {
			c := map[string]int{}
			for _, r := range rs {
				if r.Status == 200 {
					c["ok"]++
				} else {
					c[r.Code()]++
				}
			}
			return c
		}

		q := createQuote(e, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 10})["reference"].(string)
		same := make([]string, 10)
		for i := range same {
			same[i] = q
		}
		if c := count(race(same)); c["ok"] != 1 || c["RATE_USED"] != 9 {
			t.Fatalf("one quote, 10 swaps: %v", c)
		}
		wantBalance(t, e, m.TestSecret, "USDT", "15", "0")

		// 15 USDT left: of five 5 USDT swaps exactly three succeed.
		var five []string
		for range 5 {
			five = append(five, createQuote(e, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 5})["reference"].(string))
		}
		if c := count(race(five)); c["ok"] != 3 || c["INSUFFICIENT_BALANCE"] != 2 {
			t.Fatalf("five swaps on three's balance: %v", c)
		}
		wantBalance(t, e, m.TestSecret, "USDT", "0", "0")
		if list := e.REST(http.MethodGet, "/transactions?type=SWAP", m.TestSecret, nil).Expect(200).List(); len(list) != 4 {
			t.Errorf("%d swaps, want 4", len(list))
		}
	})
}

// TestSwapSettlementInstances settles swaps with two instances on one
// database, one of which never saw them created, after a worker that
// claimed some crashed: each settles exactly once.
func TestSwapSettlementInstances(t *testing.T) {
	servertest.Each(t, func(t *testing.T, a *servertest.Env) {
		b := servertest.New(t, a.DBURL, swapPoll)
		b.Clock.Set(a.Clock.Now())
		m := a.Merchant("Two Instances")
		fund(a, m.TestSecret, "USDT", 100)
		const n = 12
		var refs []string
		for i := range n {
			q := createQuote(a, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 1})
			d := postSwap(a, m.TestSecret, map[string]any{"rate_reference": q["reference"], "reference": fmt.Sprintf("multi-%d", i)}).Expect(200).Data()
			refs = append(refs, d["reference"].(string))
		}
		// A worker claims some and crashes: its lease must expire first.
		due := a.Clock.Now().Add(31 * time.Minute)
		crashed, err := jobs.Claim(context.Background(), a.App.DB, "crashed", due, time.Minute, 3)
		if err != nil || len(crashed) != 3 {
			t.Fatalf("crashed claim: %d, %v", len(crashed), err)
		}
		// Only the lease's owner may settle a leased swap.
		if ok, err := a.App.Swaps.Settle(context.Background(), crashed[0], "intruder"); ok || err != nil {
			t.Errorf("settle of another's lease: %v, %v", ok, err)
		}
		a.Clock.Set(due)
		b.Clock.Set(due)
		servertest.Eventually(t, 60*time.Second, "the unleased swaps to settle", func() bool {
			return countStatus(t, a, m.TestSecret, "success") == n-3
		})
		a.Clock.Advance(2 * time.Minute)
		b.Clock.Advance(2 * time.Minute)
		servertest.Eventually(t, 60*time.Second, "every swap to settle", func() bool {
			return countStatus(t, b, m.TestSecret, "success") == n
		})
		for _, ref := range refs {
			evs := swapEvents(t, a, ref)
			if len(evs) != 2 || evs[0].Type != "swap.pending" || evs[1].Type != "swap.success" {
				t.Errorf("%s events: %v", ref, evs)
			}
		}
		wantBalance(t, b, m.TestSecret, "USDT", "88", "0")
		if err := ledger.Check(context.Background(), a.App.DB); err != nil {
			t.Fatalf("ledger invariants: %v", err)
		}
		// A settle with a stale lease changes nothing.
		if ok, err := a.App.Swaps.Settle(context.Background(), crashed[0], "crashed"); ok || err != nil {
			t.Errorf("stale settle: %v, %v", ok, err)
		}
	}, swapPoll)
}

func countStatus(t *testing.T, e *servertest.Env, key, status string) int {
	t.Helper()
	return len(e.REST(http.MethodGet, "/transactions?type=SWAP&status="+status+"&limit=100", key, nil).Expect(200).List())
}

// TestSwapOppositeDirections races swaps of one merchant in opposite
// directions (USDT→NGN against NGN→USDT) while earlier ones settle: each
// posting touches both balance rows, and every one must be answered 200
// (on PostgreSQL two postings that lock the rows in opposite orders
// deadlock, and one of them fails).
func TestSwapOppositeDirections(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Two Ways")
		fund(e, m.TestSecret, "USDT", 1000)
		fund(e, m.TestSecret, "NGN", 10000000)
		for round := range 12 {
			// The last round's swaps fall due and settle meanwhile.
			e.Clock.Advance(300 * time.Millisecond)
			var refs []string
			for i := range 4 {
				body := map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 1}
				if i%2 == 1 {
					body = map[string]any{"from_currency": "NGN", "to_currency": "USDT", "from_amount": 2000}
				}
				refs = append(refs, createQuote(e, m.TestSecret, body)["reference"].(string))
			}
			for i, r := range raceSwaps(e, m.TestSecret, refs) {
				if r.Status != 200 {
					t.Fatalf("round %d, swap %d: %d %s", round, i, r.Status, r.Body)
				}
			}
		}
		e.Clock.Advance(time.Second)
		servertest.Eventually(t, 30*time.Second, "every swap to settle", func() bool {
			return countStatus(t, e, m.TestSecret, "success") == 48
		})
		if err := ledger.Check(context.Background(), e.App.DB); err != nil {
			t.Fatalf("ledger invariants: %v", err)
		}
	}, swapPoll, servertest.With("SWAP_SETTLEMENT_DELAY", "200ms"))
}
