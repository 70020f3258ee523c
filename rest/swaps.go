package rest

import (
	"context"

	"merchantpay/internal/apperr"
	"merchantpay/internal/swaps"
	"merchantpay/present/txview"
)

// decodeSwap reads the body of POST /transactions/swap {rate_reference,
// reference?}: a BAD_REQUEST when it is not one JSON object, else every bad
// field at once.
func decodeSwap(raw []byte) (swaps.Input, error) {
	var f apperr.Fields
	body, err := parseBody(raw, &f)
	if err != nil {
		return swaps.Input{}, err
	}
	in := swaps.Input{
		RateReference: body.str("rate_reference", false),
		Reference:     body.str("reference", false),
	}
	if err := mergeValidation(&f, func(g *apperr.Fields) { swaps.Validate(in, g) }); err != nil {
		return swaps.Input{}, err
	}
	return in, nil
}

// createSwap is POST /transactions/swap (our addition to the published REST
// API): 200 with the pending SWAP transaction.
func (o *Ops) createSwap(ctx context.Context, r *Request) (Result, error) {
	in, err := decodeSwap(r.Body)
	if err != nil {
		return Result{}, err
	}
	t, err := o.Swaps.Swap(ctx, r.Tx, in)
	if err != nil {
		return Result{}, err
	}
	return Result{Message: "Swap initiated successfully; it is pending settlement", Data: txview.View(t)}, nil
}
