package rest

import (
	"context"

	"merchantpay/internal/apperr"
	"merchantpay/internal/deposits"
	"merchantpay/present/txview"
)

// decodeBankTransfer reads the body of POST /sandbox/deposits/bank-transfer
// {account_number, amount, narration?, sender_name?, sender_bank?}: a
// BAD_REQUEST when it is not one JSON object, else every bad field at once
// (a string amount is a wrong type, hence VALIDATION_ERROR).
func decodeBankTransfer(raw []byte) (deposits.Input, error) {
	var f apperr.Fields
	body, err := parseBody(raw, &f)
	if err != nil {
		return deposits.Input{}, err
	}
	in := deposits.Input{
		AccountNumber: body.str("account_number", false),
		Amount:        body.number("amount", false),
		Narration:     body.str("narration", false),
		SenderName:    body.str("sender_name", false),
		SenderBank:    body.str("sender_bank", false),
	}
	if err := mergeValidation(&f, func(g *apperr.Fields) { deposits.Validate(in, g) }); err != nil {
		return deposits.Input{}, err
	}
	return in, nil
}

// simulateBankTransfer is the sandbox's incoming bank transfer: 200 with the
// resulting Transaction, accepted or refunded.
func (o *Ops) simulateBankTransfer(ctx context.Context, r *Request) (Result, error) {
	in, err := decodeBankTransfer(r.Body)
	if err != nil {
		return Result{}, err
	}
	t, err := o.Deposits.Simulate(ctx, r.Tx, in)
	if err != nil {
		return Result{}, err
	}
	msg := "Deposit received successfully"
	if t.Status == deposits.StatusRefunded {
		msg = "Deposit refunded"
	}
	return Result{Message: msg, Data: txview.View(t)}, nil
}
