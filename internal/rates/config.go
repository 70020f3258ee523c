package rates

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"merchantpay/internal/pricing"
)

// Transaction types a quote is made for (stored lower case, shown upper case).
const (
	Swap       = "swap"
	Deposit    = "deposit"
	Withdrawal = "withdrawal"
)

// TxTypes are the transaction types, in a stable order.
func TxTypes() []string { return []string{Swap, Deposit, Withdrawal} }

// DepositMethodCryptoPay is the one specialised deposit method.
const DepositMethodCryptoPay = "crypto-pay"

// defaultPairs is the operator configuration used when PAIRS_CONFIG is not set.
//
//go:embed pairs.json
var defaultPairs []byte

// PairConfig is one operator-configured pair.
type PairConfig struct {
	Pair   pricing.Pair
	Mid    decimal.Decimal
	Spread decimal.Decimal
	// Fees by transaction type (Swap, Deposit, Withdrawal). A FLAT value is in
	// units of the pair's fiat currency; quotes that pay out the asset charge
	// it converted at the quote's rate (see feeFor).
	Fees           map[string]pricing.FeeSpec
	DefaultEnabled bool
}

// Hash identifies the entry's content, so that start-up can tell an entry
// the operator edited from one already applied.
func (p PairConfig) Hash() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s|%t", p.Pair, p.Mid.String(), p.Spread.String(), p.DefaultEnabled)
	for _, t := range TxTypes() {
		f := p.Fees[t]
		fmt.Fprintf(&b, "|%s:%s:%s", t, f.Type, f.Value.String())
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

type fileJSON struct {
	Pairs []pairJSON `json:"pairs"`
}

type pairJSON struct {
	ID             string             `json:"id"`
	Asset          string             `json:"asset"`
	Fiat           string             `json:"fiat"`
	Mid            *decimal.Decimal   `json:"mid"`
	Spread         *decimal.Decimal   `json:"spread"`
	Fees           map[string]feeJSON `json:"fees"`
	DefaultEnabled *bool              `json:"default_enabled"`
}

type feeJSON struct {
	Type  string           `json:"type"`
	Value *decimal.Decimal `json:"value"`
}

// DefaultPairs is the embedded default configuration.
func DefaultPairs() ([]PairConfig, error) { return ParsePairs(defaultPairs) }

// LoadPairs reads the pairs file at path (PAIRS_CONFIG), or the embedded
// default when path is empty.
func LoadPairs(path string) ([]PairConfig, error) {
	if path == "" {
		return DefaultPairs()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pairs config: %w", err)
	}
	pairs, err := ParsePairs(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pairs, nil
}

// ParsePairs reads a pairs configuration and names every bad entry at once.
// Numbers may be JSON numbers or strings; either way they are read exactly.
func ParsePairs(data []byte) ([]PairConfig, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f fileJSON
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("pairs config: %w", err)
	}
	if len(f.Pairs) == 0 {
		return nil, errors.New("pairs config: no pairs")
	}
	var errs []error
	bad := func(i int, id, format string, args ...any) {
		errs = append(errs, fmt.Errorf("pairs config: pairs[%d] (%s): %s", i, id, fmt.Sprintf(format, args...)))
	}
	seen := map[string]bool{}
	out := make([]PairConfig, 0, len(f.Pairs))
	for i, pj := range f.Pairs {
		p, err := pricing.ParsePair(pj.ID)
		if err != nil {
			bad(i, pj.ID, "id: %v", err)
			continue
		}
		if seen[pj.ID] {
			bad(i, pj.ID, "listed twice")
		}
		seen[pj.ID] = true
		if pj.Asset != "" && pj.Asset != string(p.Asset) {
			bad(i, pj.ID, "asset %q does not match the id", pj.Asset)
		}
		if pj.Fiat != "" && pj.Fiat != string(p.Fiat) {
			bad(i, pj.ID, "fiat %q does not match the id", pj.Fiat)
		}
		pc := PairConfig{Pair: p, Fees: map[string]pricing.FeeSpec{}, DefaultEnabled: true}
		if pj.Mid == nil || pj.Mid.Sign() <= 0 {
			bad(i, pj.ID, "mid must be a number above 0")
		} else {
			pc.Mid = *pj.Mid
		}
		if pj.Spread == nil || pj.Spread.Sign() < 0 || pj.Spread.GreaterThanOrEqual(decimal.New(1, 0)) {
			bad(i, pj.ID, "spread must be a fraction from 0 to below 1 (0.005 is 0.5%%)")
		} else {
			pc.Spread = *pj.Spread
		}
		if pj.DefaultEnabled != nil {
			pc.DefaultEnabled = *pj.DefaultEnabled
		}
		for t := range pj.Fees {
			if !validTxType(t) {
				bad(i, pj.ID, "fees: unknown transaction type %q (want swap, deposit, withdrawal)", t)
			}
		}
		for _, t := range TxTypes() {
			fj, ok := pj.Fees[t]
			if !ok || fj.Value == nil {
				bad(i, pj.ID, "fees.%s: type and value are required", t)
				continue
			}
			fs := pricing.FeeSpec{Type: pricing.FeeType(fj.Type), Value: *fj.Value}
			if err := fs.Validate(); err != nil {
				bad(i, pj.ID, "fees.%s: %v", t, err)
				continue
			}
			if fs.Type == pricing.Flat && !fs.Value.Equal(fs.Value.Truncate(p.Fiat.Decimals())) {
				bad(i, pj.ID, "fees.%s: a flat fee is in %s and has at most %d decimals", t, p.Fiat, p.Fiat.Decimals())
				continue
			}
			pc.Fees[t] = fs
		}
		out = append(out, pc)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pair.String() < out[j].Pair.String() })
	return out, nil
}

func validTxType(t string) bool { return t == Swap || t == Deposit || t == Withdrawal }
