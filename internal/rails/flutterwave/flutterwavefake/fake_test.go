package flutterwavefake_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"merchantpay/internal/rails/flutterwave/flutterwavefake"
)

func post(t *testing.T, f *flutterwavefake.Fake, key, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.URL()+"/v3/transfers", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

func TestFakeChecksTransfers(t *testing.T) {
	f := flutterwavefake.Start("sk", "hash")
	defer f.Close()
	good := `{"account_bank":"GH280100","account_number":"0123456789","amount":12.34,"currency":"GHS",` +
		`"reference":"ref-1","destination_branch_code":"GH280103","beneficiary_name":"Ama"}`
	if code, out := post(t, f, "sk", good); code != 200 || out["status"] != "success" ||
		out["data"].(map[string]any)["status"] != "NEW" {
		t.Fatalf("good transfer: %d %v", code, out)
	}
	for name, c := range map[string]struct {
		key, body string
		code      int
	}{
		"wrong key":         {"nope", good, 401},
		"duplicate":         {"sk", good, 400},
		"no branch for GHS": {"sk", strings.Replace(good, `,"destination_branch_code":"GH280103"`, "", 1), 400},
		"amount as text":    {"sk", strings.Replace(strings.Replace(good, `12.34`, `"12.34"`, 1), "ref-1", "ref-2", 1), 400},
		"minor units":       {"sk", strings.Replace(strings.Replace(good, `12.34`, `12.345`, 1), "ref-1", "ref-3", 1), 400},
		"zero amount":       {"sk", strings.Replace(strings.Replace(good, `12.34`, `0`, 1), "ref-1", "ref-4", 1), 400},
	} {
		code, out := post(t, f, c.key, c.body)
		if code != c.code || out["status"] != "error" || out["data"] != nil {
			t.Errorf("%s: %d %v", name, code, out)
		}
	}
	if n := len(f.Transfers()); n != 1 {
		t.Fatalf("%d transfers, want 1", n)
	}
	if n := len(f.Requests()); n != 7 {
		t.Fatalf("%d requests recorded, want 7", n)
	}
}
