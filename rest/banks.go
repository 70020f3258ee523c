package rest

import (
	"context"

	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/rails"
)

// resolvedJSON is the spec's "Resolved bank account".
type resolvedJSON struct {
	BankName      string `json:"bank_name"`
	BankCode      string `json:"bank_code"`
	AccountNumber string `json:"account_number"`
	AccountName   string `json:"account_name"`
}

// listBanks is GET /misc/banks?country=NG|GH.
func (o *Ops) listBanks(_ context.Context, r *Request) (Result, error) {
	switch country := r.Query.Get("country"); country {
	case banks.CountryNG:
		return Result{Message: "Banks retrieved successfully", Data: o.Banks.NigeriaPublic()}, nil
	case banks.CountryGH:
		return Result{Message: "Banks retrieved successfully", Data: o.Banks.Ghana()}, nil
	case "":
		var f apperr.Fields
		f.Add("country", "is required: NG or GH")
		return Result{}, f.Err()
	default:
		var f apperr.Fields
		f.Add("country", "must be NG or GH")
		return Result{}, f.Err()
	}
}

// resolveBank is POST /misc/banks/resolve: a Nigerian account's name enquiry.
func (o *Ops) resolveBank(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	body, err := parseBody(r.Body, &f)
	if err != nil {
		return Result{}, err
	}
	in := rails.ResolveInput{Bank: body.str("bank", false), Account: body.str("account", false)}
	if err := o.NameEnquiry.Check(in, &f); err != nil {
		return Result{}, err
	}
	res, err := o.NameEnquiry.Resolve(ctx, r.Tx, in)
	if err != nil {
		return Result{}, err
	}
	return Result{Message: "Account resolved successfully", Data: resolvedJSON{BankName: res.BankName,
		BankCode: res.BankCode, AccountNumber: res.AccountNumber, AccountName: res.AccountName}}, nil
}
