package paystackfake

import (
	"fmt"
	mathrand "math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"merchantpay/internal/banks"
)

// AddAccount makes an account known to its bank: the name enquiry resolves
// it to name, and it may be a transfer recipient.
func (f *Fake) AddAccount(bankCode, accountNumber, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accounts[bankCode+"/"+accountNumber] = name
}

// resolve is GET /bank/resolve.
func (f *Fake) resolve(w http.ResponseWriter, q url.Values) {
	account, bankCode := q.Get("account_number"), q.Get("bank_code")
	if !banks.IsAccountNumber(account) || bankCode == "" {
		writeError(w, http.StatusBadRequest, "validation_error", "invalid_params",
			"account_number (10 digits) and bank_code are required")
		return
	}
	bank, ok := f.dir.NGByCode(bankCode)
	if !ok {
		writeError(w, http.StatusBadRequest, "validation_error", "invalid_params", "Unknown bank code: "+bankCode)
		return
	}
	f.mu.Lock()
	name, ok := f.accounts[bankCode+"/"+account]
	f.mu.Unlock()
	if !ok {
		writeError(w, http.StatusUnprocessableEntity, "validation_error", "invalid_bank_account",
			"Could not resolve account name. Check parameters or try again.")
		return
	}
	writeOK(w, http.StatusOK, "Account number resolved",
		map[string]any{"account_number": account, "account_name": name, "bank_id": bankID(bank.Code)})
}

// bankID is a stable numeric id for a bank code, as Paystack's bank_id.
func bankID(code string) int {
	n := 0
	for _, c := range code {
		n = n*31 + int(c)
	}
	return n%10000 + 1
}

type customer struct {
	ID                        int64
	Code                      string
	Email, First, Last, Phone string
}

func (c *customer) json() map[string]any {
	return map[string]any{"id": c.ID, "customer_code": c.Code, "email": c.Email, "first_name": c.First,
		"last_name": c.Last, "phone": c.Phone, "domain": "test", "integration": 100032, "identified": false}
}

// createCustomer is POST /customer; an e-mail already known answers with
// the existing customer.
func (f *Fake) createCustomer(w http.ResponseWriter, body []byte) {
	fm, msg := parseForm(body, "email", "first_name", "last_name", "phone", "metadata")
	if msg != "" {
		writeError(w, http.StatusBadRequest, "validation_error", "invalid_params", msg)
		return
	}
	email := fm.str("email", true)
	first, last, phone := fm.str("first_name", false), fm.str("last_name", false), fm.str("phone", false)
	fm.object("metadata")
	if email != "" && (strings.Count(email, "@") != 1 || strings.HasPrefix(email, "@") || strings.HasSuffix(email, "@")) {
		fm.bad("Invalid Email Address Passed")
	}
	if fm.failed(w) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := strings.ToLower(email)
	c, ok := f.customers[key]
	if !ok {
		c = &customer{ID: f.id(), Code: code("CUS_"), Email: email, First: first, Last: last, Phone: phone}
		f.customers[key] = c
	}
	writeOK(w, http.StatusOK, "Customer created", c.json())
}

// providers are the dedicated-account banks the fake offers (slug, the
// bank list's code or "" when the list has none, name).
var providers = []struct{ slug, code, name string }{
	{"wema-bank", "035", "Wema Bank"},
	{"access-bank", "044", "Access Bank"},
	{"titan-paystack", "100039", "Paystack-Titan"},
	{"test-bank", "", "Test Bank"},
}

type dva struct {
	ID            int64
	AccountNumber string
	AccountName   string
	Slug, Name    string
	Active        bool
	Customer      *customer
}

// DedicatedAccount is a dedicated account as the fake holds it.
type DedicatedAccount struct {
	AccountNumber, AccountName, BankSlug, BankName, CustomerCode, CustomerEmail string
}

func (d *dva) json() map[string]any {
	return map[string]any{"id": d.ID, "account_number": d.AccountNumber, "account_name": d.AccountName,
		"assigned": true, "currency": "NGN", "active": d.Active, "metadata": nil,
		"bank":     map[string]any{"name": d.Name, "id": bankID(d.Slug), "slug": d.Slug},
		"customer": d.Customer.json(), "created_at": now(), "updated_at": now(),
		"assignment": map[string]any{"integration": 100032, "assignee_id": d.Customer.ID,
			"assignee_type": "Customer", "expired": false, "account_type": "PAY-WITH-TRANSFER-RECURRING"}}
}

// DedicatedAccounts returns the dedicated accounts made so far.
func (f *Fake) DedicatedAccounts() []DedicatedAccount {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]DedicatedAccount, 0, len(f.dvas))
	for _, d := range f.dvas {
		out = append(out, DedicatedAccount{AccountNumber: d.AccountNumber, AccountName: d.AccountName,
			BankSlug: d.Slug, BankName: d.Name, CustomerCode: d.Customer.Code, CustomerEmail: d.Customer.Email})
	}
	return out
}

// findCustomer finds a customer by code or numeric id; f.mu held.
func (f *Fake) findCustomer(ref string) *customer {
	for _, c := range f.customers {
		if c.Code == ref || strconv.FormatInt(c.ID, 10) == ref {
			return c
		}
	}
	return nil
}

// listDedicated is GET /dedicated_account (active is required; currency,
// customer and provider_slug filter).
func (f *Fake) listDedicated(w http.ResponseWriter, q url.Values) {
	active, err := strconv.ParseBool(q.Get("active"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "validation_error", "invalid_params", "active is required (true or false)")
		return
	}
	if cur := q.Get("currency"); cur != "" && cur != "NGN" {
		writeOK(w, http.StatusOK, "Managed accounts successfully retrieved", []any{})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []any{}
	for _, d := range f.dvas {
		if d.Active != active || q.Get("customer") != "" && strconv.FormatInt(d.Customer.ID, 10) != q.Get("customer") ||
			q.Get("provider_slug") != "" && d.Slug != q.Get("provider_slug") {
			continue
		}
		out = append(out, d.json())
	}
	writeOK(w, http.StatusOK, "Managed accounts successfully retrieved", out)
}

// createDedicated is POST /dedicated_account. A customer that already holds
// an active account at the bank is refused (Paystack's answer is not
// documented; the adapter looks the account up instead of relying on it).
func (f *Fake) createDedicated(w http.ResponseWriter, body []byte) {
	fm, msg := parseForm(body, "customer", "preferred_bank", "subaccount", "split_code", "first_name", "last_name", "phone")
	if msg != "" {
		writeError(w, http.StatusBadRequest, "validation_error", "invalid_params", msg)
		return
	}
	custRef := fm.str("customer", true)
	slug := fm.str("preferred_bank", true)
	first, last := fm.str("first_name", false), fm.str("last_name", false)
	fm.str("phone", false)
	fm.str("subaccount", false)
	fm.str("split_code", false)
	pi := -1
	for i, p := range providers {
		if p.slug == slug {
			pi = i
		}
	}
	if slug != "" && pi < 0 {
		fm.bad("preferred_bank " + slug + " is not an available provider")
	}
	if fm.failed(w) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.findCustomer(custRef)
	if c == nil {
		writeError(w, http.StatusBadRequest, "validation_error", "invalid_params", "Customer not found")
		return
	}
	for _, d := range f.dvas {
		if d.Customer == c && d.Slug == slug && d.Active {
			writeError(w, http.StatusBadRequest, "validation_error", "invalid_params",
				"Customer already has an active dedicated account with this bank")
			return
		}
	}
	if first == "" {
		first = c.First
	}
	if last == "" {
		last = c.Last
	}
	p := providers[pi]
	d := &dva{ID: f.id(), AccountNumber: f.accountNumber(p.code), Slug: p.slug, Name: p.name, Active: true, Customer: c,
		AccountName: strings.ToUpper(strings.TrimSpace("MERCHANTPAY/" + strings.TrimSpace(first+" "+last)))}
	f.dvas = append(f.dvas, d)
	writeOK(w, http.StatusOK, "NUBAN successfully created", d.json())
}

// accountNumber draws a fresh account number: a valid NUBAN at a bank with
// a 3-digit code, else ten digits. Serials are random, so fakes of several
// tests sharing one database do not issue the same numbers; f.mu held.
func (f *Fake) accountNumber(bankCode string) string {
	for {
		serial := 100_000_000 + mathrand.Uint64N(900_000_000)
		n, err := banks.MakeNUBAN(bankCode, serial)
		if err != nil {
			n = fmt.Sprintf("9%09d", serial)
		}
		if !f.numberUsed(n) {
			return n
		}
	}
}

func (f *Fake) numberUsed(n string) bool {
	for _, d := range f.dvas {
		if d.AccountNumber == n {
			return true
		}
	}
	return false
}
