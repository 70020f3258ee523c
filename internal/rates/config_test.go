package rates

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/ent/schematype"
	"merchantpay/internal/clock"
	"merchantpay/internal/money"
	"merchantpay/internal/pricing"
	"merchantpay/internal/testdb"
)

func TestDefaultPairs(t *testing.T) {
	pairs, err := DefaultPairs()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]PairConfig{}
	for _, p := range pairs {
		got[p.Pair.String()] = p
		for _, tt := range TxTypes() {
			if _, ok := p.Fees[tt]; !ok {
				t.Errorf("%s has no %s fee", p.Pair, tt)
			}
		}
		if !p.DefaultEnabled {
			t.Errorf("%s is not enabled by default (the sandbox enables all)", p.Pair)
		}
	}
	for _, a := range []string{"USDT", "USDC", "BTC", "ETH", "USD"} {
		for _, f := range []string{"NGN", "GHS"} {
			if _, ok := got[a+"/"+f]; !ok {
				t.Errorf("default lacks %s/%s", a, f)
			}
		}
	}
	if len(pairs) != 10 {
		t.Errorf("%d default pairs, want 10", len(pairs))
	}
	// Realistic mids: a sanity band around the market in late 2026.
	bands := map[string][2]int64{
		"USDT/NGN": {1000, 3000}, "BTC/NGN": {50_000_000, 300_000_000}, "USD/GHS": {8, 30},
		"ETH/NGN": {1_000_000, 20_000_000}, "USDC/GHS": {8, 30},
	}
	for id, b := range bands {
		m := got[id].Mid
		if m.LessThan(decimal.New(b[0], 0)) || m.GreaterThan(decimal.New(b[1], 0)) {
			t.Errorf("%s mid %s outside %v", id, m, b)
		}
	}
}

func TestParsePairsErrors(t *testing.T) {
	fees := `"fees": {"swap": {"type": "PERCENTAGE", "value": "0.5"}, "deposit": {"type": "PERCENTAGE", "value": 1}, "withdrawal": {"type": "FLAT", "value": 100}}`
	tests := []struct{ name, json, want string }{
		{"not json", `{`, "pairs config"},
		{"no pairs", `{"pairs": []}`, "no pairs"},
		{"unknown field", `{"pairs": [{"id": "USDT/NGN", "mid": 1, "spread": 0, "colour": "red", ` + fees + `}]}`, "colour"},
		{"bad id", `{"pairs": [{"id": "NGN/USDT", "mid": 1, "spread": 0, ` + fees + `}]}`, "quote side must be fiat"},
		{"asset mismatch", `{"pairs": [{"id": "USDT/NGN", "asset": "BTC", "mid": 1, "spread": 0, ` + fees + `}]}`, "asset"},
		{"zero mid", `{"pairs": [{"id": "USDT/NGN", "mid": 0, "spread": 0, ` + fees + `}]}`, "mid"},
		{"spread of 1", `{"pairs": [{"id": "USDT/NGN", "mid": 1, "spread": 1, ` + fees + `}]}`, "spread"},
		{"missing fee", `{"pairs": [{"id": "USDT/NGN", "mid": 1, "spread": 0, "fees": {"swap": {"type": "FLAT", "value": 1}}}]}`, "fees.deposit"},
		{"unknown fee type", `{"pairs": [{"id": "USDT/NGN", "mid": 1, "spread": 0, "fees": {"swap": {"type": "CUT", "value": 1}, "deposit": {"type": "FLAT", "value": 1}, "withdrawal": {"type": "FLAT", "value": 1}}}]}`, "fees.swap"},
		{"unknown transaction type", `{"pairs": [{"id": "USDT/NGN", "mid": 1, "spread": 0, "fees": {"swap": {"type": "FLAT", "value": 1}, "deposit": {"type": "FLAT", "value": 1}, "withdrawal": {"type": "FLAT", "value": 1}, "refund": {"type": "FLAT", "value": 1}}}]}`, "refund"},
		{"flat fee off the fiat grid", `{"pairs": [{"id": "USDT/NGN", "mid": 1, "spread": 0, "fees": {"swap": {"type": "FLAT", "value": 0.001}, "deposit": {"type": "FLAT", "value": 1}, "withdrawal": {"type": "FLAT", "value": 1}}}]}`, "at most 2 decimals"},
		{"percentage of 100", `{"pairs": [{"id": "USDT/NGN", "mid": 1, "spread": 0, "fees": {"swap": {"type": "PERCENTAGE", "value": 100}, "deposit": {"type": "FLAT", "value": 1}, "withdrawal": {"type": "FLAT", "value": 1}}}]}`, "below 100"},
		{"duplicate", `{"pairs": [{"id": "USDT/NGN", "mid": 1, "spread": 0, ` + fees + `}, {"id": "USDT/NGN", "mid": 2, "spread": 0, ` + fees + `}]}`, "twice"},
	}
	for _, tt := range tests {
		_, err := ParsePairs([]byte(tt.json))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tt.name, err, tt.want)
		}
	}
	// Every bad entry is named at once.
	_, err := ParsePairs([]byte(`{"pairs": [{"id": "USDT/NGN", "mid": 0, "spread": 2, ` + fees + `}, {"id": "XYZ/NGN", "mid": 1, "spread": 0, ` + fees + `}]}`))
	for _, want := range []string{"mid", "spread", "XYZ/NGN"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("combined error %v lacks %q", err, want)
		}
	}
}

func TestParsePairsNumbersAndHash(t *testing.T) {
	asNumbers := `{"pairs": [{"id": "USDT/NGN", "mid": 1600.50, "spread": 0.005, "fees": {"swap": {"type": "PERCENTAGE", "value": 0.5}, "deposit": {"type": "PERCENTAGE", "value": 1}, "withdrawal": {"type": "FLAT", "value": 100}}}]}`
	asStrings := `{"pairs": [{"id": "USDT/NGN", "mid": "1600.5", "spread": "0.005", "fees": {"swap": {"type": "PERCENTAGE", "value": "0.5"}, "deposit": {"type": "PERCENTAGE", "value": "1"}, "withdrawal": {"type": "FLAT", "value": "100"}}, "default_enabled": true}]}`
	a, err := ParsePairs([]byte(asNumbers))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParsePairs([]byte(asStrings))
	if err != nil {
		t.Fatal(err)
	}
	if !a[0].Mid.Equal(decimal.RequireFromString("1600.5")) || a[0].Fees[Withdrawal].Type != pricing.Flat {
		t.Errorf("parsed %+v", a[0])
	}
	if a[0].Hash() != b[0].Hash() {
		t.Error("the same entry written differently hashes differently")
	}
	c := b[0]
	c.Mid = decimal.New(1601, 0)
	if c.Hash() == b[0].Hash() {
		t.Error("a changed mid keeps the hash")
	}
}

func TestLoadPairsFile(t *testing.T) {
	if _, err := LoadPairs(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("missing file accepted")
	}
	path := filepath.Join(t.TempDir(), "pairs.json")
	if err := os.WriteFile(path, defaultPairs, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadPairs(path)
	if err != nil || len(got) != 10 {
		t.Fatalf("LoadPairs = %d pairs, %v", len(got), err)
	}
	def, _ := LoadPairs("")
	if len(def) != 10 {
		t.Fatalf("LoadPairs(\"\") = %d pairs", len(def))
	}
}

// TestSeed shows how the file and the CLI interact: the file seeds missing
// pairs; a CLI change survives a restart with the same file; editing the
// pair's entry in the file applies it again; pairs left out of the file stay.
func TestSeed(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		ctx := context.Background()
		db := testdb.Open(t, url)
		svc := New(db, clock.NewFake(time.Now()), Static{}, Options{})
		pairs, err := DefaultPairs()
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.Seed(ctx, pairs)
		if err != nil || len(res.Inserted) != 10 || len(res.Updated) != 0 {
			t.Fatalf("first seed: %+v, %v", res, err)
		}
		if res, err = svc.Seed(ctx, pairs); err != nil || len(res.Inserted)+len(res.Updated) != 0 {
			t.Fatalf("second seed changed %+v, %v", res, err)
		}
		if _, err := svc.SetMid(ctx, "USDT/NGN", decimal.RequireFromString("1650.5")); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Seed(ctx, pairs); err != nil {
			t.Fatal(err)
		}
		if m := pairMid(t, svc, "USDT/NGN"); !m.Equal(decimal.RequireFromString("1650.5")) {
			t.Fatalf("CLI mid lost on restart: %s", m)
		}
		// The operator edits USDT/NGN in the file and drops ETH/GHS.
		var edited []PairConfig
		for _, p := range pairs {
			switch p.Pair.String() {
			case "USDT/NGN":
				p.Mid = decimal.New(1700, 0)
				p.Fees = map[string]pricing.FeeSpec{Swap: {Type: pricing.Flat, Value: decimal.New(50, 0)},
					Deposit: p.Fees[Deposit], Withdrawal: p.Fees[Withdrawal]}
			case "ETH/GHS":
				continue
			}
			edited = append(edited, p)
		}
		res, err = svc.Seed(ctx, edited)
		if err != nil || len(res.Updated) != 1 || res.Updated[0] != "USDT/NGN" || len(res.Inserted) != 0 {
			t.Fatalf("edited seed: %+v, %v", res, err)
		}
		if m := pairMid(t, svc, "USDT/NGN"); !m.Equal(decimal.New(1700, 0)) {
			t.Fatalf("edited file entry not applied: mid %s", m)
		}
		row := pairRow(t, svc, "USDT/NGN")
		if f := row.Fees[Swap]; f.Type != "FLAT" || !f.Value.Equal(decimal.New(50, 0)) {
			t.Fatalf("edited fee not applied: %+v", f)
		}
		if pairRow(t, svc, "ETH/GHS") == nil {
			t.Fatal("a pair left out of the file disappeared")
		}
	})
}

func pairRow(t *testing.T, svc *Service, id string) *ent.Pair {
	t.Helper()
	rows, err := svc.ListPairs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.ID == id {
			return r
		}
	}
	return nil
}

func pairMid(t *testing.T, svc *Service, id string) decimal.Decimal {
	t.Helper()
	r := pairRow(t, svc, id)
	if r == nil {
		t.Fatalf("no pair %s", id)
	}
	return r.Mid
}

func TestFeeForConvertsFlatFeesOnBuy(t *testing.T) {
	row := &ent.Pair{ID: "USDT/NGN", Asset: "USDT", Fiat: "NGN", Fees: map[string]schematype.FeeRule{
		Withdrawal: {Type: "FLAT", Value: decimal.New(100, 0)},
		Swap:       {Type: "PERCENTAGE", Value: decimal.RequireFromString("0.5")},
	}}
	p := pricing.Pair{Asset: money.USDT, Fiat: money.NGN}
	sell, err := feeFor(row, p, pricing.Sell, Withdrawal, decimal.New(1592, 0))
	if err != nil || sell.Type != pricing.Flat || !sell.Value.Equal(decimal.New(100, 0)) {
		t.Errorf("SELL flat fee = %+v, %v; want 100 NGN", sell, err)
	}
	// 100 NGN at 1608 NGN per USDT is 0.0621890… USDT, rounded up.
	buy, err := feeFor(row, p, pricing.Buy, Withdrawal, decimal.New(1608, 0))
	if err != nil || buy.Type != pricing.Flat || !buy.Value.Equal(decimal.RequireFromString("0.06219")) {
		t.Errorf("BUY flat fee = %+v, %v; want 0.06219 USDT", buy, err)
	}
	pct, err := feeFor(row, p, pricing.Buy, Swap, decimal.New(1608, 0))
	if err != nil || pct.Type != pricing.Percentage || !pct.Value.Equal(decimal.RequireFromString("0.5")) {
		t.Errorf("percentage fee = %+v, %v", pct, err)
	}
	if _, err := feeFor(row, p, pricing.Buy, Deposit, decimal.New(1608, 0)); err == nil {
		t.Error("a missing fee rule was accepted")
	}
}
