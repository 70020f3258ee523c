package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent/event"
	"merchantpay/internal/ledger"
	"merchantpay/internal/tenant"
	"merchantpay/rest"
	"merchantpay/server/servertest"
)

// The HTTP tests of deposits into fiat accounts, made through the sandbox's
// simulated bank transfer: every scenario runs on both databases and ends with
// the ledger's invariants.

const depPath = "/sandbox/deposits/bank-transfer"

var depRefRE = regexp.MustCompile(`^DEP-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// depEach runs fn on a fresh service per database, then checks the ledger.
func depEach(t *testing.T, fn func(t *testing.T, e *servertest.Env)) {
	t.Helper()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		fn(t, e)
		if err := ledger.Check(context.Background(), e.App.DB); err != nil {
			t.Fatalf("ledger invariants: %v", err)
		}
	})
}

// depWallet creates a wallet through the API.
func depWallet(t *testing.T, e *servertest.Env, key, ref string) {
	t.Helper()
	e.REST("POST", "/wallets", key, map[string]any{
		"wallet_reference": ref,
		"compliance": map[string]any{
			"phone": "+2348012345678", "firstname": "Chioma", "lastname": "Okafor", "email": "chioma@example.com",
			"documents": []any{map[string]any{"document_type": "NIN", "document_file": "https://example.com/nin.png",
				"document_file_type": "url", "document_no": "12345678901"}},
		},
	}).Expect(http.StatusCreated)
}

// depAccount creates an account on a wallet through the API and returns it.
func depAccount(t *testing.T, e *servertest.Env, key, wallet string, body map[string]any) map[string]any {
	t.Helper()
	if _, ok := body["currency"]; !ok {
		body["currency"] = "NGN"
	}
	return e.REST("POST", "/wallets/"+wallet, key, body).Expect(http.StatusCreated).Data()
}

// depDynamic creates a dynamic account of 100 NGN for 30 minutes; criteria
// "" leaves reject_amount_criteria out.
func depDynamic(t *testing.T, e *servertest.Env, key, wallet, criteria string) string {
	t.Helper()
	body := map[string]any{"account_type": "dynamic", "amount": 100, "expires_at": 30}
	if criteria != "" {
		body["reject_amount_criteria"] = criteria
	}
	return depAccount(t, e, key, wallet, body)["account_number"].(string)
}

// deposit posts a simulated transfer and returns the Transaction.
func deposit(t *testing.T, e *servertest.Env, key string, body any) map[string]any {
	t.Helper()
	r := e.REST("POST", depPath, key, body).Expect(http.StatusOK)
	if r.JSON["status"] != true || r.JSON["statusCode"] != json.Number("200") {
		t.Fatalf("envelope: %s", r.Body)
	}
	return r.Data()
}

func depPay(t *testing.T, e *servertest.Env, key, number string, amount any, narration string) map[string]any {
	t.Helper()
	body := map[string]any{"account_number": number, "amount": amount}
	if narration != "" {
		body["narration"] = narration
	}
	return deposit(t, e, key, body)
}

// depWant is what a deposit should look like.
type depWant struct {
	status     string // success or refunded
	amount     string
	merchant   string // from_merchant
	wallet     string // wallet_reference; "" for the global account
	account    string // account_reference
	narration  string
	merchRef   string // merchant_reference; "" for null
	reasonHas  string // part of reject_reason (refunded only)
	now        time.Time
	senderName string
}

// depCheck checks every field of a deposit Transaction and its JSON type.
func depCheck(t *testing.T, d map[string]any, w depWant) {
	t.Helper()
	fields := []string{"reference", "merchant_reference", "type", "purpose", "status", "from_amount", "amount",
		"amount_charged", "amount_settled", "currency", "from_currency", "to_amount", "to_currency", "trx_rate",
		"rateId", "from", "to", "channel", "narration", "beneficiary", "fee_bearer", "fee", "destination",
		"payment_slug", "from_merchant", "to_merchant", "settled_at", "settlement_time", "settlement_date",
		"reject_reason", "trace_id", "payment_proof", "wallet_reference", "account_reference", "created_at", "updated_at"}
	for _, k := range fields {
		if _, ok := d[k]; !ok {
			t.Errorf("field %s missing: %v", k, d)
		}
	}
	if len(d) != len(fields) {
		t.Errorf("%d fields, want %d: %v", len(d), len(fields), d)
	}
	ref, _ := d["reference"].(string)
	if !depRefRE.MatchString(ref) {
		t.Errorf("reference %v", d["reference"])
	}
	now := rest.Time(w.now)
	settled, fee := w.amount, "0"
	if w.status == "refunded" {
		settled = "0"
	}
	want := map[string]any{
		"type": "DEPOSIT", "purpose": "DEPOSIT", "status": w.status,
		"from_amount": json.Number(w.amount), "amount": json.Number(w.amount), "amount_charged": json.Number(w.amount),
		"amount_settled": json.Number(settled), "fee": json.Number(fee),
		"currency": "NGN", "from_currency": "NGN", "to_amount": nil, "to_currency": nil, "trx_rate": nil, "rateId": nil,
		"from": "OTHER", "to": "SELF", "channel": "BANK_TRANSFER", "narration": w.narration, "beneficiary": nil,
		"fee_bearer": "merchant", "destination": "main_balance", "payment_slug": "instant-bank-deposit",
		"from_merchant": w.merchant, "to_merchant": nil, "settlement_time": nil, "trace_id": nil, "payment_proof": nil,
		"account_reference": w.account, "created_at": now, "updated_at": now,
	}
	// A deposit carries both references (wallet and account); the merchant's
	// own account (POST /accounts) belongs to no wallet.
	want["wallet_reference"] = nil
	if w.wallet != "" {
		want["wallet_reference"] = w.wallet
	}
	if w.merchRef == "" {
		want["merchant_reference"] = nil
	} else {
		want["merchant_reference"] = w.merchRef
	}
	if w.status == "success" {
		want["settled_at"], want["settlement_date"], want["reject_reason"] = now, now, nil
	} else {
		want["settled_at"], want["settlement_date"] = nil, nil
		reason, _ := d["reject_reason"].(string)
		if reason == "" || !strings.Contains(reason, w.reasonHas) {
			t.Errorf("reject_reason %q, want it to mention %q", reason, w.reasonHas)
		}
	}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s = %#v, want %#v", k, d[k], v)
		}
	}
}

// depEvents returns the outbox's event types for a transaction reference.
func depEvents(t *testing.T, e *servertest.Env, ref string) []string {
	t.Helper()
	ctx := tenant.System(context.Background())
	rows, err := e.App.DB.Reader().Event.Query().Where(event.TransactionRef(ref)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, r.Type)
		var payload map[string]any
		if err := json.Unmarshal(r.Payload, &payload); err != nil || payload["reference"] != ref {
			t.Errorf("event %s payload: %s", r.EventID, r.Payload)
		}
	}
	return out
}

// depExpectEvent checks that the deposit d has exactly one event, of the type
// its status calls for.
func depExpectEvent(t *testing.T, e *servertest.Env, d map[string]any) {
	t.Helper()
	want := "deposit." + d["status"].(string)
	if got := depEvents(t, e, d["reference"].(string)); len(got) != 1 || got[0] != want {
		t.Errorf("events of %s: %v, want [%s]", d["reference"], got, want)
	}
}

// depNGN reads the NGN balance from GET /balances.
func depNGN(t *testing.T, e *servertest.Env, key string) (available, pending string) {
	t.Helper()
	r := e.REST("GET", "/balances", key, nil).Expect(http.StatusOK)
	for _, x := range r.List() {
		b, _ := x.(map[string]any)
		if b["currency"] == "NGN" {
			return fmt.Sprint(b["available"]), fmt.Sprint(b["pending"])
		}
	}
	t.Fatalf("no NGN balance: %s", r.Body)
	return "", ""
}

// depSumAccepted is the sum of the accepted deposits' amount_settled.
func depSumAccepted(ds []map[string]any) string {
	sum := decimal.Zero
	for _, d := range ds {
		if d["status"] == "success" {
			sum = sum.Add(decimal.RequireFromString(string(d["amount_settled"].(json.Number))))
		}
	}
	return sum.String()
}

func depExpectBalance(t *testing.T, e *servertest.Env, key string, ds []map[string]any) {
	t.Helper()
	want := depSumAccepted(ds)
	if avail, pending := depNGN(t, e, key); avail != want || pending != "0" {
		t.Errorf("NGN balance %s (pending %s), want the accepted deposits' %s", avail, pending, want)
	}
}

func TestDepositStatic(t *testing.T) {
	depEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		depWallet(t, e, m.TestSecret, "cust-1")
		acc := depAccount(t, e, m.TestSecret, "cust-1", map[string]any{"account_type": "static", "account_reference": "st-1"})
		num := acc["account_number"].(string)

		r := e.REST("POST", depPath, m.TestSecret,
			`{"account_number": "`+num+`", "amount": 1500.50, "narration": "Salary !!ORD-1!!", "sender_name": "JOHN DOE", "sender_bank": "Access Bank"}`).Expect(200)
		if !strings.Contains(string(r.Body), `"amount":1500.5,`) {
			t.Errorf("amount is not the exact number 1500.5: %s", r.Body)
		}
		d1 := r.Data()
		// A static account ignores narration markers.
		depCheck(t, d1, depWant{status: "success", amount: "1500.5", merchant: "Ada Stores", wallet: "cust-1",
			account: "st-1", narration: "Salary !!ORD-1!!", now: e.Clock.Now()})
		depExpectEvent(t, e, d1)

		e.Clock.Advance(time.Minute)
		d2 := depPay(t, e, m.TestSecret, num, 0.01, "")
		depCheck(t, d2, depWant{status: "success", amount: "0.01", merchant: "Ada Stores", wallet: "cust-1",
			account: "st-1", now: e.Clock.Now()})
		d3 := depPay(t, e, m.TestSecret, num, 10000000000, "")
		depExpectEvent(t, e, d2)
		depExpectEvent(t, e, d3)
		all := []map[string]any{d1, d2, d3}
		depExpectBalance(t, e, m.TestSecret, all)

		// GET /transactions/{ref} shows what the POST answered.
		got := e.REST("GET", "/transactions/"+d1["reference"].(string), m.TestSecret, nil).Expect(200).Data()
		if fmt.Sprint(got) != fmt.Sprint(d1) {
			t.Errorf("GET %v\nPOST %v", got, d1)
		}
		if r := e.REST("GET", "/transactions/ORD-1", m.TestSecret, nil); r.Status != 404 {
			t.Errorf("a static account's marker became a reference: %s", r.Body)
		}

		// An Idempotency-Key replays the answer without booking twice.
		body := map[string]any{"account_number": num, "amount": 5}
		first := e.REST("POST", depPath, m.TestSecret, body, "Idempotency-Key", "dep-key-1").Expect(200)
		again := e.REST("POST", depPath, m.TestSecret, body, "Idempotency-Key", "dep-key-1").Expect(200)
		if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
			t.Errorf("replay: %s %s", again.Header.Get("Idempotent-Replayed"), again.Body)
		}
		all = append(all, first.Data())
		depExpectBalance(t, e, m.TestSecret, all)

		// The merchant's other mode sees nothing.
		if avail, _ := depNGN(t, e, m.LiveSecret); avail != "0" {
			t.Errorf("live NGN balance %s", avail)
		}
		// The list extension shows the deposits, newest first.
		list := e.REST("GET", "/transactions?type=DEPOSIT", m.TestSecret, nil).Expect(200).List()
		if len(list) != 4 {
			t.Errorf("%d deposits listed, want 4", len(list))
		}
		// The documented template left blank filters nothing.
		if all := e.REST("GET", "/transactions?type=&status=&limit=&cursor=", m.TestSecret, nil).Expect(200).List(); len(all) != len(list) {
			t.Errorf("blank filters list %d, want %d", len(all), len(list))
		}
	})
}

func TestDepositStaticDynamicNarration(t *testing.T) {
	depEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		depWallet(t, e, m.TestSecret, "cust-1")
		onWallet := depAccount(t, e, m.TestSecret, "cust-1", map[string]any{"account_type": "static_dynamic", "account_reference": "sd-1"})
		global := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_reference": "global-1"}).Expect(201).Data()

		tests := []struct {
			name, narration, ref string
		}{
			{"mixed case", "Payment for !!OrDeR-77!! thanks", "OrDeR-77"},
			{"no marker", "Transfer from JOHN DOE", ""},
			{"malformed: space", "pay !!ORD 78!!", ""},
			{"malformed: no closing", "pay !!ORD-79", ""},
			{"malformed: single bangs", "pay !ORD-80!", ""},
			{"several, same ignoring case", "!!inv-9!! again !!INV-9!!", "inv-9"},
			{"several, different", "!!A-1!! !!B-2!!", ""},
			{"empty narration", "", ""},
		}
		var all []map[string]any
		for i, tt := range tests {
			acc, wallet, accRef := onWallet, "cust-1", "sd-1"
			if i%2 == 1 {
				acc, wallet, accRef = global, "", "global-1"
			}
			d := depPay(t, e, m.TestSecret, acc["account_number"].(string), 250, tt.narration)
			t.Run(tt.name, func(t *testing.T) {
				depCheck(t, d, depWant{status: "success", amount: "250", merchant: "Ada Stores", wallet: wallet,
					account: accRef, narration: tt.narration, merchRef: tt.ref, now: e.Clock.Now()})
				depExpectEvent(t, e, d)
			})
			all = append(all, d)
		}
		first := all[0]

		// Found by the merchant's reference in any case, and by DEP-.
		for _, ref := range []string{"OrDeR-77", "order-77", "ORDER-77", first["reference"].(string)} {
			got := e.REST("GET", "/transactions/"+ref, m.TestSecret, nil).Expect(200).Data()
			if got["reference"] != first["reference"] || got["merchant_reference"] != "OrDeR-77" {
				t.Errorf("GET %s: %v", ref, got)
			}
		}
		for _, ref := range []string{"ORD-78", "A-1", "B-2"} {
			if r := e.REST("GET", "/transactions/"+ref, m.TestSecret, nil); r.Status != 404 {
				t.Errorf("GET %s: %d %s", ref, r.Status, r.Body)
			}
		}

		// The reference again, in another case: refunded, nothing credited,
		// and the reference still finds the first deposit.
		dup := depPay(t, e, m.TestSecret, global["account_number"].(string), 300, "again !!ORDER-77!!")
		depCheck(t, dup, depWant{status: "refunded", amount: "300", merchant: "Ada Stores", account: "global-1",
			narration: "again !!ORDER-77!!", reasonHas: "already used", now: e.Clock.Now()})
		depExpectEvent(t, e, dup)
		all = append(all, dup)
		if got := e.REST("GET", "/transactions/order-77", m.TestSecret, nil).Expect(200).Data(); got["reference"] != first["reference"] {
			t.Errorf("order-77 now finds %v", got["reference"])
		}
		if got := e.REST("GET", "/transactions/"+dup["reference"].(string), m.TestSecret, nil).Expect(200).Data(); got["status"] != "refunded" {
			t.Errorf("refund by DEP-: %v", got)
		}
		depExpectBalance(t, e, m.TestSecret, all)

		// References are per merchant: another merchant may use the same one.
		o := e.Merchant("Bola Foods")
		oacc := e.REST("POST", "/accounts", o.TestSecret, map[string]any{}).Expect(201).Data()
		od := depPay(t, e, o.TestSecret, oacc["account_number"].(string), 1, "!!order-77!!")
		if od["status"] != "success" || od["merchant_reference"] != "order-77" || od["from_merchant"] != "Bola Foods" {
			t.Errorf("other merchant's deposit: %v", od)
		}
		depExpectBalance(t, e, o.TestSecret, []map[string]any{od})
	})
}

func TestDepositDynamicCriteria(t *testing.T) {
	depEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		depWallet(t, e, m.TestSecret, "cust-1")
		// Expected amount 100; paid below, equal and above.
		paid := []string{"99.99", "100", "100.01"}
		accept := map[string][3]bool{
			"NOT_EQUAL":         {false, true, false},
			"":                  {false, true, false}, // defaults to NOT_EQUAL
			"GREATER_THAN_ONLY": {true, true, false},
			"LESS_THAN_ONLY":    {false, true, true},
			"NONE":              {true, true, true},
		}
		var all []map[string]any
		for criteria, want := range accept {
			for i, amount := range paid {
				t.Run(fmt.Sprintf("%s/%s", criteria, amount), func(t *testing.T) {
					num := depDynamic(t, e, m.TestSecret, "cust-1", criteria)
					d := depPay(t, e, m.TestSecret, num, json.Number(amount), "")
					all = append(all, d)
					depExpectEvent(t, e, d)
					if want[i] {
						if d["status"] != "success" || d["amount_settled"] != json.Number(amount) {
							t.Fatalf("%s into a %q account: %v", amount, criteria, d)
						}
						// Single use: the account is closed now.
						again := depPay(t, e, m.TestSecret, num, 100, "")
						all = append(all, again)
						if again["status"] != "refunded" || !strings.Contains(again["reject_reason"].(string), "already used") {
							t.Errorf("second deposit: %v", again)
						}
						depExpectEvent(t, e, again)
						return
					}
					name := criteria
					if name == "" {
						name = "NOT_EQUAL"
					}
					how := "less than"
					if i == 2 {
						how = "greater than"
					}
					if d["status"] != "refunded" || d["amount_settled"] != json.Number("0") {
						t.Fatalf("%s into a %q account: %v", amount, criteria, d)
					}
					reason, _ := d["reject_reason"].(string)
					for _, part := range []string{name, how, amount, "100"} {
						if !strings.Contains(reason, part) {
							t.Errorf("reject_reason %q does not mention %q", reason, part)
						}
					}
					// A rejected amount leaves the account active: the right
					// amount is still accepted.
					right := depPay(t, e, m.TestSecret, num, 100, "")
					all = append(all, right)
					if right["status"] != "success" {
						t.Errorf("the expected amount after a rejected one: %v", right)
					}
				})
			}
		}
		depExpectBalance(t, e, m.TestSecret, all)
	})
}

func TestDepositDynamicExpiry(t *testing.T) {
	depEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		depWallet(t, e, m.TestSecret, "cust-1")
		before := depDynamic(t, e, m.TestSecret, "cust-1", "NONE")
		at := depAccount(t, e, m.TestSecret, "cust-1", map[string]any{"account_type": "dynamic", "amount": 100,
			"expires_at": 30, "reject_amount_criteria": "NONE", "account_reference": "dyn-at"})
		after := depDynamic(t, e, m.TestSecret, "cust-1", "NONE")

		e.Clock.Advance(30*time.Minute - time.Millisecond)
		d1 := depPay(t, e, m.TestSecret, before, 100, "")
		if d1["status"] != "success" {
			t.Errorf("a millisecond before expiry: %v", d1)
		}
		e.Clock.Advance(time.Millisecond)
		d2 := depPay(t, e, m.TestSecret, at["account_number"].(string), 100, "")
		depCheck(t, d2, depWant{status: "refunded", amount: "100", merchant: "Ada Stores", wallet: "cust-1",
			account: "dyn-at", reasonHas: "expired at " + at["expires_at"].(string), now: e.Clock.Now()})
		e.Clock.Advance(time.Hour)
		d3 := depPay(t, e, m.TestSecret, after, 100, "")
		if d3["status"] != "refunded" || !strings.Contains(d3["reject_reason"].(string), "expired") {
			t.Errorf("an hour after expiry: %v", d3)
		}
		all := []map[string]any{d1, d2, d3}
		for _, d := range all {
			depExpectEvent(t, e, d)
		}
		depExpectBalance(t, e, m.TestSecret, all)
	})
}

func TestDepositDynamicRace(t *testing.T) {
	depEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		depWallet(t, e, m.TestSecret, "cust-1")
		var all []map[string]any
		for round := 0; round < 3; round++ {
			num := depDynamic(t, e, m.TestSecret, "cust-1", "NOT_EQUAL")
			const n = 8
			results := make([]*servertest.Resp, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					results[i] = e.REST("POST", depPath, m.TestSecret, map[string]any{"account_number": num, "amount": 100})
				}()
			}
			close(start)
			wg.Wait()
			wins := 0
			for _, r := range results {
				if r.Status != 200 {
					t.Fatalf("racing deposit: %d %s", r.Status, r.Body)
				}
				d := r.Data()
				all = append(all, d)
				depExpectEvent(t, e, d)
				switch d["status"] {
				case "success":
					wins++
				case "refunded":
					if !strings.Contains(d["reject_reason"].(string), "already used") {
						t.Errorf("loser's reject_reason: %v", d["reject_reason"])
					}
				default:
					t.Errorf("status %v", d["status"])
				}
			}
			if wins != 1 {
				t.Fatalf("round %d: %d deposits accepted, want 1", round, wins)
			}
		}
		depExpectBalance(t, e, m.TestSecret, all)
		if avail, _ := depNGN(t, e, m.TestSecret); avail != "300" {
			t.Errorf("balance %s, want 300", avail)
		}
	})
}

// TestDepositReferenceRace races deposits carrying one narration reference:
// exactly one claims it, the others are refunded.
func TestDepositReferenceRace(t *testing.T) {
	depEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{}).Expect(201).Data()
		const n = 8
		results := make([]map[string]any, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r := e.REST("POST", depPath, m.TestSecret, map[string]any{"account_number": acc["account_number"],
					"amount": 10, "narration": fmt.Sprintf("try %d !!Race-Ref!!", i)})
				if r.Status == 200 {
					results[i] = r.Data()
				} else {
					t.Errorf("racing deposit: %d %s", r.Status, r.Body)
				}
			}()
		}
		close(start)
		wg.Wait()
		var claimed []string
		for _, d := range results {
			if d == nil {
				continue
			}
			depExpectEvent(t, e, d)
			if d["status"] == "success" {
				claimed = append(claimed, d["reference"].(string))
			} else if d["merchant_reference"] != nil || !strings.Contains(d["reject_reason"].(string), "already used") {
				t.Errorf("loser: %v", d)
			}
		}
		if len(claimed) != 1 {
			t.Fatalf("%d deposits claimed the reference", len(claimed))
		}
		if got := e.REST("GET", "/transactions/race-ref", m.TestSecret, nil).Expect(200).Data(); got["reference"] != claimed[0] {
			t.Errorf("race-ref finds %v, want %s", got["reference"], claimed[0])
		}
		depExpectBalance(t, e, m.TestSecret, results)
	})
}

func TestDepositValidation(t *testing.T) {
	depEach(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{}).Expect(201).Data()
		num := acc["account_number"].(string)
		long := strings.Repeat("x", 501)
		tests := []struct {
			body   string
			code   string
			fields []string
		}{
			{`{}`, "VALIDATION_ERROR", []string{"account_number", "amount"}},
			{`{"account_number": null, "amount": null, "narration": null, "sender_name": null, "sender_bank": null}`,
				"VALIDATION_ERROR", []string{"account_number", "amount"}},
			{`{"account_number": "` + num + `", "amount": "100"}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"account_number": "` + num + `", "amount": 0}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"account_number": "` + num + `", "amount": -1}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"account_number": "` + num + `", "amount": 1.001}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"account_number": "` + num + `", "amount": 10000000000.01}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"account_number": "` + num + `", "amount": 1e400}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"account_number": 1234567890, "amount": true}`, "VALIDATION_ERROR", []string{"account_number", "amount"}},
			{`{"account_number": "12345", "amount": 10}`, "VALIDATION_ERROR", []string{"account_number"}},
			{`{"account_number": "12345678a0", "amount": 10}`, "VALIDATION_ERROR", []string{"account_number"}},
			{`{"account_number": "` + num + `", "amount": 10, "narration": 5, "sender_name": ["x"], "sender_bank": {}}`,
				"VALIDATION_ERROR", []string{"narration", "sender_name", "sender_bank"}},
			{`{"account_number": "` + num + `", "amount": 10, "narration": "` + long + `"}`, "VALIDATION_ERROR", []string{"narration"}},
			{`{"account_number": "` + num + `", "amount": 10, "narration": "a\u0000b"}`, "VALIDATION_ERROR", []string{"narration"}},
			{`{"account_number": "x", "amount": "ten", "narration": false}`, "VALIDATION_ERROR", []string{"account_number", "amount", "narration"}},
			{`[]`, "BAD_REQUEST", nil},
			{`"x"`, "BAD_REQUEST", nil},
			{`{"account_number": "` + num + `"`, "BAD_REQUEST", nil},
			{`{} {}`, "BAD_REQUEST", nil},
		}
		for _, tt := range tests {
			r := e.REST("POST", depPath, m.TestSecret, tt.body).Expect(400)
			got := r.Fields()
			sort.Strings(got)
			sort.Strings(tt.fields)
			if r.Code() != tt.code || !slices.Equal(got, tt.fields) {
				t.Errorf("%s: code %s, fields %v; want %s %v", tt.body, r.Code(), got, tt.code, tt.fields)
			}
		}

		// Accounts the caller cannot see are unknown, never forbidden.
		o := e.Merchant("Bola Foods")
		for _, tt := range []struct{ key, number string }{
			{m.TestSecret, "0123456789"}, // nobody's
			{o.TestSecret, num},          // another merchant's
			{m.LiveSecret, num},          // the merchant's other mode's
		} {
			r := e.REST("POST", depPath, tt.key, map[string]any{"account_number": tt.number, "amount": 10})
			if r.Status != 404 || r.Code() != "NOT_FOUND" {
				t.Errorf("%s: %d %s", tt.number, r.Status, r.Body)
			}
		}
		// A public key may not simulate transfers.
		if r := e.REST("POST", depPath, m.TestPublic, map[string]any{"account_number": num, "amount": 10}); r.Status != 403 || r.Code() != "FORBIDDEN" {
			t.Errorf("public key: %d %s", r.Status, r.Body)
		}
		if r := e.REST("GET", depPath, m.TestSecret, nil); r.Status != 405 {
			t.Errorf("GET: %d", r.Status)
		}

		// None of it booked anything.
		for _, key := range []string{m.TestSecret, o.TestSecret, m.LiveSecret} {
			if avail, _ := depNGN(t, e, key); avail != "0" {
				t.Errorf("balance %s after refused requests", avail)
			}
		}
		ctx := tenant.System(context.Background())
		if n, err := e.App.DB.Reader().Event.Query().Count(ctx); err != nil || n != 0 {
			t.Errorf("%d events after refused requests (%v)", n, err)
		}
	})
}
