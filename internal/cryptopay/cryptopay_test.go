package cryptopay

import (
	"bytes"
	"image/png"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/events"
	"merchantpay/internal/money"
)

func TestFee(t *testing.T) {
	f := Fee{Percent: decimal.RequireFromString("1.5"), Flat: map[money.Currency]decimal.Decimal{money.NGN: decimal.New(50, 0)}}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		amount int64
		cur    money.Currency
		want   int64
	}{
		{100000, money.NGN, 5000 + 1500}, // 1000 NGN: 50 + 15
		{1, money.NGN, 5000},             // 1.5% of 0.01 rounds down to 0
		{1_000_000, money.USDT, 15_000},  // no flat fee in USDT
	}
	for _, c := range cases {
		if got, err := f.On(c.amount, c.cur); err != nil || got != c.want {
			t.Errorf("On(%d %s) = %d, %v; want %d", c.amount, c.cur, got, err, c.want)
		}
	}
	if got, _ := (Fee{}).On(12345, money.BTC); got != 0 {
		t.Errorf("zero fee charged %d", got)
	}
	for _, bad := range []Fee{
		{Percent: decimal.New(100, 0)},
		{Percent: decimal.New(-1, 0)},
		{Flat: map[money.Currency]decimal.Decimal{money.NGN: decimal.RequireFromString("0.001")}},
		{Flat: map[money.Currency]decimal.Decimal{"XYZ": decimal.New(1, 0)}},
		{Flat: map[money.Currency]decimal.Decimal{money.USD: decimal.New(-1, 0)}},
	} {
		if bad.Validate() == nil {
			t.Errorf("fee %+v accepted", bad)
		}
	}
}

func TestNewChecksConfig(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{PublicBaseURL: "localhost:8080"},
		{PublicBaseURL: "http://x", Lifetime: 61 * time.Minute},
		{PublicBaseURL: "http://x", Lifetime: time.Second},
		{PublicBaseURL: "http://x", Fee: Fee{Percent: decimal.New(200, 0)}},
	} {
		if _, err := New(nil, nil, nil, nil, nil, cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
	s, err := New(nil, nil, nil, nil, nil, Config{PublicBaseURL: "https://pay.example/"})
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.Lifetime != DefaultLifetime || s.CheckoutURL("ab") != "https://pay.example/checkout/ab" {
		t.Errorf("defaults: %+v", s.cfg)
	}
}

func fields(in DepositInput) []string {
	var f apperr.Fields
	ValidateDeposit(in, &f)
	var out []string
	for _, e := range f.List() {
		out = append(out, e.Field)
	}
	slices.Sort(out)
	return out
}

func TestValidateDeposit(t *testing.T) {
	s := func(v string) *string { return &v }
	d := func(v string) *decimal.Decimal { x := decimal.RequireFromString(v); return &x }
	ok := DepositInput{DepositMethod: s("crypto-pay"), ProductName: s("Mug"), Amount: d("1"), Currency: s("USDT")}
	if got := fields(ok); len(got) != 0 {
		t.Errorf("valid direct deposit: %v", got)
	}
	cross := DepositInput{DepositMethod: s("crypto-pay"), ProductName: s("Mug"), RateReference: s("q"), FeeBearer: s("beneficiary")}
	if got := fields(cross); len(got) != 0 {
		t.Errorf("valid cross deposit: %v", got)
	}
	cases := []struct {
		name string
		in   DepositInput
		want []string
	}{
		{"empty rate reference", DepositInput{DepositMethod: s("crypto-pay"), ProductName: s("Mug"), RateReference: s(" ")}, []string{"rate_reference"}},
		{"long product", DepositInput{DepositMethod: s("crypto-pay"), ProductName: s(string(bytes.Repeat([]byte("é"), 201))),
			Amount: d("1"), Currency: s("NGN")}, []string{"requirement.product_name"}},
		{"NUL in description", DepositInput{DepositMethod: s("crypto-pay"), ProductName: s("Mug"), ProductDescription: s("a\x00b"),
			Amount: d("1"), Currency: s("NGN")}, []string{"requirement.product_description"}},
		{"amount over the limit", DepositInput{DepositMethod: s("crypto-pay"), ProductName: s("Mug"), Amount: d("10000000001"),
			Currency: s("NGN")}, []string{"amount"}},
		{"negative amount, bad currency", DepositInput{DepositMethod: s("crypto-pay"), ProductName: s("Mug"), Amount: d("-1"),
			Currency: s("ngn")}, []string{"amount", "currency"}},
		{"missing method", DepositInput{ProductName: s("Mug"), Amount: d("1"), Currency: s("NGN")}, []string{"deposit_method"}},
	}
	for _, c := range cases {
		if got := fields(c.in); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRedirect(t *testing.T) {
	st := stored{Links: Links{SuccessURL: "https://shop.example/ok?order=1#top", FailureURL: "https://shop.example/ko",
		MerchantReference: "Order-1"}}
	m, err := st.toMap()
	if err != nil {
		t.Fatal(err)
	}
	id := "0123456789abcdef0123456789abcdef"
	tx := &ent.Transaction{PrepayID: &id, Links: m, Status: StatusSuccess}
	u, err := url.Parse(Redirect(tx))
	if err != nil || u.Host != "shop.example" || u.Path != "/ok" || u.Fragment != "top" {
		t.Fatalf("success redirect %v", u)
	}
	if q := u.Query(); q.Get("order") != "1" || q.Get("prepay_id") != id || q.Get("reference") != "Order-1" || q.Get("status") != "success" {
		t.Errorf("query %v", q)
	}
	tx.Status = StatusFailed
	if got := Redirect(tx); got != "https://shop.example/ko?prepay_id="+id+"&reference=Order-1&status=failed" {
		t.Errorf("failure redirect %q", got)
	}
	tx.Links = map[string]any{}
	if got := Redirect(tx); got != "" {
		t.Errorf("redirect without URLs: %q", got)
	}
}

func TestQRCode(t *testing.T) {
	b, err := QRCode("https://pay.example/checkout/0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if r := img.Bounds(); r.Dx() != r.Dy() || r.Dx() < 100 {
		t.Errorf("bounds %v", r)
	}
}

func TestPrepayID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id, err := newPrepayID()
		if err != nil || !validPrepayID(id) || seen[id] {
			t.Fatalf("prepay id %q, %v", id, err)
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "ABCDEF0123456789abcdef0123456789", "0123456789abcdef0123456789abcde", "../../../etc/passwd"} {
		if validPrepayID(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestEventType(t *testing.T) {
	to := int64(1)
	cases := []struct {
		status string
		cross  bool
		want   string
	}{
		{StatusPending, false, events.DepositPending}, {StatusSuccess, false, events.DepositSuccess},
		{StatusFailed, false, events.DepositFailed}, {StatusPending, true, events.SwapPending},
		{StatusSuccess, true, events.SwapSuccess}, {StatusFailed, true, events.SwapFailed},
	}
	for _, c := range cases {
		tx := &ent.Transaction{Status: c.status}
		if c.cross {
			tx.ToAmount = &to
		}
		if got := eventType(tx); got != c.want {
			t.Errorf("%s cross=%v: %s, want %s", c.status, c.cross, got, c.want)
		}
	}
}
