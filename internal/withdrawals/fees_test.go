package withdrawals

import (
	"strings"
	"testing"

	"merchantpay/internal/money"
)

func TestDefaultFees(t *testing.T) {
	ft, err := LoadFees("")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cur          money.Currency
		amount, want int64 // minor units
	}{
		{money.NGN, 1, 1075},
		{money.NGN, 500000, 1075},
		{money.NGN, 500001, 2688},
		{money.NGN, 5000000, 2688},
		{money.NGN, 5000001, 5375},
		{money.NGN, 1_000_000_000_000, 5375},
		{money.GHS, 1, 1},       // 1% of 0.01, rounded up
		{money.GHS, 25000, 250}, // 1% of 250
		{money.GHS, 99999, 1000},
		{money.GHS, 1_000_000_000_000, 1000}, // capped at 10 GHS
	}
	for _, tc := range tests {
		got, err := ft.Fee(tc.cur, tc.amount)
		if err != nil || got != tc.want {
			t.Errorf("Fee(%s, %d) = %d, %v; want %d", tc.cur, tc.amount, got, err, tc.want)
		}
	}
	if _, err := ft.Fee(money.USD, 100); err == nil {
		t.Error("USD has no payout fees")
	}
}

func TestParseFeesRejects(t *testing.T) {
	ok := `"GHS": [{"flat": 1}]`
	for _, tc := range []struct{ json, want string }{
		{`{"NGN": [{"flat": 1}]}`, "no tiers for GHS"},
		{`{"NGN": [], ` + ok + `}`, "at least one tier"},
		{`{"NGN": [{"up_to": 10, "flat": 1}], ` + ok + `}`, "last tier must omit up_to"},
		{`{"NGN": [{"flat": 1}, {"flat": 2}], ` + ok + `}`, "only the last tier"},
		{`{"NGN": [{"up_to": 10}, {"up_to": 10}, {}], ` + ok + `}`, "above the previous"},
		{`{"NGN": [{"flat": 1.001}], ` + ok + `}`, "flat"},
		{`{"NGN": [{"flat": -1}], ` + ok + `}`, "negative"},
		{`{"NGN": [{"percent": 100}], ` + ok + `}`, "percent"},
		{`{"NGN": [{"fee": 1}], ` + ok + `}`, "unknown field"},
		{`{"XYZ": [{"flat": 1}], "NGN": [{}], ` + ok + `}`, "unknown currency"},
		{`{"NGN": [{}], ` + ok + `} {}`, "trailing data"},
	} {
		_, err := ParseFees([]byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.json, err, tc.want)
		}
	}
	ft, err := ParseFees([]byte(`{"NGN": [{"up_to": 100, "flat": 0.5, "percent": 2, "cap": 1.5}, {"flat": 3}], ` + ok + `}`))
	if err != nil {
		t.Fatal(err)
	}
	for amount, want := range map[int64]int64{1000: 70, 5000: 150, 10000: 150, 10001: 300} {
		if got, _ := ft.Fee(money.NGN, amount); got != want {
			t.Errorf("Fee(NGN, %d) = %d, want %d", amount, got, want)
		}
	}
}
