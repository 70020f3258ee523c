package rest

import (
	"context"

	"merchantpay/internal/apperr"
	"merchantpay/internal/cryptopay"
	"merchantpay/present/txview"
)

// decodeDeposit reads the body of POST /transactions/deposit; type errors go
// to f with their JSON paths.
func decodeDeposit(body object) cryptopay.DepositInput {
	in := cryptopay.DepositInput{
		DepositMethod: body.str("deposit_method", false),
		Amount:        body.number("amount", false),
		Currency:      body.str("currency", false),
		RateReference: body.str("rate_reference", false),
		Reference:     body.str("reference", false),
		FeeBearer:     body.str("fee_bearer", false),
	}
	req, ok := body.obj("requirement", false)
	if !ok {
		// Absent, or of the wrong type (already reported).
		in.RequirementAbsent = true
		return in
	}
	in.ProductName = req.str("product_name", false)
	in.ProductDescription = req.str("product_description", false)
	in.FailureURL = req.str("failure_url", false)
	in.SuccessURL = req.str("success_url", false)
	return in
}

// startDeposit is POST /transactions/deposit: 200 with the crypto-pay links. A
// test key (LIVE_MODE_ONLY) or a merchant not enrolled (NOT_ENROLLED) is
// refused before the fields are looked at: no body would make it work.
func (o *Ops) startDeposit(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	body, err := parseBody(r.Body, &f)
	if err != nil {
		return Result{}, err
	}
	if _, err := o.CryptoPay.Enrolment(ctx, r.Tx); err != nil {
		return Result{}, err
	}
	in := decodeDeposit(body)
	if err := mergeValidation(&f, func(g *apperr.Fields) { cryptopay.ValidateDeposit(in, g) }); err != nil {
		return Result{}, err
	}
	d, err := o.CryptoPay.StartDeposit(ctx, r.Tx, in)
	if err != nil {
		return Result{}, err
	}
	return Result{Message: "Deposit initiated successfully", Data: d.Links}, nil
}

// completeCryptoPay is the sandbox's POST /sandbox/deposits/crypto-pay/{prepayId}
// {outcome}: 200 with the resulting Transaction, success or failed (a
// checkout past its expireTime fails as expired); 409 DUPLICATE_REFERENCE
// when it was already completed.
func (o *Ops) completeCryptoPay(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	body, err := parseBody(r.Body, &f)
	if err != nil {
		return Result{}, err
	}
	outcome := body.str("outcome", false)
	if err := mergeValidation(&f, func(g *apperr.Fields) { cryptopay.ValidateOutcome(outcome, g) }); err != nil {
		return Result{}, err
	}
	t, err := o.CryptoPay.Complete(ctx, r.Tx, r.Param("prepayId"), *outcome)
	if err != nil {
		return Result{}, err
	}
	msg := "Crypto-pay deposit completed successfully"
	if t.Status != cryptopay.StatusSuccess {
		msg = "Crypto-pay deposit failed"
	}
	return Result{Message: msg, Data: txview.View(t)}, nil
}
