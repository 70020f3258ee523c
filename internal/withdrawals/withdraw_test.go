package withdrawals_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/ent/transaction"
	"merchantpay/internal/apperr"
	"merchantpay/internal/idem"
	"merchantpay/internal/ledger"
	"merchantpay/internal/ledger/ledgertest"
	"merchantpay/internal/tenant"
	"merchantpay/internal/withdrawals"
	"merchantpay/server/servertest"
)

// withdraw runs one withdrawal as the REST API does, Withdraw inside
// idem.Store.Do: the answer is rendered from its outcome, a refusal's with
// a part no second rendering would repeat, so that a replay shows the
// stored bytes.
func withdraw(e *servertest.Env, tn tenant.Tenant, key string, in withdrawals.Input) (idem.Response, bool, error) {
	ctx := tenant.With(context.Background(), tn)
	ref := ""
	if in.Reference != nil {
		ref = *in.Reference
	}
	req := idem.Request{Tenant: tn, Key: key, Hash: idem.HashRequest("POST", "/withdraw", []byte(in.Amount.String()+" "+ref))}
	return e.App.Idem.Do(ctx, req, func(ctx context.Context, tx *ent.Tx) (idem.Response, bool) {
		t, err := e.App.Withdrawals.Withdraw(ctx, tx, in)
		if err != nil {
			ae := apperr.As(err)
			return idem.Response{Status: ae.Kind.Status(), Body: []byte(string(ae.Kind) + " " + uuid.NewString())}, false
		}
		return idem.Response{Status: 200, Body: []byte(t.Reference + " " + uuid.NewString())}, true
	})
}

// wdInput is a direct NGN withdrawal of amount whose fee the
// beneficiary bears: it charges the merchant exactly amount.
func wdInput(bank string, amount int, ref string) withdrawals.Input {
	s := func(v string) *string { return &v }
	d := decimal.NewFromInt(int64(amount))
	in := withdrawals.Input{Amount: &d, Currency: s("NGN"), FeeBearer: s("beneficiary"),
		Beneficiary: &withdrawals.Beneficiary{Email: s("ada.obi@example.com"), Bank: s(bank),
			AccountName: s("Ada Obi"), AccountNumber: s("0123456789")}}
	if ref != "" {
		in.Reference = &ref
	}
	return in
}

func ngBank(t *testing.T, e *servertest.Env, m servertest.Merchant) string {
	t.Helper()
	return e.REST("GET", "/misc/banks?country=NG", m.TestSecret, nil).Expect(200).List()[0].(map[string]any)["code"].(string)
}

// TestWithdrawAtOnce: 200 withdrawals at once, half of them keyed,
// against a balance that covers exactly 100: exactly 100 are accepted and
// 100 refused INSUFFICIENT_BALANCE, the balance ends at zero, each
// accepted one has its row and its event, the ledger's invariants hold,
// and every keyed one replays its stored answer byte for byte.
func TestWithdrawAtOnce(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Many At Once")
		bank := ngBank(t, e, m)
		tn := tenant.Tenant{MerchantID: m.ID, Mode: tenant.Test}
		e.REST("POST", "/sandbox/balances/fund", m.TestSecret, map[string]any{"currency": "NGN", "amount": 10_000}).Expect(200)

		const n = 200
		type result struct {
			resp idem.Response
			err  error
		}
		res := make([]result, n)
		key := func(i int) string {
			if i%2 == 0 {
				return fmt.Sprint("many-", i)
			}
			return ""
		}
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, _, err := withdraw(e, tn, key(i), wdInput(bank, 100, ""))
				res[i] = result{resp, err}
			}()
		}
		wg.Wait()
		count := map[string]int{}
		for _, r := range res {
			switch {
			case r.err != nil:
				count[r.err.Error()]++
			case r.resp.Status == 200:
				count["ok"]++
			default:
				count[string(r.resp.Body[:len(apperr.InsufficientBalance)])]++
			}
		}
		if count["ok"] != 100 || count[string(apperr.InsufficientBalance)] != 100 {
			t.Fatalf("outcomes %v, want 100 accepted and 100 %s", count, apperr.InsufficientBalance)
		}
		b, err := ledgertest.Balance(tenant.With(context.Background(), tn), e.App.Ledger, "NGN")
		if err != nil || b.Available != 0 {
			t.Fatalf("balance %+v, %v; want 0", b, err)
		}
		ctx := tenant.System(context.Background())
		c := e.App.DB.Reader()
		if got, err := c.Transaction.Query().Where(transaction.MerchantID(m.ID), transaction.Type(withdrawals.Type)).Count(ctx); err != nil || got != 100 {
			t.Errorf("%d withdrawals (%v), want 100", got, err)
		}
		if got, err := c.Event.Query().Where(event.MerchantID(m.ID), event.Type("withdrawal.pending")).Count(ctx); err != nil || got != 100 {
			t.Errorf("%d withdrawal.pending events (%v), want 100", got, err)
		}
		if err := ledger.Check(ctx, e.App.DB); err != nil {
			t.Fatalf("ledger invariants: %v", err)
		}
		for i := 0; i < n; i += 2 {
			again, replayed, err := withdraw(e, tn, key(i), wdInput(bank, 100, ""))
			if err != nil || !replayed || again.Status != res[i].resp.Status || string(again.Body) != string(res[i].resp.Body) {
				t.Fatalf("key %s: %d %q, replayed %v as %d %q (%v)", key(i), res[i].resp.Status, res[i].resp.Body,
					replayed, again.Status, again.Body, err)
			}
		}
	})
}

// TestWithdrawReferencesAtOnce: withdrawals at once that share a merchant
// reference, and one whose reference was taken before: exactly one of the
// sharers is accepted, every other is refused DUPLICATE_REFERENCE, the
// others are accepted, and keyed answers, refusals included, replay.
func TestWithdrawReferencesAtOnce(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Refs At Once")
		bank := ngBank(t, e, m)
		tn := tenant.Tenant{MerchantID: m.ID, Mode: tenant.Test}
		e.REST("POST", "/sandbox/balances/fund", m.TestSecret, map[string]any{"currency": "NGN", "amount": 10_000}).Expect(200)
		if r, _, err := withdraw(e, tn, "", wdInput(bank, 100, "Taken")); err != nil || r.Status != 200 {
			t.Fatalf("first: %d %s %v", r.Status, r.Body, err)
		}

		refs := []string{"taken", "shared", "SHARED", "shared", "own-1", "own-2", "", ""}
		res := make([]idem.Response, len(refs))
		var wg sync.WaitGroup
		for i, ref := range refs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, _, err := withdraw(e, tn, fmt.Sprint("ref-", i), wdInput(bank, 100, ref))
				if err != nil {
					t.Error(err)
				}
				res[i] = r
			}()
		}
		wg.Wait()
		dup, ok := 0, 0
		for i, r := range res {
			switch {
			case r.Status == 200:
				ok++
			case string(r.Body[:len(apperr.DuplicateReference)]) == string(apperr.DuplicateReference):
				dup++
				if refs[i] != "taken" && refs[i] != "shared" && refs[i] != "SHARED" {
					t.Errorf("%q refused: %s", refs[i], r.Body)
				}
			default:
				t.Errorf("%q: %d %s", refs[i], r.Status, r.Body)
			}
		}
		if ok != 5 || dup != 3 {
			t.Fatalf("%d accepted, %d duplicates; want 5 and 3", ok, dup)
		}
		for i, ref := range refs {
			again, replayed, err := withdraw(e, tn, fmt.Sprint("ref-", i), wdInput(bank, 100, ref))
			if err != nil || !replayed || string(again.Body) != string(res[i].Body) {
				t.Errorf("%q replayed %v as %q, first %q (%v)", ref, replayed, again.Body, res[i].Body, err)
			}
		}
		b, err := ledgertest.Balance(tenant.With(context.Background(), tn), e.App.Ledger, "NGN")
		if err != nil || b.Available != 10_000*100-6*100*100 {
			t.Fatalf("balance %+v, %v", b, err)
		}
		if err := ledger.Check(tenant.System(context.Background()), e.App.DB); err != nil {
			t.Fatal(err)
		}
	})
}

// TestWithdrawInHandedTransaction: Withdraw writes in the transaction it is
// handed and in no other (its context carries none): rolled back, that
// transaction leaves no row, event or debit; committed, all three. Handed
// none, Withdraw opens and commits its own, and a refusal leaves nothing.
func TestWithdrawInHandedTransaction(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Handed Transaction")
		bank := ngBank(t, e, m)
		tn := tenant.Tenant{MerchantID: m.ID, Mode: tenant.Test}
		e.REST("POST", "/sandbox/balances/fund", m.TestSecret, map[string]any{"currency": "NGN", "amount": 1_000}).Expect(200)
		ctx := tenant.With(context.Background(), tn)
		expect := func(what string, rows int, available int64) {
			t.Helper()
			sys := tenant.System(context.Background())
			c := e.App.DB.Reader()
			if got, err := c.Transaction.Query().Where(transaction.MerchantID(m.ID), transaction.Type(withdrawals.Type)).Count(sys); err != nil || got != rows {
				t.Errorf("%s: %d withdrawals (%v), want %d", what, got, err, rows)
			}
			if got, err := c.Event.Query().Where(event.MerchantID(m.ID), event.Type("withdrawal.pending")).Count(sys); err != nil || got != rows {
				t.Errorf("%s: %d withdrawal.pending events (%v), want %d", what, got, err, rows)
			}
			if b, err := ledgertest.Balance(ctx, e.App.Ledger, "NGN"); err != nil || b.Available != available {
				t.Errorf("%s: balance %+v (%v), want %d available", what, b, err, available)
			}
		}
		handed := func(ref string, commit bool) {
			// On SQLite the handed transaction holds the one writer: a
			// Withdraw that began another would wait for it until this
			// deadline.
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			ctx, tx, err := e.App.DB.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.App.Withdrawals.Withdraw(ctx, tx, wdInput(bank, 100, ref)); err != nil {
				_ = tx.Rollback()
				t.Fatalf("%s: %v", ref, err)
			}
			if commit {
				err = tx.Commit()
			} else {
				err = tx.Rollback()
			}
			if err != nil {
				t.Fatal(err)
			}
		}

		handed("rolled-back", false)
		expect("a handed transaction rolled back", 0, 100_000)
		handed("committed", true)
		expect("a handed transaction committed", 1, 90_000)
		if _, err := e.App.Withdrawals.Withdraw(ctx, nil, wdInput(bank, 100, "own")); err != nil {
			t.Fatal(err)
		}
		expect("its own transaction", 2, 80_000)
		if _, err := e.App.Withdrawals.Withdraw(ctx, nil, wdInput(bank, 1_000, "")); !apperr.Is(err, apperr.InsufficientBalance) {
			t.Fatalf("a withdrawal over the balance: %v", err)
		}
		expect("a refusal in its own transaction", 2, 80_000)
		if err := ledger.Check(tenant.System(context.Background()), e.App.DB); err != nil {
			t.Fatal(err)
		}
	})
}
