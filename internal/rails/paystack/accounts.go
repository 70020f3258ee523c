package paystack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
)

// DefaultCustomerEmailDomain is the domain of the e-mail address that
// identifies, at Paystack, the customer of one virtual account (see
// customerEmail) unless WithCustomerEmailDomain says otherwise. Addresses
// under .invalid are never delivered.
const DefaultCustomerEmailDomain = "accounts.merchantpay.invalid"

type resolveData struct {
	AccountNumber string `json:"account_number"`
	AccountName   string `json:"account_name"`
}

// ResolveAccount is the name enquiry, GET /bank/resolve. Paystack's refusal
// (it answers 422 when the bank knows no such account) is
// apperr.AccountNotResolved.
func (c *Client) ResolveAccount(ctx context.Context, bankCode, accountNumber string) (string, error) {
	const path = "/bank/resolve"
	a, err := c.call(ctx, http.MethodGet, path, url.Values{"account_number": {accountNumber}, "bank_code": {bankCode}}, nil)
	if err != nil {
		return "", err
	}
	if a.refused() {
		if a.httpStatus == http.StatusUnauthorized || a.httpStatus == http.StatusForbidden {
			return "", c.refusal(http.MethodGet, path, a)
		}
		return "", apperr.Wrap(apperr.AccountNotResolved, errors.New("paystack: "+c.caller.Quote(a.env.Message, maxQuoted)),
			"account %s could not be resolved at bank %s", accountNumber, bankCode)
	}
	var d resolveData
	if err := c.decodeData(http.MethodGet, path, a, &d); err != nil {
		return "", err
	}
	if d.AccountNumber != "" && d.AccountNumber != accountNumber {
		return "", c.unknown(http.MethodGet, path, "the answer names another account number")
	}
	name := strings.TrimSpace(d.AccountName)
	if name == "" {
		return "", apperr.New(apperr.AccountNotResolved, "account %s could not be resolved at bank %s", accountNumber, bankCode)
	}
	return name, nil
}

// customerEmail is the e-mail address of the Paystack customer that owns
// the virtual account of our account reference. Paystack answers POST
// /customer for a known address with the existing customer, so asking again
// for the same reference finds the same customer, and through it the same
// account.
func (c *Client) customerEmail(reference string) string {
	return "va-" + ProviderReference(reference) + "@" + c.emailDomain
}

type customerRequest struct {
	Email     string            `json:"email"`
	FirstName string            `json:"first_name,omitempty"`
	LastName  string            `json:"last_name,omitempty"`
	Phone     string            `json:"phone,omitempty"`
	Metadata  map[string]string `json:"metadata"`
}

type customerData struct {
	ID           objectID `json:"id"`
	CustomerCode string   `json:"customer_code"`
}

type dedicatedAccountRequest struct {
	Customer      string `json:"customer"`
	PreferredBank string `json:"preferred_bank"`
	FirstName     string `json:"first_name,omitempty"`
	LastName      string `json:"last_name,omitempty"`
	Phone         string `json:"phone,omitempty"`
}

type dedicatedAccount struct {
	AccountNumber string `json:"account_number"`
	AccountName   string `json:"account_name"`
	Currency      string `json:"currency"`
	Active        bool   `json:"active"`
	Bank          struct {
		Name string `json:"name"`
		Slug string `json:"slug"`
	} `json:"bank"`
	Customer struct {
		CustomerCode string `json:"customer_code"`
	} `json:"customer"`
}

// CreateVirtualAccount issues a dedicated NGN account at the preferred
// bank: the customer (POST /customer, under the address derived from
// req.Reference), then the customer's active account if it has one (GET
// /dedicated_account), else a new one (POST /dedicated_account). So a retry
// after a timeout or a crash finds the account made the first time.
func (c *Client) CreateVirtualAccount(ctx context.Context, req rails.VirtualAccountRequest) (rails.VirtualAccount, error) {
	if req.Reference == "" {
		return rails.VirtualAccount{}, errors.New("paystack: a virtual account needs a reference")
	}
	cust, err := c.customer(ctx, req)
	if err != nil {
		return rails.VirtualAccount{}, err
	}
	if acc, ok, err := c.activeAccount(ctx, cust); err != nil || ok {
		return acc, err
	}
	const path = "/dedicated_account"
	a, err := c.call(ctx, http.MethodPost, path, nil, dedicatedAccountRequest{Customer: cust.CustomerCode,
		PreferredBank: c.preferredBank, FirstName: req.FirstName, LastName: req.LastName, Phone: req.Phone})
	if err != nil {
		return rails.VirtualAccount{}, err
	}
	if a.refused() {
		// Another attempt may have made the account meanwhile.
		if acc, ok, err := c.activeAccount(ctx, cust); err != nil || ok {
			return acc, err
		}
		return rails.VirtualAccount{}, c.declined(http.MethodPost, path, a)
	}
	var d dedicatedAccount
	if err := c.decodeData(http.MethodPost, path, a, &d); err != nil {
		return rails.VirtualAccount{}, err
	}
	return c.virtualAccount(http.MethodPost, path, d, cust)
}

// customer is POST /customer for the address derived from req.Reference.
func (c *Client) customer(ctx context.Context, req rails.VirtualAccountRequest) (customerData, error) {
	const path = "/customer"
	a, err := c.call(ctx, http.MethodPost, path, nil, customerRequest{Email: c.customerEmail(req.Reference),
		FirstName: req.FirstName, LastName: req.LastName, Phone: req.Phone,
		Metadata: map[string]string{"account_reference": req.Reference}})
	if err != nil {
		return customerData{}, err
	}
	if a.refused() {
		return customerData{}, c.declined(http.MethodPost, path, a)
	}
	var d customerData
	if err := c.decodeData(http.MethodPost, path, a, &d); err != nil {
		return customerData{}, err
	}
	if d.CustomerCode == "" || d.ID == "" {
		return customerData{}, c.unknown(http.MethodPost, path, "the customer has no customer_code or id")
	}
	return d, nil
}

// activeAccount finds the customer's active NGN dedicated account, if any
// (GET /dedicated_account?active=true&currency=NGN&customer=<id>).
func (c *Client) activeAccount(ctx context.Context, cust customerData) (rails.VirtualAccount, bool, error) {
	const path = "/dedicated_account"
	a, err := c.call(ctx, http.MethodGet, path, url.Values{"active": {"true"}, "currency": {string(money.NGN)},
		"customer": {string(cust.ID)}}, nil)
	if err != nil {
		return rails.VirtualAccount{}, false, err
	}
	if a.refused() {
		return rails.VirtualAccount{}, false, c.declined(http.MethodGet, path, a)
	}
	var list []dedicatedAccount
	if err := c.decodeData(http.MethodGet, path, a, &list); err != nil {
		return rails.VirtualAccount{}, false, err
	}
	for _, d := range list {
		if d.Active && (d.Currency == "" || d.Currency == string(money.NGN)) &&
			(d.Customer.CustomerCode == "" || d.Customer.CustomerCode == cust.CustomerCode) {
			acc, err := c.virtualAccount(http.MethodGet, path, d, cust)
			return acc, err == nil, err
		}
	}
	return rails.VirtualAccount{}, false, nil
}

// virtualAccount reads a dedicated account, naming its bank by the bank
// list's code when the list knows the bank (by slug, else by name).
func (c *Client) virtualAccount(method, path string, d dedicatedAccount, cust customerData) (rails.VirtualAccount, error) {
	if !banks.IsAccountNumber(d.AccountNumber) {
		return rails.VirtualAccount{}, c.unknown(method, path, "the dedicated account number is not 10 digits")
	}
	if d.Currency != "" && d.Currency != string(money.NGN) {
		return rails.VirtualAccount{}, fmt.Errorf("paystack: dedicated account in %q, not NGN", c.caller.Quote(d.Currency, maxQuoted))
	}
	return rails.VirtualAccount{AccountNumber: d.AccountNumber, AccountName: d.AccountName, BankName: d.Bank.Name,
		BankCode: c.bankCode(d.Bank.Slug, d.Bank.Name), CustomerCode: cust.CustomerCode}, nil
}

// bankCode is the code of the bank-list entry with this slug, else with
// this name; empty when the list knows neither.
func (c *Client) bankCode(slug, name string) string {
	list := c.dir.Nigeria()
	for _, b := range list {
		if slug != "" && b.Slug == slug {
			return b.Code
		}
	}
	for _, b := range list {
		if name != "" && strings.EqualFold(b.Name, strings.TrimSpace(name)) {
			return b.Code
		}
	}
	return ""
}
