package withdrawals

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/shopspring/decimal"

	"merchantpay/internal/money"
)

// defaultFees is the payout fee table used when PAYOUT_FEES is not set: the
// NIP transfer bands of Nigerian banks (10.75, 26.88 and 53.75 NGN, VAT
// included) and 1% capped at 10 GHS for Ghanaian bank transfers.
//
//go:embed fees.json
var defaultFees []byte

// Tier is one band of a currency's payout fees. A payout of amount A (in
// units) falls in the first tier whose UpTo is at least A; its fee is
// Flat + A × Percent / 100 (rounded up to the minor unit), at most Cap.
type Tier struct {
	// UpTo is the largest amount of the band, in minor units; the last tier
	// has none (it takes every larger amount).
	UpTo *int64
	// Flat is in minor units.
	Flat int64
	// Percent is a percentage of the amount (1.5 means 1.5%).
	Percent decimal.Decimal
	// Cap bounds the fee, in minor units; nil means no cap.
	Cap *int64
}

// FeeTable is the operator's payout fee table: tiers per currency.
type FeeTable struct {
	tiers map[money.Currency][]Tier
}

type tierJSON struct {
	UpTo    *decimal.Decimal `json:"up_to"`
	Flat    *decimal.Decimal `json:"flat"`
	Percent *decimal.Decimal `json:"percent"`
	Cap     *decimal.Decimal `json:"cap"`
}

// LoadFees reads the fee table at path (PAYOUT_FEES), or the embedded
// default when path is empty. The table must price every payout currency.
func LoadFees(path string) (FeeTable, error) {
	data := defaultFees
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return FeeTable{}, fmt.Errorf("payout fees: %w", err)
		}
		data = b
	}
	ft, err := ParseFees(data)
	if err != nil && path != "" {
		return FeeTable{}, fmt.Errorf("%s: %w", path, err)
	}
	return ft, err
}

// ParseFees parses and checks a fee table: a JSON object from currency code
// to an array of tiers {up_to?, flat?, percent?, cap?} (amounts in units of
// the currency, as JSON numbers), with up_to strictly increasing and absent
// on the last tier only.
func ParseFees(data []byte) (FeeTable, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var raw map[string][]tierJSON
	if err := dec.Decode(&raw); err != nil {
		return FeeTable{}, fmt.Errorf("payout fees: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return FeeTable{}, errors.New("payout fees: trailing data after the table")
	}
	ft := FeeTable{tiers: map[money.Currency][]Tier{}}
	codes := make([]string, 0, len(raw))
	for code := range raw {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		cur, ok := money.Parse(code)
		if !ok {
			return FeeTable{}, fmt.Errorf("payout fees: unknown currency %q", code)
		}
		tiers, err := parseTiers(cur, raw[code])
		if err != nil {
			return FeeTable{}, fmt.Errorf("payout fees: %s: %w", cur, err)
		}
		ft.tiers[cur] = tiers
	}
	for _, cur := range Currencies() {
		if _, ok := ft.tiers[cur]; !ok {
			return FeeTable{}, fmt.Errorf("payout fees: no tiers for %s", cur)
		}
	}
	return ft, nil
}

func parseTiers(cur money.Currency, raw []tierJSON) ([]Tier, error) {
	if len(raw) == 0 {
		return nil, errors.New("needs at least one tier")
	}
	minor := func(i int, name string, d *decimal.Decimal) (int64, error) {
		if d.Sign() < 0 {
			return 0, fmt.Errorf("tier %d: %s is negative", i, name)
		}
		m, err := money.ToMinor(*d, cur)
		if err != nil {
			return 0, fmt.Errorf("tier %d: %s %s: %w", i, name, d, err)
		}
		return m, nil
	}
	out := make([]Tier, len(raw))
	for i, r := range raw {
		var t Tier
		last := i == len(raw)-1
		switch {
		case r.UpTo == nil && !last:
			return nil, fmt.Errorf("tier %d: only the last tier may omit up_to", i)
		case r.UpTo != nil && last:
			return nil, fmt.Errorf("tier %d: the last tier must omit up_to so that it takes every larger amount", i)
		case r.UpTo != nil:
			m, err := minor(i, "up_to", r.UpTo)
			if err != nil {
				return nil, err
			}
			if i > 0 && m <= *out[i-1].UpTo {
				return nil, fmt.Errorf("tier %d: up_to must be above the previous tier's", i)
			}
			t.UpTo = &m
		}
		if r.Flat != nil {
			m, err := minor(i, "flat", r.Flat)
			if err != nil {
				return nil, err
			}
			t.Flat = m
		}
		if r.Percent != nil {
			if r.Percent.Sign() < 0 || r.Percent.GreaterThanOrEqual(decimal.New(100, 0)) {
				return nil, fmt.Errorf("tier %d: percent %s is not in [0, 100)", i, r.Percent)
			}
			t.Percent = *r.Percent
		}
		if r.Cap != nil {
			m, err := minor(i, "cap", r.Cap)
			if err != nil {
				return nil, err
			}
			t.Cap = &m
		}
		out[i] = t
	}
	return out, nil
}

// Fee is the payout fee, in minor units of cur, on a payout of amount minor
// units.
func (ft FeeTable) Fee(cur money.Currency, amount int64) (int64, error) {
	tiers, ok := ft.tiers[cur]
	if !ok {
		return 0, fmt.Errorf("payout fees: no tiers for %s", cur)
	}
	var t Tier
	for _, t = range tiers {
		if t.UpTo == nil || amount <= *t.UpTo {
			break
		}
	}
	fee := t.Flat
	if !t.Percent.IsZero() {
		// Rounded up: a fee never undercharges by a fraction of a minor unit.
		pct, err := money.RoundQuo(money.FromMinor(amount, cur).Mul(t.Percent), decimal.New(100, 0), cur, money.Up)
		if err != nil {
			return 0, err
		}
		fee += pct
	}
	if t.Cap != nil && fee > *t.Cap {
		fee = *t.Cap
	}
	return fee, nil
}
