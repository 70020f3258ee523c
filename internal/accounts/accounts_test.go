package accounts

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/clock"
	"merchantpay/internal/merchants"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/internal/wallets"
)

// scripted proposes the given numbers first, then the sandbox's.
type scripted struct {
	rails.Rails
	mu      sync.Mutex
	numbers []string
}

func (s *scripted) IssueAccountNumber(ctx context.Context, req rails.IssueRequest) (rails.Issued, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.numbers) > 0 {
		n := s.numbers[0]
		s.numbers = s.numbers[1:]
		b := s.IssuingBank()
		return rails.Issued{AccountNumber: n, BankCode: b.Code, BankName: b.Name}, nil
	}
	return s.Rails.IssueAccountNumber(ctx, req)
}

func (s *scripted) script(numbers ...string) {
	s.mu.Lock()
	s.numbers = numbers
	s.mu.Unlock()
}

type fixture struct {
	db    *store.DB
	svc   *Service
	rails *scripted
	clock *clock.Fake
	a, b  context.Context // two merchants' test-mode contexts
}

func setup(t *testing.T, url string) *fixture {
	t.Helper()
	db := testdb.Open(t, url)
	c := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	dir, err := banks.Load()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := rails.NewSandbox(dir, c, rails.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &scripted{Rails: sb}
	ms := merchants.New(db, c)
	f := &fixture{db: db, rails: r, clock: c, svc: New(db, c, r, wallets.New(db, c))}
	for i, name := range []string{"Ada Stores", "Bola Foods"} {
		m, err := ms.Create(context.Background(), name, "ops@example.com")
		if err != nil {
			t.Fatal(err)
		}
		ctx := tenant.With(context.Background(), tenant.Tenant{MerchantID: m.MerchantID, Mode: tenant.Test})
		if i == 0 {
			f.a = ctx
		} else {
			f.b = ctx
		}
	}
	return f
}

func str(s string) *string { return &s }

func walletInput(ref string) wallets.CreateInput {
	return wallets.CreateInput{Reference: str(ref), Phone: str("+2348012345678"), Firstname: str("Chioma"),
		Lastname: str("Okafor"), Email: str("chioma@example.com"), Documents: []wallets.Document{{
			DocumentType: str("NIN"), DocumentFile: str("https://example.com/nin.png"),
			DocumentFileType: str("url"), DocumentNo: str("12345678901")}}}
}

func TestIssueRetriesOnAccountNumberCollision(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		f := setup(t, url)
		taken, _ := banks.MakeNUBAN("035", 123456789)
		free, _ := banks.MakeNUBAN("035", 987654321)

		f.rails.script(taken)
		first, err := f.svc.CreateGlobal(f.a, nil, CreateInput{}, "")
		if err != nil || first.AccountNumber != taken {
			t.Fatalf("first account: %v %v", first, err)
		}
		if first.AccountName != "Ada Stores" || first.AccountType != StaticDynamic || first.WalletID != nil {
			t.Fatalf("global account: %+v", first)
		}

		// Inside an outer transaction, as a REST request runs: two
		// collisions (one with another merchant's number) must neither abort
		// the transaction nor lose the wallet created before them.
		f.rails.script(taken, taken, free)
		var acc *ent.FiatAccount
		err = f.db.Within(f.b, nil, func(ctx context.Context, tx *ent.Tx) error {
			var err error
			_, acc, err = f.svc.CreateWallet(ctx, tx, walletInput("w-1"),
				&CreateInput{AccountType: str(Static), Currency: str("NGN"), Reference: str("acc-1")})
			return err
		})
		if err != nil || acc.AccountNumber != free {
			t.Fatalf("after collisions: %v %v", acc, err)
		}
		if acc.AccountName != "Bola Foods / Chioma Okafor" || acc.WalletReference == nil || *acc.WalletReference != "w-1" {
			t.Fatalf("account on wallet: %+v", acc)
		}
		if got, err := f.svc.ByNumber(f.a, nil, free); err != nil || got.ID != acc.ID {
			t.Fatalf("ByNumber across merchants: %v %v", got, err)
		}

		// A duplicate reference is told apart from a number collision.
		f.rails.script(taken)
		_, err = f.svc.CreateGlobal(f.b, nil, CreateInput{Reference: str("acc-1")}, "")
		if ae := apperr.As(err); ae.Kind != apperr.DuplicateReference || ae.Fields[0].Field != "account_reference" {
			t.Fatalf("duplicate reference: %v", err)
		}

		// Collisions without end give up instead of looping.
		f.rails.script(taken, taken, taken, taken, taken, taken, taken, taken, taken)
		if _, err := f.svc.CreateGlobal(f.a, nil, CreateInput{}, ""); err == nil || apperr.KindOf(err) != apperr.Internal {
			t.Fatalf("endless collisions: %v", err)
		}
	})
}

func TestByNumberAndClose(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		f := setup(t, url)
		if _, err := f.svc.wallets.Create(f.a, nil, walletInput("w"), nil); err != nil {
			t.Fatal(err)
		}
		a, err := f.svc.Create(f.a, nil, "w", CreateInput{AccountType: str(Dynamic), Currency: str("NGN"),
			Amount: ptr(decimal.RequireFromString("2500.50")), ExpiresAt: ptr(decimal.NewFromInt(30))}, "")
		if err != nil {
			t.Fatal(err)
		}
		if *a.Amount != 250050 || *a.RejectAmountCriteria != CriteriaNotEqual || a.Status != StatusActive {
			t.Fatalf("dynamic account: %+v", a)
		}
		if !a.ExpiresAt.Equal(a.CreatedAt.Add(30 * time.Minute)) {
			t.Fatalf("expires_at %v, created %v", a.ExpiresAt, a.CreatedAt)
		}
		if Expired(a, a.CreatedAt.Add(29*time.Minute)) || !Expired(a, a.CreatedAt.Add(30*time.Minute)) {
			t.Fatal("Expired is wrong around expires_at")
		}
		if _, err := f.svc.ByNumber(f.b, nil, "0000000000"); apperr.KindOf(err) != apperr.NotFound {
			t.Fatalf("unknown number: %v", err)
		}
		// Another merchant's ByNumber sees the account system-wide, even
		// inside its own transaction.
		err = f.db.Within(f.b, nil, func(ctx context.Context, tx *ent.Tx) error {
			got, err := f.svc.ByNumber(ctx, tx, a.AccountNumber)
			if owner, _ := tenant.From(f.a); err == nil && (got.MerchantID != owner.MerchantID || got.Mode != tenant.Test) {
				t.Errorf("account of %s/%s, want %s/test", got.MerchantID, got.Mode, owner.MerchantID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}

		// Two deposits racing to close the account: exactly one wins.
		var wg sync.WaitGroup
		results := make(chan bool, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := f.db.Within(f.a, nil, func(ctx context.Context, tx *ent.Tx) error {
					closed, err := f.svc.Close(ctx, tx, a)
					results <- closed
					return err
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		close(results)
		won := 0
		for r := range results {
			if r {
				won++
			}
		}
		if won != 1 {
			t.Fatalf("%d closes succeeded, want 1", won)
		}
		// Another merchant cannot close it, in its own transaction.
		b, _ := f.svc.CreateGlobal(f.a, nil, CreateInput{}, "")
		err = f.db.Within(f.b, nil, func(ctx context.Context, tx *ent.Tx) error {
			closed, err := f.svc.Close(ctx, tx, b)
			if err == nil && closed {
				t.Error("another merchant closed the account")
			}
			return err
		})
		if err != nil {
			t.Fatalf("another merchant's close: %v", err)
		}
	})
}

func TestAccountName(t *testing.T) {
	for _, tc := range []struct{ merchant, holder, want string }{
		{"Ada Stores", "Chioma Okafor", "Ada Stores / Chioma Okafor"},
		{"  Ada   Stores ", " Chioma  Okafor", "Ada Stores / Chioma Okafor"},
		{"Ada Stores", "", "Ada Stores"},
		{strings.Repeat("M", 80), "Chioma Okafor", strings.Repeat("M", 48) + " / Chioma Okafor"},
		{"Ada Stores", strings.Repeat("H", 80), "Ada Stores / " + strings.Repeat("H", 51)},
	} {
		got := AccountName(tc.merchant, tc.holder)
		if got != tc.want || utf8.RuneCountInString(got) > MaxNameLength {
			t.Errorf("AccountName(%q, %q) = %q, want %q", tc.merchant, tc.holder, got, tc.want)
		}
	}
}

func TestAmountRejected(t *testing.T) {
	for _, tc := range []struct {
		criteria     string
		below, equal bool
		above        bool
	}{
		{CriteriaNotEqual, true, false, true},
		{CriteriaGreaterThanOnly, false, false, true},
		{CriteriaLessThanOnly, true, false, false},
		{CriteriaNone, false, false, false},
	} {
		if AmountRejected(tc.criteria, 1000, 999) != tc.below || AmountRejected(tc.criteria, 1000, 1000) != tc.equal ||
			AmountRejected(tc.criteria, 1000, 1001) != tc.above {
			t.Errorf("%s: wrong", tc.criteria)
		}
	}
}

func TestValidateNamesEveryField(t *testing.T) {
	d := func(s string) *decimal.Decimal { return ptr(decimal.RequireFromString(s)) }
	for _, tc := range []struct {
		name string
		in   CreateInput
		want string
	}{
		{"empty", CreateInput{}, "account_type,currency"},
		{"dynamic bare", CreateInput{AccountType: str(Dynamic), Currency: str("NGN")}, "amount,expires_at"},
		{"dynamic all bad", CreateInput{AccountType: str(Dynamic), Currency: str("GHS"), Reference: str("bad ref"),
			Amount: d("1.001"), ExpiresAt: d("1.5"), RejectAmountCriteria: str("EQUAL")},
			"account_reference,currency,amount,expires_at,reject_amount_criteria"},
		{"static extras", CreateInput{AccountType: str(Static), Currency: str("NGN"), Amount: d("10"),
			ExpiresAt: d("10"), RejectAmountCriteria: str(CriteriaNone)}, "amount,expires_at,reject_amount_criteria"},
		{"expiry 0", CreateInput{AccountType: str(Dynamic), Currency: str("NGN"), Amount: d("10"), ExpiresAt: d("0")}, "expires_at"},
		{"expiry 61", CreateInput{AccountType: str(Dynamic), Currency: str("NGN"), Amount: d("10"), ExpiresAt: d("61")}, "expires_at"},
		{"expiry 60", CreateInput{AccountType: str(Dynamic), Currency: str("NGN"), Amount: d("10"), ExpiresAt: d("60.0")}, ""},
		{"amount 0", CreateInput{AccountType: str(Dynamic), Currency: str("NGN"), Amount: d("0"), ExpiresAt: d("1")}, "amount"},
	} {
		var f apperr.Fields
		Validate(tc.in, "", &f)
		var got []string
		for _, e := range f.List() {
			got = append(got, e.Field)
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%s: fields %v, want %s", tc.name, got, tc.want)
		}
	}
}
