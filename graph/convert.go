package graph

import (
	"context"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/graph/model"
	"merchantpay/internal/accounts"
	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/ledger"
	"merchantpay/internal/merchants"
	"merchantpay/internal/money"
	"merchantpay/internal/page"
	"merchantpay/internal/rates"
	"merchantpay/internal/transactions"
	"merchantpay/internal/wallets"
	"merchantpay/internal/webhooks"
	"merchantpay/present/jsonx"
	"merchantpay/present/txview"
)

// principal is the authenticated caller; the server refuses unauthenticated
// GraphQL requests before any resolver runs.
func principal(ctx context.Context) (merchants.Principal, error) {
	p, ok := merchants.PrincipalFrom(ctx)
	if !ok {
		return merchants.Principal{}, apperr.New(apperr.Unauthorized, "missing API key")
	}
	return p, nil
}

func walletModel(w *ent.Wallet) *model.Wallet {
	docs := make([]*model.Document, len(w.Documents))
	for i, d := range w.Documents {
		docs[i] = &model.Document{DocumentType: d.DocumentType, DocumentFile: d.DocumentFile,
			DocumentFileType: d.DocumentFileType, DocumentNo: d.DocumentNo}
	}
	return &model.Wallet{
		WalletReference: w.Reference,
		FullName:        wallets.FullName(w),
		Compliance: &model.Compliance{Phone: w.Phone, Firstname: w.Firstname, Lastname: w.Lastname,
			Email: w.Email, Documents: docs},
		CreatedAt: w.CreatedAt,
	}
}

func walletInput(in model.CreateWalletInput) wallets.CreateInput {
	out := wallets.CreateInput{Reference: in.WalletReference}
	if in.Compliance == nil {
		out.ComplianceAbsent = true
		return out
	}
	c := in.Compliance
	out.Phone, out.Firstname, out.Lastname, out.Email = &c.Phone, &c.Firstname, &c.Lastname, &c.Email
	out.Documents = make([]wallets.Document, len(c.Documents))
	for i, d := range c.Documents {
		out.Documents[i] = wallets.Document{DocumentType: &d.DocumentType, DocumentFile: &d.DocumentFile,
			DocumentFileType: &d.DocumentFileType, DocumentNo: &d.DocumentNo}
	}
	return out
}

func transactionModel(t *ent.Transaction) *model.Transaction {
	return transactionFromView(txview.View(t))
}

// pageInfo is a Relay connection's PageInfo for a page read with p.
func pageInfo(p page.Params, info page.Info) *model.PageInfo {
	return &model.PageInfo{HasNextPage: info.HasMore, HasPreviousPage: p.After != nil,
		StartCursor: info.StartCursor, EndCursor: info.EndCursor}
}

func transactionConnection(rows []*ent.Transaction, p page.Params, info page.Info) *model.TransactionConnection {
	conn := &model.TransactionConnection{Edges: make([]*model.TransactionEdge, len(rows)), PageInfo: pageInfo(p, info)}
	for i, t := range rows {
		conn.Edges[i] = &model.TransactionEdge{Cursor: transactions.Cursor(t).Encode(), Node: transactionModel(t)}
	}
	return conn
}

func optionalString[T ~string](v *T) *string {
	if v == nil {
		return nil
	}
	s := string(*v)
	return &s
}

func balanceModel(b ledger.Balance) *model.Balance {
	return &model.Balance{Currency: string(b.Currency), Available: money.FromMinor(b.Available, b.Currency),
		Pending: money.FromMinor(b.Pending, b.Currency), UpdatedAt: b.UpdatedAt}
}

func accountInput(in *model.FiatAccountInput) accounts.CreateInput {
	if in == nil {
		return accounts.CreateInput{}
	}
	out := accounts.CreateInput{Reference: in.AccountReference, Currency: &in.Currency, Amount: in.Amount}
	t := strings.ToLower(string(in.AccountType))
	out.AccountType = &t
	if in.ExpiresAt != nil {
		d := decimal.NewFromInt(int64(*in.ExpiresAt))
		out.ExpiresAt = &d
	}
	out.RejectAmountCriteria = optionalString(in.RejectAmountCriteria)
	return out
}

func accountModel(a *ent.FiatAccount) *model.FiatAccount {
	m := &model.FiatAccount{
		AccountType:      model.AccountType(strings.ToUpper(a.AccountType)),
		AccountReference: a.Reference, Currency: a.Currency, ExpiresAt: a.ExpiresAt,
		AccountNumber: a.AccountNumber, AccountName: a.AccountName, BankName: a.BankName,
		WalletReference: a.WalletReference, Type: "FIAT",
	}
	if a.Amount != nil {
		d := money.FromMinor(*a.Amount, money.Currency(a.Currency))
		m.Amount = &d
	}
	return m
}

func banksModel(dir *banks.Directory, country model.Country) []*model.Bank {
	var out []*model.Bank
	if country == model.CountryNg {
		for _, b := range dir.Nigeria() {
			slug := b.Slug
			out = append(out, &model.Bank{Name: b.Name, Code: b.Code, Slug: &slug, Country: b.Country})
		}
		return out
	}
	for _, b := range dir.Ghana() {
		id := b.ID
		mb := &model.Bank{Name: b.Name, Code: b.Code, Country: "GH", ID: &id, Branches: make([]*model.BankBranch, len(b.Branches))}
		for i, br := range b.Branches {
			mb.Branches[i] = &model.BankBranch{ID: br.ID, BranchCode: br.BranchCode, BranchName: br.BranchName,
				SwiftCode: br.SwiftCode, Bic: br.BIC, BankID: br.BankID}
		}
		out = append(out, mb)
	}
	return out
}

func indicativeModel(r rates.Indicative) *model.IndicativeRate {
	return &model.IndicativeRate{Fiat: string(r.Pair.Fiat), Asset: string(r.Pair.Asset),
		FromCurrency: string(r.From), ToCurrency: string(r.To), Fee: r.Fee.Value,
		FeeType: model.FeeType(r.Fee.Type), RefreshIn: int(r.RefreshIn), Rate: r.Rate, Market: model.Market(r.Side)}
}

func quoteModel(svc *rates.Service, q *ent.Quote) *model.Quote {
	p := rates.QuotePair(q)
	from, to := money.Currency(q.FromCurrency), money.Currency(q.ToCurrency)
	return &model.Quote{
		Reference: q.ID, FromCurrency: q.FromCurrency, ToCurrency: q.ToCurrency,
		FromAmount: money.FromMinor(q.FromAmount, from), ToAmount: money.FromMinor(q.ToAmount, to),
		ExpiresAt: q.ExpiresAt, SettlementTime: svc.SettlementMinutes(q),
		Fee: money.FromMinor(q.Fee, to), FeeType: model.FeeTypeFlat, Rate: q.Rate,
		TransactionType: model.QuoteTransactionType(strings.ToUpper(q.TransactionType)),
		DepositMethod:   q.DepositMethod, WithdrawalMethod: q.WithdrawalMethod,
		CreatedAt: q.CreatedAt, UpdatedAt: q.UpdatedAt, Fiat: string(p.Fiat), Asset: string(p.Asset),
		RefreshIn: int(svc.RefreshIn(q)), Used: q.Used,
	}
}

func optionalLowerEnum[T ~string](v *T) *string {
	if v == nil {
		return nil
	}
	s := strings.ToLower(string(*v))
	return &s
}

func endpointModel(ep *ent.WebhookEndpoint) *model.WebhookEndpoint {
	evs := ep.Events
	if evs == nil {
		evs = []string{}
	}
	return &model.WebhookEndpoint{ID: ep.ID, URL: ep.URL, Events: evs, Enabled: ep.Enabled, CreatedAt: ep.CreatedAt}
}

func deliveryModels(ds []webhooks.Delivery) []*model.WebhookDelivery {
	out := make([]*model.WebhookDelivery, len(ds))
	for i, d := range ds {
		m := &model.WebhookDelivery{ID: d.ID, EventID: d.EventID, EndpointID: d.EndpointID, URL: d.URL,
			Status: d.Status, AttemptCount: d.AttemptCount, NextAttemptAt: d.NextAttemptAt,
			LastStatusCode: d.LastStatusCode, LastError: d.LastError, CreatedAt: d.CreatedAt, CompletedAt: d.CompletedAt,
			Attempts: make([]*model.WebhookAttempt, len(d.Attempts)), Event: d.EventType}
		for j, a := range d.Attempts {
			m.Attempts[j] = &model.WebhookAttempt{Number: a.Number, StartedAt: a.StartedAt, LatencyMs: int(a.LatencyMS),
				StatusCode: a.StatusCode, Error: a.Error, ResponseBody: a.ResponseBody, Success: a.Success}
		}
		out[i] = m
	}
	return out
}

// transactionFromView maps a stored snapshot (an event's payload) to GraphQL.
func transactionFromView(v txview.Transaction) *model.Transaction {
	dec := func(n jsonx.Num) decimal.Decimal { return decimal.Decimal(n) }
	decp := func(n *jsonx.Num) *decimal.Decimal {
		if n == nil {
			return nil
		}
		d := decimal.Decimal(*n)
		return &d
	}
	tm := func(s string) time.Time { t, _ := jsonx.ParseTime(s); return t }
	tmp := func(s *string) *time.Time {
		if s == nil {
			return nil
		}
		t := tm(*s)
		return &t
	}
	return &model.Transaction{
		Reference: v.Reference, MerchantReference: v.MerchantReference,
		Type: model.TransactionType(v.Type), Purpose: v.Purpose,
		Status:     model.TransactionStatus(strings.ToUpper(v.Status)),
		FromAmount: dec(v.FromAmount), Amount: dec(v.Amount), AmountCharged: dec(v.AmountCharged),
		AmountSettled: dec(v.AmountSettled), Currency: v.Currency, FromCurrency: v.FromCurrency,
		ToAmount: decp(v.ToAmount), ToCurrency: v.ToCurrency, TrxRate: decp(v.TrxRate), RateID: v.RateID,
		From: v.From, To: v.To, Channel: v.Channel, Narration: v.Narration,
		Beneficiary: v.Beneficiary, FeeBearer: model.FeeBearer(strings.ToUpper(v.FeeBearer)), Fee: dec(v.Fee), Destination: v.Destination,
		PaymentSlug: v.PaymentSlug, FromMerchant: v.FromMerchant, ToMerchant: v.ToMerchant,
		SettledAt: tmp(v.SettledAt), SettlementTime: v.SettlementTime, SettlementDate: tmp(v.SettlementDate),
		RejectReason: v.RejectReason, TraceID: v.TraceID, PaymentProof: v.PaymentProof,
		WalletReference: v.WalletReference.Value, AccountReference: v.AccountReference,
		CreatedAt: tm(v.CreatedAt), UpdatedAt: tm(v.UpdatedAt),
	}
}
