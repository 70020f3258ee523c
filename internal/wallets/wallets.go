// Package wallets creates and reads wallets: one per customer of a merchant.
package wallets

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/schematype"
	"merchantpay/ent/wallet"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/page"
	"merchantpay/internal/store"
	"merchantpay/internal/validate"
)

// DocumentTypes are the accepted identity document types.
var DocumentTypes = []string{"INTERNATIONAL_PASSPORT", "NATIONAL_ID", "DRIVERS_LICENSE", "VOTERS_CARD", "NIN", "RESIDENCE_PERMIT"}

// Document is one identity document in a request.
type Document struct {
	DocumentType     *string
	DocumentFile     *string
	DocumentFileType *string
	// DocumentNo is document_no or document_number.
	DocumentNo *string
}

// CreateInput is a wallet request, shared by REST and GraphQL. Nil means the
// field was absent (or had the wrong type, already reported by the decoder).
type CreateInput struct {
	Reference *string
	Phone     *string
	Firstname *string
	Lastname  *string
	Email     *string
	// Documents nil means absent; present but empty is an error.
	Documents       []Document
	DocumentsAbsent bool
	// ComplianceAbsent is set when the compliance object was missing.
	ComplianceAbsent bool
}

// Validate collects every bad field of in.
func Validate(in CreateInput, f *apperr.Fields) {
	if in.Reference != nil {
		if msg := validate.Reference(*in.Reference); msg != "" {
			f.Add("wallet_reference", "%s", msg)
		}
	}
	if in.ComplianceAbsent {
		f.Add("compliance", "is required")
		return
	}
	str := func(field string, v *string, check func(string) string) {
		if v == nil {
			f.Add(field, "is required")
			return
		}
		if msg := check(*v); msg != "" {
			f.Add(field, "%s", msg)
		}
	}
	str("compliance.phone", in.Phone, validate.Phone)
	str("compliance.firstname", in.Firstname, validate.Name)
	str("compliance.lastname", in.Lastname, validate.Name)
	str("compliance.email", in.Email, validate.Email)
	if in.DocumentsAbsent {
		f.Add("compliance.documents", "is required: a non-empty array of identity documents")
		return
	}
	if len(in.Documents) == 0 {
		f.Add("compliance.documents", "must hold at least one document")
	}
	if len(in.Documents) > 20 {
		f.Add("compliance.documents", "must hold at most 20 documents")
	}
	for i, d := range in.Documents {
		p := fmt.Sprintf("compliance.documents[%d].", i)
		str(p+"document_type", d.DocumentType, func(s string) string {
			for _, t := range DocumentTypes {
				if s == t {
					return ""
				}
			}
			return "must be one of " + strings.Join(DocumentTypes, ", ")
		})
		str(p+"document_file_type", d.DocumentFileType, func(s string) string {
			if s != "url" && s != "link" {
				return "must be url or link"
			}
			return ""
		})
		str(p+"document_file", d.DocumentFile, validate.HTTPURL)
		str(p+"document_no", d.DocumentNo, func(s string) string {
			if msg := validate.Text(s); msg != "" {
				return msg
			}
			if t := strings.TrimSpace(s); t == "" || len(t) > 64 {
				return "must be 1 to 64 characters"
			}
			return ""
		})
	}
}

// Service creates and reads wallets.
type Service struct {
	db    *store.DB
	clock clock.Clock
}

// New returns the wallets service.
func New(db *store.DB, c clock.Clock) *Service { return &Service{db: db, clock: c} }

// Create makes a wallet in tx, the request's transaction handed to it, or,
// when tx is nil (tests), in one of its own. after, if not nil, runs in the
// same transaction, which it is handed, with the new wallet (the inline
// account of the request).
func (s *Service) Create(ctx context.Context, tx *ent.Tx, in CreateInput, after func(ctx context.Context, tx *ent.Tx, w *ent.Wallet) error) (*ent.Wallet, error) {
	var f apperr.Fields
	Validate(in, &f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	ref := uuid.NewString()
	if in.Reference != nil {
		ref = *in.Reference
	}
	docs := make([]schematype.Document, len(in.Documents))
	for i, d := range in.Documents {
		docs[i] = schematype.Document{DocumentType: *d.DocumentType, DocumentFile: *d.DocumentFile,
			DocumentFileType: *d.DocumentFileType, DocumentNo: strings.TrimSpace(*d.DocumentNo)}
	}
	var w *ent.Wallet
	err := s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		exists, err := c.Wallet.Query().Where(wallet.Reference(ref)).Exist(ctx)
		if err != nil {
			return err
		}
		if exists {
			return duplicate(ref)
		}
		now := s.clock.Now()
		w, err = c.Wallet.Create().SetID(uuid.NewString()).SetReference(ref).
			SetFirstname(strings.TrimSpace(*in.Firstname)).SetLastname(strings.TrimSpace(*in.Lastname)).
			SetEmail(*in.Email).SetPhone(*in.Phone).SetDocuments(docs).
			SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		if store.IsUniqueViolation(err) {
			return duplicate(ref)
		}
		if err != nil {
			return err
		}
		if after != nil {
			return after(ctx, tx, w)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

func duplicate(ref string) error {
	return &apperr.Error{Kind: apperr.DuplicateReference,
		Message: fmt.Sprintf("a wallet with wallet_reference %q already exists", ref),
		Fields:  []apperr.FieldError{{Field: "wallet_reference", Message: "is already used by another wallet"}}}
}

// Get finds a wallet of the context's tenant by reference, in tx, the
// caller's transaction, or outside any when tx is nil.
func (s *Service) Get(ctx context.Context, tx *ent.Tx, ref string) (*ent.Wallet, error) {
	return GetIn(ctx, s.db.ClientOf(tx), ref)
}

// GetIn is Get with c, the client of the caller's transaction.
func GetIn(ctx context.Context, c *ent.Client, ref string) (*ent.Wallet, error) {
	w, err := c.Wallet.Query().Where(wallet.Reference(ref)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no wallet with wallet_reference %q", ref)
	}
	return w, store.Classify(err)
}

// List returns a page of the tenant's wallets, newest first.
func (s *Service) List(ctx context.Context, p page.Params) ([]*ent.Wallet, page.Info, error) {
	q := s.db.Reader().Wallet.Query()
	if p.After != nil {
		q = q.Where(wallet.Or(
			wallet.CreatedAtLT(p.After.Time),
			wallet.And(wallet.CreatedAt(p.After.Time), wallet.IDLT(p.After.ID)),
		))
	}
	rows, err := q.Order(ent.Desc(wallet.FieldCreatedAt), ent.Desc(wallet.FieldID)).Limit(p.Limit + 1).All(ctx)
	if err != nil {
		return nil, page.Info{}, store.Classify(err)
	}
	rows, info := page.Cut(rows, p.Limit, func(w *ent.Wallet) page.Cursor { return page.Cursor{Time: w.CreatedAt, ID: w.ID} })
	return rows, info, nil
}

// CursorID is the form of the ids in wallets' cursors.
var CursorID page.IDForm = page.UUID

// FullName is the wallet's display name.
func FullName(w *ent.Wallet) string { return w.Firstname + " " + w.Lastname }
