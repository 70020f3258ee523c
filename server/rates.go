package server

import (
	"context"
	"fmt"

	"merchantpay/internal/rates"
)

// newRates loads the pairs file (PAIRS_CONFIG, else the embedded default),
// seeds the database with it, and builds the rates service on the chosen
// price source (PRICE_SOURCE).
func newRates(ctx context.Context, a *App) (*rates.Service, error) {
	cfg := a.Config
	pairs, err := rates.LoadPairs(cfg.PairsConfig)
	if err != nil {
		return nil, err
	}
	src, err := rates.NewPriceSource(cfg.PriceSource, cfg.IndicativeRefresh)
	if err != nil {
		return nil, fmt.Errorf("configuration: PRICE_SOURCE: %w", err)
	}
	svc := rates.New(a.DB, a.Clock, src, rates.Options{
		QuoteTTL:            cfg.QuoteTTL,
		IndicativeRefresh:   cfg.IndicativeRefresh,
		SwapSettlementDelay: cfg.SwapSettlementDelay,
	})
	res, err := svc.Seed(ctx, pairs)
	if err != nil {
		return nil, err
	}
	if len(res.Inserted) > 0 || len(res.Updated) > 0 {
		a.Log.Info("pairs configuration applied", "inserted", res.Inserted, "updated", res.Updated)
	}
	return svc, nil
}
