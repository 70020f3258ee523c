package paystackfake

import (
	"errors"
	"net/http"
	"regexp"

	"merchantpay/internal/banks"
)

// referenceRule is Paystack's transfer-reference rule: lowercase letters,
// digits, '-' and '_', 16 to 50 characters.
var referenceRule = regexp.MustCompile(`^[a-z0-9_-]{16,50}$`)

type recipient struct {
	ID            int64
	Code          string
	Name          string
	AccountName   string // the holder's name at the bank
	AccountNumber string
	BankCode      string
	BankName      string
	Currency      string
	CreatedAt     string
}

func (r *recipient) json() map[string]any {
	return map[string]any{"id": r.ID, "recipient_code": r.Code, "type": "nuban", "name": r.Name,
		"currency": r.Currency, "active": true, "domain": "test", "is_deleted": false, "integration": 100032,
		"createdAt": r.CreatedAt, "updatedAt": r.CreatedAt,
		"details": map[string]any{"authorization_code": nil, "account_number": r.AccountNumber,
			"account_name": r.AccountName, "bank_code": r.BankCode, "bank_name": r.BankName}}
}

// Transfer is a transfer as the fake holds it.
type Transfer struct {
	ID              int64
	Code            string // TRF_…
	Reference       string
	Amount          int64 // kobo
	Currency        string
	Reason          string
	RecipientCode   string
	Status          string
	GatewayResponse string
	CreatedAt       string
	UpdatedAt       string
	TransferredAt   string
}

type transfer struct {
	Transfer
	recipient *recipient
}

// data is the transfer in the shape of verify and the webhooks; the
// recipient is an object there, an id in POST /transfer's answer.
func (t *transfer) data(full bool) map[string]any {
	d := map[string]any{"id": t.ID, "transfer_code": t.Code, "reference": t.Reference, "amount": t.Amount,
		"currency": t.Currency, "status": t.Status, "reason": t.Reason, "source": "balance", "domain": "test",
		"integration": 100032, "createdAt": t.CreatedAt, "updatedAt": t.UpdatedAt, "recipient": t.recipient.ID}
	if full {
		d["recipient"] = t.recipient.json()
		d["session"] = map[string]any{"provider": "nip", "id": nil}
		d["failures"] = nil
		d["fee_charged"] = 1000
		d["gateway_response"] = t.GatewayResponse
		d["transferred_at"] = nilIfEmpty(t.TransferredAt)
		d["created_at"], d["updated_at"] = t.CreatedAt, t.UpdatedAt
	}
	return d
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// createRecipient is POST /transferrecipient for `nuban` recipients. The
// account must resolve at its bank; a known account number at the same bank
// answers with the existing recipient.
func (f *Fake) createRecipient(w http.ResponseWriter, body []byte) {
	fm, msg := parseForm(body, "type", "name", "account_number", "bank_code", "currency", "description", "metadata")
	if msg != "" {
		writeError(w, http.StatusBadRequest, "validation_error", "invalid_params", msg)
		return
	}
	typ := fm.str("type", true)
	name := fm.str("name", true)
	account := fm.str("account_number", true)
	bankCode := fm.str("bank_code", true)
	currency := fm.str("currency", false)
	fm.str("description", false)
	fm.object("metadata")
	if typ != "" && typ != "nuban" {
		fm.bad("type " + typ + " is not served by this fake (only nuban)")
	}
	if account != "" && !banks.IsAccountNumber(account) {
		fm.bad("account_number must be 10 digits")
	}
	bank, known := f.dir.NGByCode(bankCode)
	if bankCode != "" && !known {
		fm.bad("Unknown bank code: " + bankCode)
	}
	if currency != "" && currency != "NGN" {
		fm.bad("currency must be NGN for a nuban recipient")
	}
	if fm.failed(w) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := bankCode + "/" + account
	if r, ok := f.recipients[key]; ok {
		writeOK(w, http.StatusOK, "Transfer recipient created successfully", r.json())
		return
	}
	holder, ok := f.accounts[key]
	if !ok {
		writeError(w, http.StatusBadRequest, "validation_error", "invalid_bank_account",
			"Cannot resolve account")
		return
	}
	r := &recipient{ID: f.id(), Code: code("RCP_"), Name: name, AccountName: holder, AccountNumber: account, BankCode: bankCode,
		BankName: bank.Name, Currency: "NGN", CreatedAt: now()}
	f.recipients[key] = r
	writeOK(w, http.StatusCreated, "Transfer recipient created successfully", r.json())
}

// createTransfer is POST /transfer from the balance. A reference already
// used is refused (Paystack's exact answer is not documented).
func (f *Fake) createTransfer(w http.ResponseWriter, body []byte) {
	fm, msg := parseForm(body, "source", "amount", "recipient", "reference", "reason", "currency")
	if msg != "" {
		writeError(w, http.StatusBadRequest, "validation_error", "invalid_params", msg)
		return
	}
	source := fm.str("source", true)
	amount, amountOK := fm.integer("amount")
	rcp := fm.str("recipient", true)
	ref := fm.str("reference", true)
	reason := fm.str("reason", false)
	currency := fm.str("currency", false)
	if source != "" && source != "balance" {
		fm.bad("source must be balance")
	}
	if amountOK && amount <= 0 {
		fm.bad("amount must be a positive number of kobo")
	}
	if ref != "" && !referenceRule.MatchString(ref) {
		fm.bad("reference must be 16 to 50 lowercase letters, digits, - or _")
	}
	if currency != "" && currency != "NGN" {
		fm.bad("currency must be NGN")
	}
	if fm.failed(w) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var to *recipient
	for _, r := range f.recipients {
		if r.Code == rcp {
			to = r
		}
	}
	if to == nil {
		writeError(w, http.StatusBadRequest, "validation_error", "invalid_transfer_recipient", "Recipient specified is invalid")
		return
	}
	if _, used := f.transfers[ref]; used {
		writeError(w, http.StatusBadRequest, "validation_error", "duplicate_reference", "Duplicate Transfer Reference")
		return
	}
	at := now()
	t := &transfer{Transfer: Transfer{ID: f.id(), Code: code("TRF_"), Reference: ref, Amount: amount, Currency: "NGN",
		Reason: reason, RecipientCode: to.Code, Status: "pending", CreatedAt: at, UpdatedAt: at}, recipient: to}
	f.transfers[ref] = t
	writeOK(w, http.StatusOK, "Transfer has been queued", t.data(false))
}

// verifyTransfer is GET /transfer/verify/:reference.
func (f *Fake) verifyTransfer(w http.ResponseWriter, ref string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.transfers[ref]
	if !ok {
		writeError(w, http.StatusNotFound, "validation_error", "transfer_not_found", "Transfer not found")
		return
	}
	writeOK(w, http.StatusOK, "Transfer retrieved", t.data(true))
}

// Transfer returns the transfer under a Paystack reference.
func (f *Fake) Transfer(ref string) (Transfer, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.transfers[ref]
	if !ok {
		return Transfer{}, false
	}
	return t.Transfer, true
}

// TransferCount is how many transfers the fake holds.
func (f *Fake) TransferCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.transfers)
}

// ErrNoTransfer is the answer of Settle, Fail and Reverse for an unknown
// reference; ErrWrongState for a move the transfer's status does not allow.
var (
	ErrNoTransfer = errors.New("paystackfake: no transfer under this reference")
	ErrWrongState = errors.New("paystackfake: the transfer's status does not allow this")
)

// Settle marks a pending transfer paid (status success).
func (f *Fake) Settle(ref string) error {
	return f.move(ref, "success", "Approved", "pending", "received", "otp")
}

// Fail marks a pending transfer failed with Paystack's gateway response.
func (f *Fake) Fail(ref, gatewayResponse string) error {
	return f.move(ref, "failed", gatewayResponse, "pending", "received", "otp")
}

// Reverse marks a paid transfer reversed: the money came back.
func (f *Fake) Reverse(ref string) error {
	return f.move(ref, "reversed", "Reversed by the beneficiary bank", "success")
}

func (f *Fake) move(ref, to, gateway string, from ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.transfers[ref]
	if !ok {
		return ErrNoTransfer
	}
	if !contains(from, t.Status) {
		return ErrWrongState
	}
	t.Status, t.GatewayResponse, t.UpdatedAt = to, gateway, now()
	if to == "success" {
		t.TransferredAt = t.UpdatedAt
	}
	return nil
}
