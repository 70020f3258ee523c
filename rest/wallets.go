package rest

import (
	"context"
	"net/http"
	"strconv"

	"merchantpay/ent"
	"merchantpay/internal/accounts"
	"merchantpay/internal/apperr"
	"merchantpay/internal/page"
	"merchantpay/internal/wallets"
)

type documentJSON struct {
	DocumentType     string `json:"document_type"`
	DocumentFile     string `json:"document_file"`
	DocumentFileType string `json:"document_file_type"`
	DocumentNo       string `json:"document_no"`
}

type complianceJSON struct {
	Phone     string         `json:"phone"`
	Firstname string         `json:"firstname"`
	Lastname  string         `json:"lastname"`
	Email     string         `json:"email"`
	Documents []documentJSON `json:"documents"`
}

type walletJSON struct {
	FullName        string         `json:"full_name"`
	Compliance      complianceJSON `json:"compliance"`
	WalletReference string         `json:"wallet_reference"`
	// Account is the wallet's first fiat account (the one created with the
	// wallet when there was one), null when it has none: every read of a
	// wallet shows the account its creation returned.
	Account   any    `json:"account"`
	CreatedAt string `json:"created_at"`
}

type walletWithAccountsJSON struct {
	walletJSON
	Accounts []accountJSON `json:"accounts"`
}

func walletView(w *ent.Wallet) walletJSON {
	docs := make([]documentJSON, len(w.Documents))
	for i, d := range w.Documents {
		docs[i] = documentJSON(d)
	}
	return walletJSON{
		FullName: wallets.FullName(w),
		Compliance: complianceJSON{Phone: w.Phone, Firstname: w.Firstname, Lastname: w.Lastname,
			Email: w.Email, Documents: docs},
		WalletReference: w.Reference,
		CreatedAt:       Time(w.CreatedAt),
	}
}

// decodeWallet turns the spec's wallet body into the operation's input.
func decodeWallet(o object) wallets.CreateInput {
	in := wallets.CreateInput{Reference: o.str("wallet_reference", false)}
	c, ok := o.obj("compliance", false)
	if !ok {
		// Absent or of the wrong type (already reported by the decoder).
		in.ComplianceAbsent = true
		return in
	}
	in.Phone = c.str("phone", false)
	in.Firstname = c.str("firstname", false)
	in.Lastname = c.str("lastname", false)
	in.Email = c.str("email", false)
	docs, ok := c.arr("documents", false)
	if !ok {
		in.DocumentsAbsent = true
		return in
	}
	in.Documents = make([]wallets.Document, 0, len(docs))
	for i, raw := range docs {
		d, ok := c.element("documents", i, raw)
		if !ok {
			continue
		}
		doc := wallets.Document{
			DocumentType:     d.str("document_type", false),
			DocumentFile:     d.str("document_file", false),
			DocumentFileType: d.str("document_file_type", false),
			DocumentNo:       d.str("document_no", false),
		}
		if doc.DocumentNo == nil {
			doc.DocumentNo = d.str("document_number", false)
		}
		in.Documents = append(in.Documents, doc)
	}
	return in
}

func (o *Ops) createWallet(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	body, err := parseBody(r.Body, &f)
	if err != nil {
		return Result{}, err
	}
	in := decodeWallet(body)
	acc := decodeInlineAccount(body)
	// The wallet's and the inline account's bad fields are reported together.
	if err := mergeValidation(&f, func(g *apperr.Fields) {
		wallets.Validate(in, g)
		if acc != nil {
			accounts.Validate(*acc, "account.", g)
		}
	}); err != nil {
		return Result{}, err
	}
	w, a, err := o.Accounts.CreateWallet(ctx, r.Tx, in, acc)
	if err != nil {
		return Result{}, err
	}
	view := walletView(w)
	if a != nil {
		view.Account = accountView(a)
	}
	return Result{Status: http.StatusCreated, Message: "Wallet created successfully", Data: view}, nil
}

func (o *Ops) getWallet(ctx context.Context, r *Request) (Result, error) {
	w, err := o.Wallets.Get(ctx, r.Tx, r.Param("wallet_reference"))
	if err != nil {
		return Result{}, err
	}
	accs, err := o.Accounts.ForWallet(ctx, r.Tx, w)
	if err != nil {
		return Result{}, err
	}
	view := walletView(w)
	if len(accs) > 0 {
		view.Account = accountView(accs[0])
	}
	return Result{Message: "Wallet retrieved successfully", Data: walletWithAccountsJSON{walletJSON: view, Accounts: accountViews(accs)}}, nil
}

func (o *Ops) listWallets(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	p := pageParams(r, wallets.CursorID, &f)
	if err := f.Err(); err != nil {
		return Result{}, err
	}
	rows, info, err := o.Wallets.List(ctx, p)
	if err != nil {
		return Result{}, err
	}
	first, err := o.Accounts.FirstOfWallets(ctx, r.Tx, rows)
	if err != nil {
		return Result{}, err
	}
	out := make([]walletJSON, len(rows))
	for i, w := range rows {
		out[i] = walletView(w)
		if a, ok := first[w.ID]; ok {
			out[i].Account = accountView(a)
		}
	}
	return Result{Message: "Wallets retrieved successfully", Data: out, Meta: &Meta{HasMore: info.HasMore, NextCursor: info.NextCursor}}, nil
}

// pageParams reads limit and cursor from the query string.
func pageParams(r *Request, idForm page.IDForm, f *apperr.Fields) page.Params {
	q := r.Query
	var limit *int
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			f.Add("limit", "must be a whole number between 1 and %d", page.MaxLimit)
		} else {
			limit = &n
		}
	}
	var cursor *string
	if v := q.Get("cursor"); v != "" {
		cursor = &v
	}
	return page.Parse(limit, cursor, "limit", "cursor", idForm, f)
}

// mergeValidation adds the operation's semantic errors to the decoder's type
// errors, one entry per field, so the answer names every bad field at once.
func mergeValidation(f *apperr.Fields, semantic func(*apperr.Fields)) error {
	var g apperr.Fields
	semantic(&g)
	f.Merge(&g)
	return f.Err()
}
