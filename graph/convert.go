package graph

import (
	"context"

	"merchantpay/ent"
	"merchantpay/graph/model"
	"merchantpay/internal/apperr"
	"merchantpay/internal/merchants"
	"merchantpay/internal/wallets"
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
