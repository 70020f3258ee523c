package deposits

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"merchantpay/ent/transaction"
	"merchantpay/internal/accounts"
	"merchantpay/internal/ledger/ledgertest"
	"merchantpay/internal/money"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

// TestInflowThatCannotBeRefunded: on rails that cannot send money back, a
// narration reference that cannot be kept is dropped and the deposit
// credited, and a transfer the account's rules refuse is not booked at all
// (never "refunded"); rails that can refund still refund.
func TestInflowThatCannotBeRefunded(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		f := setup(t, url)
		s := f.service(t, Config{Fee: Fee{Flat: dec("10")}})
		acc, err := f.acc.CreateGlobal(f.ada, nil, accounts.CreateInput{}, "")
		if err != nil {
			t.Fatal(err)
		}
		sys := tenant.System(context.Background())
		in := func(narration, amount string) Transfer {
			return Transfer{AccountNumber: acc.AccountNumber, Amount: dec(amount), Narration: narration, NoRefund: true}
		}

		first, err := s.ReceiveInflow(sys, nil, in("pay !!inv-77!!", "100"))
		if err != nil || first.RefDropped != "" || first.Transaction.MerchantReference == nil || *first.Transaction.MerchantReference != "inv-77" {
			t.Fatalf("first inflow: %+v %v", first, err)
		}
		// The reference is taken: credited without it, the narration kept.
		again, err := s.ReceiveInflow(sys, nil, in("again !!INV-77!!", "100"))
		if err != nil {
			t.Fatal(err)
		}
		if d := again.Transaction; d.Status != StatusSuccess || d.MerchantReference != nil || d.RejectReason != nil ||
			d.Narration != "again !!INV-77!!" || d.AmountSettled != 90_00 || !strings.Contains(again.RefDropped, "already used") {
			t.Fatalf("inflow under a taken reference: %+v, dropped %q", d, again.RefDropped)
		}
		// A reference of the form of the service's own: credited without it.
		svc, err := s.ReceiveInflow(sys, nil, in("!!DEP-"+uuid.NewString()+"!!", "100"))
		if err != nil || svc.Transaction.Status != StatusSuccess || svc.Transaction.MerchantReference != nil ||
			!strings.Contains(svc.RefDropped, "service's own") {
			t.Fatalf("inflow under a service-form reference: %+v %v", svc, err)
		}
		// Below the fee: the account's rules refuse it; nothing is booked.
		before, err := f.db.Reader().Transaction.Query().Count(sys)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.ReceiveInflow(sys, nil, in("small", "5"))
		var nc *NotCredited
		if !errors.As(err, &nc) || !strings.Contains(nc.Reason, "fee") {
			t.Fatalf("inflow below the fee: %v, want *NotCredited", err)
		}
		if after, err := f.db.Reader().Transaction.Query().Count(sys); err != nil || after != before {
			t.Fatalf("transactions %d -> %d (%v): an unbooked inflow wrote a row", before, after, err)
		}
		if b, err := ledgertest.Balance(f.ada, f.l, money.NGN); err != nil || b.Available != 3*90_00 {
			t.Fatalf("balance %+v %v, want 270.00", b, err)
		}

		// Rails that can refund (the sandbox) still refund both cases.
		tr := in("once more !!inv-77!!", "100")
		tr.NoRefund = false
		d, err := s.Receive(sys, nil, tr)
		if err != nil || d.Status != StatusRefunded || d.RejectReason == nil {
			t.Fatalf("sandbox transfer under a taken reference: %+v %v", d, err)
		}
		tr = in("small", "5")
		tr.NoRefund = false
		if d, err := s.Receive(sys, nil, tr); err != nil || d.Status != StatusRefunded {
			t.Fatalf("sandbox transfer below the fee: %+v %v", d, err)
		}
		if n, err := f.db.Reader().Transaction.Query().Where(transaction.StatusEQ(StatusRefunded)).Count(sys); err != nil || n != 2 {
			t.Fatalf("%d refunded deposits (%v), want the 2 sandbox ones", n, err)
		}
	})
}
