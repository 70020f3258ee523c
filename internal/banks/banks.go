// Package banks holds the Nigerian and Ghanaian bank lists embedded in the
// binary, in the shapes GET /misc/banks answers (a Nigerian bank is name,
// slug, code and country; a Ghanaian one is id, code, name and its branches),
// and the CBN NUBAN check-digit algorithm.
//
// The lists are compiled from public sources: the Nigerian one in the shape of
// Paystack's bank list, the Ghanaian one in Flutterwave's bank and branch
// shape. Load parses and validates them; a Directory is immutable after Load
// and safe for concurrent use. Every method that returns a bank or a slice
// returns a copy, so callers cannot change the Directory.
package banks

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

//go:embed data/banks-ng.json
var ngJSON []byte

//go:embed data/banks-gh.json
var ghJSON []byte

// Country codes of the two lists.
const (
	CountryNG = "NG"
	CountryGH = "GH"
)

// Institution types that may appear in NGBank.Type (empty when unconfirmed).
const (
	TypeCommercial     = "commercial"
	TypeMerchant       = "merchant"
	TypeMicrofinance   = "microfinance"
	TypeMobileMoney    = "mobile_money"
	TypePaymentService = "payment_service"
)

// NGBank is one entry of the Nigerian list, in Paystack's /bank shape plus two
// internal fields. Code is the code used for transfers: the 3-digit CBN code
// for deposit-money banks, a longer Paystack code for other institutions.
// NIPCode (6-digit NIBSS institution code) and Type may be empty.
type NGBank struct {
	Name    string `json:"name"`
	Slug    string `json:"slug"`
	Code    string `json:"code"`
	Country string `json:"country"`
	NIPCode string `json:"nip_code,omitempty"`
	Type    string `json:"type,omitempty"`
}

// NGBankPublic is the REST shape of a Nigerian list entry, as
// GET /misc/banks?country=NG answers it: name, slug, code, country only.
type NGBankPublic struct {
	Name    string `json:"name"`
	Slug    string `json:"slug"`
	Code    string `json:"code"`
	Country string `json:"country"`
}

// Public returns the REST shape of b, without NIPCode and Type.
func (b NGBank) Public() NGBankPublic {
	return NGBankPublic{Name: b.Name, Slug: b.Slug, Code: b.Code, Country: b.Country}
}

// GHBank is one entry of the Ghanaian list, in the spec's (Flutterwave) shape,
// which is also the REST shape. Code is "GH" + 2-digit Bank of Ghana code +
// "0100".
type GHBank struct {
	ID       int        `json:"id"`
	Code     string     `json:"code"`
	Name     string     `json:"name"`
	Branches []GHBranch `json:"branches"`
}

// GHBranch is a branch of a Ghanaian bank. BranchCode is "GH" + the 6-digit
// Bank of Ghana sort code; its first 4 characters equal its bank's. SwiftCode
// and BIC may be empty.
type GHBranch struct {
	ID         int    `json:"id"`
	BranchCode string `json:"branch_code"`
	BranchName string `json:"branch_name"`
	SwiftCode  string `json:"swift_code"`
	BIC        string `json:"bic"`
	BankID     int    `json:"bank_id"`
}

type branchRef struct{ bank, branch int }

// Directory is the validated, indexed pair of bank lists. Build it with Load.
type Directory struct {
	ng       []NGBank
	gh       []GHBank
	ngByCode map[string]int
	ghByCode map[string]int
	ghBranch map[string]branchRef // branch code → position
}

// Load parses and validates the embedded lists. It fails only if the embedded
// data is inconsistent, so callers should treat an error as fatal at start-up.
// Parse once and share the *Directory.
func Load() (*Directory, error) {
	return parse(ngJSON, ghJSON)
}

func parse(ngData, ghData []byte) (*Directory, error) {
	var ng []NGBank
	if err := decodeStrict(ngData, &ng); err != nil {
		return nil, fmt.Errorf("banks: banks-ng.json: %w", err)
	}
	var gh []GHBank
	if err := decodeStrict(ghData, &gh); err != nil {
		return nil, fmt.Errorf("banks: banks-gh.json: %w", err)
	}
	d := &Directory{
		ng:       ng,
		gh:       gh,
		ngByCode: make(map[string]int, len(ng)),
		ghByCode: make(map[string]int, len(gh)),
		ghBranch: make(map[string]branchRef),
	}
	if err := d.indexNG(); err != nil {
		return nil, fmt.Errorf("banks: banks-ng.json: %w", err)
	}
	if err := d.indexGH(); err != nil {
		return nil, fmt.Errorf("banks: banks-gh.json: %w", err)
	}
	return d, nil
}

// decodeStrict decodes exactly one JSON value into v, rejecting unknown keys
// and trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the list")
	}
	return nil
}

func (d *Directory) indexNG() error {
	if len(d.ng) == 0 {
		return errors.New("empty list")
	}
	slugs := make(map[string]bool, len(d.ng))
	names := make(map[string]bool, len(d.ng))
	nips := make(map[string]bool, len(d.ng))
	for i, b := range d.ng {
		switch {
		case b.Name == "":
			return fmt.Errorf("entry %d: empty name", i)
		case !isAlnum(b.Code) || len(b.Code) > 16:
			return fmt.Errorf("entry %d (%s): bad code %q", i, b.Name, b.Code)
		case !isSlug(b.Slug):
			return fmt.Errorf("entry %d (%s): bad slug %q", i, b.Name, b.Slug)
		case b.Country != CountryNG:
			return fmt.Errorf("entry %d (%s): country %q, want NG", i, b.Name, b.Country)
		case b.NIPCode != "" && !isDigits(b.NIPCode, 6):
			return fmt.Errorf("entry %d (%s): bad nip_code %q", i, b.Name, b.NIPCode)
		}
		switch b.Type {
		case "", TypeCommercial, TypeMerchant, TypeMicrofinance, TypeMobileMoney, TypePaymentService:
		default:
			return fmt.Errorf("entry %d (%s): unknown type %q", i, b.Name, b.Type)
		}
		if _, dup := d.ngByCode[b.Code]; dup {
			return fmt.Errorf("duplicate code %q", b.Code)
		}
		if slugs[b.Slug] {
			return fmt.Errorf("duplicate slug %q", b.Slug)
		}
		if names[b.Name] {
			return fmt.Errorf("duplicate name %q", b.Name)
		}
		if b.NIPCode != "" && nips[b.NIPCode] {
			return fmt.Errorf("duplicate nip_code %q", b.NIPCode)
		}
		d.ngByCode[b.Code] = i
		slugs[b.Slug], names[b.Name] = true, true
		if b.NIPCode != "" {
			nips[b.NIPCode] = true
		}
	}
	return nil
}

func (d *Directory) indexGH() error {
	if len(d.gh) == 0 {
		return errors.New("empty list")
	}
	bankIDs := make(map[int]bool, len(d.gh))
	branchIDs := make(map[int]bool)
	for i := range d.gh {
		b := &d.gh[i]
		switch {
		case b.Name == "":
			return fmt.Errorf("bank %d: empty name", i)
		case b.ID <= 0:
			return fmt.Errorf("bank %q: bad id %d", b.Code, b.ID)
		case !isGHCode(b.Code) || b.Code[4:] != "0100":
			return fmt.Errorf("bank %q (%s): bad code, want GHnn0100", b.Code, b.Name)
		}
		if _, dup := d.ghByCode[b.Code]; dup {
			return fmt.Errorf("duplicate bank code %q", b.Code)
		}
		if bankIDs[b.ID] {
			return fmt.Errorf("duplicate bank id %d", b.ID)
		}
		d.ghByCode[b.Code] = i
		bankIDs[b.ID] = true
		if b.Branches == nil {
			b.Branches = []GHBranch{} // the REST shape wants [], not null
		}
		for j, br := range b.Branches {
			switch {
			case br.BranchName == "":
				return fmt.Errorf("bank %q branch %d: empty name", b.Code, j)
			case br.ID <= 0:
				return fmt.Errorf("branch %q: bad id %d", br.BranchCode, br.ID)
			case !isGHCode(br.BranchCode):
				return fmt.Errorf("bank %q branch %d: bad branch code %q", b.Code, j, br.BranchCode)
			case br.BranchCode[:4] != b.Code[:4]:
				return fmt.Errorf("branch %q: code prefix differs from bank %q", br.BranchCode, b.Code)
			case br.BankID != b.ID:
				return fmt.Errorf("branch %q: bank_id %d, want %d", br.BranchCode, br.BankID, b.ID)
			}
			if _, dup := d.ghBranch[br.BranchCode]; dup {
				return fmt.Errorf("duplicate branch code %q", br.BranchCode)
			}
			if branchIDs[br.ID] {
				return fmt.Errorf("duplicate branch id %d", br.ID)
			}
			d.ghBranch[br.BranchCode] = branchRef{i, j}
			branchIDs[br.ID] = true
		}
	}
	return nil
}

// Nigeria returns the Nigerian list in file order (by name, ignoring case, as
// Paystack sorts it).
func (d *Directory) Nigeria() []NGBank {
	return slices.Clone(d.ng)
}

// NigeriaPublic returns the Nigerian list in REST shape, in the same order as
// Nigeria.
func (d *Directory) NigeriaPublic() []NGBankPublic {
	out := make([]NGBankPublic, len(d.ng))
	for i, b := range d.ng {
		out[i] = b.Public()
	}
	return out
}

// Ghana returns the Ghanaian list with branches, in file order (by name).
func (d *Directory) Ghana() []GHBank {
	out := make([]GHBank, len(d.gh))
	for i, b := range d.gh {
		out[i] = cloneGH(b)
	}
	return out
}

// NGByCode finds a Nigerian bank by its exact code (e.g. "035", "50211").
func (d *Directory) NGByCode(code string) (NGBank, bool) {
	i, ok := d.ngByCode[code]
	if !ok {
		return NGBank{}, false
	}
	return d.ng[i], true
}

// GHByCode finds a Ghanaian bank, with its branches, by its exact code
// (e.g. "GH190100").
func (d *Directory) GHByCode(code string) (GHBank, bool) {
	i, ok := d.ghByCode[code]
	if !ok {
		return GHBank{}, false
	}
	return cloneGH(d.gh[i]), true
}

// GHBranch finds a branch by its exact code, only if it belongs to the bank
// with the exact code bankCode.
func (d *Directory) GHBranch(bankCode, branchCode string) (GHBranch, bool) {
	r, ok := d.ghBranch[branchCode]
	if !ok || d.gh[r.bank].Code != bankCode {
		return GHBranch{}, false
	}
	return d.gh[r.bank].Branches[r.branch], true
}

// BranchBelongsTo reports whether branchCode is a listed branch of the listed
// bank bankCode (exact codes).
func (d *Directory) BranchBelongsTo(bankCode, branchCode string) bool {
	_, ok := d.GHBranch(bankCode, branchCode)
	return ok
}

func cloneGH(b GHBank) GHBank {
	b.Branches = slices.Clone(b.Branches)
	if b.Branches == nil {
		b.Branches = []GHBranch{}
	}
	return b
}

func isDigits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isAlnum(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// isSlug: lowercase letters and digits in hyphen-separated words.
func isSlug(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'z':
		case c == '-' && s[i-1] != '-':
		default:
			return false
		}
	}
	return true
}

// isGHCode: "GH" followed by 6 digits.
func isGHCode(s string) bool {
	return len(s) == 8 && s[:2] == "GH" && isDigits(s[2:], 6)
}
