package rest

import (
	"context"
	"net/http"

	"merchantpay/ent"
	"merchantpay/internal/accounts"
	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
)

// accountJSON is the spec's "Fiat account".
type accountJSON struct {
	AccountType      string  `json:"account_type"`
	AccountReference string  `json:"account_reference"`
	Currency         string  `json:"currency"`
	Amount           *Num    `json:"amount"`
	ExpiresAt        *string `json:"expires_at"`
	AccountNumber    string  `json:"account_number"`
	AccountName      string  `json:"account_name"`
	BankName         string  `json:"bank_name"`
	WalletReference  *string `json:"wallet_reference"`
	Type             string  `json:"type"`
	// Crypto fields of the shared account shape; always null for fiat.
	Address *string `json:"address"`
	URL     *string `json:"url"`
	Tag     *string `json:"tag"`
	Chain   *string `json:"chain"`
}

func accountView(a *ent.FiatAccount) accountJSON {
	v := accountJSON{
		AccountType:      a.AccountType,
		AccountReference: a.Reference,
		Currency:         a.Currency,
		ExpiresAt:        TimePtr(a.ExpiresAt),
		AccountNumber:    a.AccountNumber,
		AccountName:      a.AccountName,
		BankName:         a.BankName,
		WalletReference:  a.WalletReference,
		Type:             "FIAT",
	}
	if a.Amount != nil {
		d := money.FromMinor(*a.Amount, money.Currency(a.Currency))
		v.Amount = NumPtr(&d)
	}
	return v
}

func accountViews(rows []*ent.FiatAccount) []accountJSON {
	out := make([]accountJSON, len(rows))
	for i, a := range rows {
		out[i] = accountView(a)
	}
	return out
}

// decodeAccount reads the fields of a fiat-account request. Numbers stay
// numbers here; whether expires_at is whole is the operation's rule.
func decodeAccount(o object) accounts.CreateInput {
	return accounts.CreateInput{
		AccountType:          o.str("account_type", false),
		Reference:            o.str("account_reference", false),
		Currency:             o.str("currency", false),
		Amount:               o.number("amount", false),
		ExpiresAt:            o.number("expires_at", false),
		RejectAmountCriteria: o.str("reject_amount_criteria", false),
	}
}

// decodeInlineAccount reads the wallet request's `account`: nil when absent
// or null (or not an object, which the decoder reports).
func decodeInlineAccount(o object) *accounts.CreateInput {
	a, ok := o.obj("account", false)
	if !ok {
		return nil
	}
	in := decodeAccount(a)
	return &in
}

// createAccount is POST /wallets/{wallet_reference}: a fiat account on a
// wallet.
func (o *Ops) createAccount(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	body, err := parseBody(r.Body, &f)
	if err != nil {
		return Result{}, err
	}
	in := decodeAccount(body)
	if err := mergeValidation(&f, func(g *apperr.Fields) { accounts.Validate(in, "", g) }); err != nil {
		return Result{}, err
	}
	a, err := o.Accounts.Create(ctx, r.Tx, r.Param("wallet_reference"), in, "")
	if err != nil {
		return Result{}, err
	}
	return Result{Status: http.StatusCreated, Message: "Account created successfully", Data: accountView(a)}, nil
}

// createGlobalAccount is the extension POST /accounts: the merchant's global
// static_dynamic account, with no wallet.
func (o *Ops) createGlobalAccount(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	body, err := parseBody(r.Body, &f)
	if err != nil {
		return Result{}, err
	}
	in := decodeAccount(body)
	if err := mergeValidation(&f, func(g *apperr.Fields) { accounts.ValidateGlobal(in, "", g) }); err != nil {
		return Result{}, err
	}
	a, err := o.Accounts.CreateGlobal(ctx, r.Tx, in, "")
	if err != nil {
		return Result{}, err
	}
	return Result{Status: http.StatusCreated, Message: "Account created successfully", Data: accountView(a)}, nil
}
