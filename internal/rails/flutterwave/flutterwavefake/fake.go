// Package flutterwavefake is an in-memory Flutterwave v3 for tests and local
// runs: the transfer endpoints the adapter uses, checked the way the
// provider documents them (Bearer key, fields, major-unit amounts, a branch
// code for Ghana, unique references), with controls to fail calls, end
// transfers and send transfer.completed webhooks.
package flutterwavefake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"merchantpay/internal/rails/railsfake"
)

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// Transfer is a transfer the fake holds. Amount is the major-unit number as
// the request wrote it.
type Transfer struct {
	ID                    int64
	Reference             string
	AccountBank           string
	AccountNumber         string
	Amount                json.Number
	Currency              string
	Narration             string
	DestinationBranchCode string
	BeneficiaryName       string
	Status                string
	CompleteMessage       string
	CreatedAt             time.Time
}

// Fake is the in-memory provider; its zero value is not usable, call New.
type Fake struct {
	secretKey   string
	webhookHash string

	mu        sync.Mutex
	nextID    int64
	transfers []*Transfer

	*railsfake.Base[Request]
}

// New makes a fake that accepts secretKey and signs its webhooks with
// webhookHash.
func New(secretKey, webhookHash string) *Fake {
	return &Fake{secretKey: secretKey, webhookHash: webhookHash, nextID: 1000,
		Base: railsfake.NewBase[Request](serviceUnavailable)}
}

// Start makes a fake and serves it on loopback; Close stops it.
func Start(secretKey, webhookHash string) *Fake {
	f := New(secretKey, webhookHash)
	f.Serve(f)
	return f
}

func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.Handle(w, r, func(r *http.Request, body []byte) Request {
		return Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body}
	}, f.route)
}

// route answers one request; callers hold no lock.
func (f *Fake) route(r *http.Request, body []byte) (int, any) {
	if r.Header.Get("Authorization") != "Bearer "+f.secretKey {
		return http.StatusUnauthorized, errorBody("Invalid authorization key")
	}
	path := r.URL.Path
	switch {
	case path == "/v3/transfers" && r.Method == http.MethodPost:
		return f.create(r, body)
	case path == "/v3/transfers" && r.Method == http.MethodGet:
		return f.list(r.URL.Query().Get("reference"))
	case strings.HasPrefix(path, "/v3/transfers/") && r.Method == http.MethodGet:
		return f.get(strings.TrimPrefix(path, "/v3/transfers/"))
	}
	return http.StatusNotFound, errorBody("Route not found")
}

func (f *Fake) list(reference string) (int, any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []map[string]any{}
	for _, t := range f.transfers {
		if reference == "" || t.Reference == reference {
			out = append(out, t.object())
		}
	}
	return http.StatusOK, map[string]any{"status": "success", "message": "Transfers fetched", "data": out,
		"meta": map[string]any{"page_info": map[string]any{"total": len(out), "current_page": 1, "total_pages": 1}}}
}

func (f *Fake) get(id string) (int, any) {
	n, err := strconv.ParseInt(id, 10, 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	if t := f.byID(n); err == nil && t != nil {
		return http.StatusOK, successBody("Transfer fetched", t.object())
	}
	return http.StatusNotFound, errorBody("No transfer found")
}

func (f *Fake) byID(id int64) *Transfer {
	for _, t := range f.transfers {
		if t.ID == id {
			return t
		}
	}
	return nil
}

func (f *Fake) byReference(ref string) *Transfer {
	for _, t := range f.transfers {
		if t.Reference == ref {
			return t
		}
	}
	return nil
}

// object is the transfer as Flutterwave writes it.
func (t *Transfer) object() map[string]any {
	return map[string]any{
		"id": t.ID, "account_number": t.AccountNumber, "bank_code": t.AccountBank,
		"full_name": t.BeneficiaryName, "created_at": t.CreatedAt.Format(time.RFC3339),
		"currency": t.Currency, "debit_currency": t.Currency, "amount": t.Amount, "fee": json.Number("10"),
		"status": t.Status, "reference": t.Reference, "meta": nil, "narration": t.Narration,
		"complete_message": t.CompleteMessage, "requires_approval": 0, "is_approved": 1,
		"bank_name": "FAKE BANK " + t.AccountBank,
	}
}

func successBody(msg string, data any) map[string]any {
	return map[string]any{"status": "success", "message": msg, "data": data}
}

func errorBody(msg string) map[string]any {
	return map[string]any{"status": "error", "message": msg, "data": nil}
}
