package rest

import (
	"context"

	"merchantpay/internal/apperr"
	"merchantpay/internal/withdrawals"
	"merchantpay/present/txview"
)

// decodeWithdraw reads the body of POST /transactions/withdraw: a
// BAD_REQUEST when it is not one JSON object; wrongly typed
// fields are recorded in f with their JSON paths.
func decodeWithdraw(raw []byte, f *apperr.Fields) (withdrawals.Input, error) {
	body, err := parseBody(raw, f)
	if err != nil {
		return withdrawals.Input{}, err
	}
	in := withdrawals.Input{
		Amount:        body.number("amount", false),
		Currency:      body.str("currency", false),
		RateReference: body.str("rate_reference", false),
		Narration:     body.str("narration", false),
		Reference:     body.str("reference", false),
		FeeBearer:     body.str("fee_bearer", false),
	}
	if b, ok := body.obj("beneficiary", false); ok {
		in.Beneficiary = &withdrawals.Beneficiary{
			Email:         b.str("email", false),
			Phone:         b.str("phone", false),
			Country:       b.str("country", false),
			Bank:          b.str("bank", false),
			Branch:        b.str("branch", false),
			AccountName:   b.str("account_name", false),
			AccountNumber: b.str("account_number", false),
			AccountType:   b.str("account_type", false),
		}
	}
	return in, nil
}

// withdraw starts a withdrawal in the request's transaction: 200 with the
// pending Transaction. The
// message says the withdrawal completed, as the spec's does, although it is
// still pending.
func (o *Ops) withdraw(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	in, err := decodeWithdraw(r.Body, &f)
	if err != nil {
		return Result{}, err
	}
	if f.Len() > 0 {
		// Fields of the wrong type: name them with every other bad field
		// (Withdraw checks the input itself otherwise).
		return Result{}, o.Withdrawals.Check(in, &f)
	}
	t, err := o.Withdrawals.Withdraw(ctx, r.Tx, in)
	if err != nil {
		return Result{}, err
	}
	return Result{Message: "Withdrawal completed successfully", Data: txview.View(t)}, nil
}
