package flutterwavefake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

var (
	digits     = regexp.MustCompile(`^[0-9]{1,20}$`)
	jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`)
)

// create checks a POST /v3/transfers the way Flutterwave documents its
// fields and queues the transfer as NEW.
func (f *Fake) create(r *http.Request, body []byte) (int, any) {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return http.StatusBadRequest, errorBody("Content-Type must be application/json")
	}
	var in map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return http.StatusBadRequest, errorBody("Invalid JSON body")
	}
	var problems []string
	str := func(field string, required bool, max int) string {
		raw, ok := in[field]
		if !ok {
			if required {
				problems = append(problems, field+" is required")
			}
			return ""
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			problems = append(problems, field+" must be a string")
			return ""
		}
		if (required && s == "") || len(s) > max {
			problems = append(problems, fmt.Sprintf("%s must have 1 to %d characters", field, max))
		}
		return s
	}
	t := &Transfer{
		AccountBank:           str("account_bank", true, 20),
		AccountNumber:         str("account_number", true, 20),
		Currency:              str("currency", true, 3),
		Narration:             str("narration", false, 100),
		Reference:             str("reference", true, 100),
		DestinationBranchCode: str("destination_branch_code", false, 10),
		BeneficiaryName:       str("beneficiary_name", false, 100),
		Status:                "NEW",
	}
	if t.AccountNumber != "" && !digits.MatchString(t.AccountNumber) {
		problems = append(problems, "account_number must be digits")
	}
	if t.Currency != "" && t.Currency != "NGN" && t.Currency != "GHS" {
		problems = append(problems, "currency must be NGN or GHS")
	}
	if t.Currency == "GHS" && t.DestinationBranchCode == "" {
		problems = append(problems, "destination_branch_code is required for GHS transfers")
	}
	t.Amount, problems = majorAmount(in["amount"], problems)
	if len(problems) > 0 {
		return http.StatusBadRequest, errorBody(strings.Join(problems, "; "))
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byReference(t.Reference) != nil {
		return http.StatusBadRequest, errorBody("Transfer with reference " + t.Reference + " already exists")
	}
	f.nextID++
	t.ID = f.nextID
	t.CreatedAt = time.Now().UTC().Truncate(time.Second)
	f.transfers = append(f.transfers, t)
	return http.StatusOK, successBody("Transfer Queued Successfully", t.object())
}

// majorAmount checks that amount is a JSON number (not a string) above zero
// with at most two decimals: major units of NGN or GHS.
func majorAmount(raw json.RawMessage, problems []string) (json.Number, []string) {
	if raw == nil {
		return "", append(problems, "amount is required")
	}
	s := string(bytes.TrimSpace(raw))
	if !jsonNumber.MatchString(s) {
		return "", append(problems, "amount must be a number in major units")
	}
	d, err := decimal.NewFromString(s)
	if err != nil || d.Sign() <= 0 {
		return "", append(problems, "amount must be greater than 0")
	}
	if d.Exponent() < -2 && !d.Equal(d.Truncate(2)) {
		return "", append(problems, "amount must have at most 2 decimal places")
	}
	return json.Number(s), problems
}
