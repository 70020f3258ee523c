package server

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sort"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/rates"
	"merchantpay/present/jsonx"
)

const pairsUsage = `usage:
  server pairs list
  server pairs set-mid --pair ASSET/FIAT --mid PRICE
  server pairs enable --merchant ID --pair ASSET/FIAT
  server pairs disable --merchant ID --pair ASSET/FIAT`

// pairJSON is one pair as `pairs list` and `pairs set-mid` print it.
type pairJSON struct {
	Pair           string                 `json:"pair"`
	Asset          string                 `json:"asset"`
	Fiat           string                 `json:"fiat"`
	Mid            jsonx.Num              `json:"mid"`
	MarketMid      jsonx.Num              `json:"market_mid"`
	Spread         jsonx.Num              `json:"spread"`
	Fees           map[string]pairFeeJSON `json:"fees"`
	DefaultEnabled bool                   `json:"default_enabled"`
	UpdatedAt      string                 `json:"updated_at"`
}

type pairFeeJSON struct {
	Type  string    `json:"type"`
	Value jsonx.Num `json:"value"`
}

func pairView(svc *rates.Service, p *ent.Pair) pairJSON {
	fees := make(map[string]pairFeeJSON, len(p.Fees))
	for t, f := range p.Fees {
		fees[t] = pairFeeJSON{Type: f.Type, Value: jsonx.Num(f.Value)}
	}
	return pairJSON{Pair: p.ID, Asset: p.Asset, Fiat: p.Fiat, Mid: jsonx.Num(p.Mid),
		MarketMid: jsonx.Num(svc.MarketMid(p)), Spread: jsonx.Num(p.Spread), Fees: fees,
		DefaultEnabled: p.DefaultEnabled, UpdatedAt: jsonx.Time(p.UpdatedAt)}
}

// pairsCmd runs `server pairs ...` and prints one JSON value.
func pairsCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, pairsUsage)
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("pairs "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	pairID := fs.String("pair", "", "pair, ASSET/FIAT (e.g. USDT/NGN)")
	mid := fs.String("mid", "", "mid price: units of the fiat per unit of the asset")
	merchantID := fs.String("merchant", "", "merchant id")
	if !parseFlags(fs, args[1:], pairsUsage, stderr) {
		return 2
	}
	switch sub {
	case "list", "set-mid", "enable", "disable":
	default:
		fmt.Fprintln(stderr, pairsUsage)
		return 2
	}
	app, err := New(ctx, cfg, Options{Logger: log})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer app.Close()
	var out any
	switch sub {
	case "list":
		var rows []*ent.Pair
		if rows, err = app.Rates.ListPairs(ctx); err == nil {
			list := make([]pairJSON, len(rows))
			for i, p := range rows {
				list[i] = pairView(app.Rates, p)
			}
			sort.Slice(list, func(i, j int) bool { return list[i].Pair < list[j].Pair })
			out = list
		}
	case "set-mid":
		d, perr := decimal.NewFromString(*mid)
		if perr != nil {
			d = decimal.Zero // reported by SetMid as a bad mid
		}
		var p *ent.Pair
		if p, err = app.Rates.SetMid(ctx, *pairID, d); err == nil {
			out = pairView(app.Rates, p)
		}
	case "enable", "disable":
		out, err = app.Rates.SetEnabled(ctx, *merchantID, *pairID, sub == "enable")
	}
	if err != nil {
		e := apperr.As(err)
		msg := string(e.Kind) + ": " + e.Message
		for _, f := range e.Fields {
			msg += fmt.Sprintf("; --%s %s", f.Field, f.Message)
		}
		if e.Kind == apperr.Internal {
			msg = err.Error()
		}
		fmt.Fprintln(stderr, "error:", msg)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
	return 0
}
