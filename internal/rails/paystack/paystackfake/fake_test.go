package paystackfake

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

const key = "sk_test_fake_unit_key_0001"

type reply struct {
	Status  bool            `json:"status"`
	Message string          `json:"message"`
	Code    string          `json:"code"`
	Type    string          `json:"type"`
	Data    json.RawMessage `json:"data"`
}

func call(t *testing.T, f *Fake, method, path, auth, body string) (int, reply) {
	t.Helper()
	req, _ := http.NewRequest(method, f.URL()+path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r reply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s %s: answer is not JSON: %v", method, path, err)
	}
	return resp.StatusCode, r
}

func TestFakeChecksKeyAndFields(t *testing.T) {
	f := New(key)
	defer f.Close()
	f.AddAccount("058", "0123456789", "ADA OBI")
	bearer := "Bearer " + key
	for _, auth := range []string{"", key, "Bearer sk_test_other", "bearer " + key} {
		if st, r := call(t, f, http.MethodGet, "/bank/resolve?account_number=0123456789&bank_code=058", auth, ""); st != 401 || r.Status {
			t.Errorf("auth %q: HTTP %d %+v", auth, st, r)
		}
	}
	st, r := call(t, f, http.MethodPost, "/transferrecipient", bearer,
		`{"type":"nuban","name":"Ada","account_number":"0123456789","bank_code":"058","currency":"NGN"}`)
	var rcp struct {
		Code string `json:"recipient_code"`
	}
	_ = json.Unmarshal(r.Data, &rcp)
	if st != 201 || !r.Status || !strings.HasPrefix(rcp.Code, "RCP_") {
		t.Fatalf("recipient: HTTP %d %+v", st, r)
	}
	st, r = call(t, f, http.MethodPost, "/transferrecipient", bearer,
		`{"type":"nuban","name":"Ada O","account_number":"0123456789","bank_code":"058"}`)
	var again struct {
		Code string `json:"recipient_code"`
	}
	_ = json.Unmarshal(r.Data, &again)
	if st != 200 || again.Code != rcp.Code {
		t.Fatalf("same account again: HTTP %d %s, want the existing %s", st, again.Code, rcp.Code)
	}
	good := `"source":"balance","recipient":"` + rcp.Code + `","currency":"NGN"`
	for name, body := range map[string]string{
		"amount as string":   `{` + good + `,"amount":"1000","reference":"ref-0000000000000001"}`,
		"amount with cents":  `{` + good + `,"amount":1000.5,"reference":"ref-0000000000000001"}`,
		"amount exponent":    `{` + good + `,"amount":1e3,"reference":"ref-0000000000000001"}`,
		"amount zero":        `{` + good + `,"amount":0,"reference":"ref-0000000000000001"}`,
		"upper-case ref":     `{` + good + `,"amount":1000,"reference":"REF-0000000000000001"}`,
		"short ref":          `{` + good + `,"amount":1000,"reference":"ref-1"}`,
		"long ref":           `{` + good + `,"amount":1000,"reference":"` + strings.Repeat("r", 51) + `"}`,
		"no ref":             `{` + good + `,"amount":1000}`,
		"unknown field":      `{` + good + `,"amount":1000,"reference":"ref-0000000000000001","otp":"1"}`,
		"other source":       `{"source":"card","recipient":"` + rcp.Code + `","amount":1000,"reference":"ref-0000000000000001"}`,
		"unknown recipient":  `{"source":"balance","recipient":"RCP_nope","amount":1000,"reference":"ref-0000000000000001"}`,
		"recipient a number": `{"source":"balance","recipient":12,"amount":1000,"reference":"ref-0000000000000001"}`,
	} {
		if st, r := call(t, f, http.MethodPost, "/transfer", bearer, body); st != 400 || r.Status || r.Type != "validation_error" {
			t.Errorf("%s: HTTP %d %+v", name, st, r)
		}
	}
	if f.TransferCount() != 0 {
		t.Fatalf("%d transfers made by refused requests", f.TransferCount())
	}
	st, r = call(t, f, http.MethodPost, "/transfer", bearer, `{`+good+`,"amount":1000,"reference":"ref-0000000000000001"}`)
	var tr struct {
		Code   string `json:"transfer_code"`
		Status string `json:"status"`
		Amount int64  `json:"amount"`
	}
	_ = json.Unmarshal(r.Data, &tr)
	if st != 200 || !strings.HasPrefix(tr.Code, "TRF_") || tr.Status != "pending" || tr.Amount != 1000 {
		t.Fatalf("transfer: HTTP %d %+v %+v", st, r, tr)
	}
	if st, r := call(t, f, http.MethodGet, "/transfer/verify/ref-0000000000000009", bearer, ""); st != 404 || r.Message != "Transfer not found" {
		t.Fatalf("verify unknown: HTTP %d %+v", st, r)
	}
	if len(f.Requests()) != 20 {
		t.Fatalf("%d requests recorded, want 20", len(f.Requests()))
	}
}
