package server_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"merchantpay/server/servertest"
)

const exportGQL = `mutation($f: TransactionFilter) { createTransactionExport(filter: $f) { url expiresAt } }`

func exportURL(t *testing.T, e *servertest.Env, key string, filter map[string]any) string {
	t.Helper()
	x := e.GQL(key, exportGQL, map[string]any{"f": filter}).GQLData()["createTransactionExport"].(map[string]any)
	url := x["url"].(string)
	if !strings.HasPrefix(url, "/dashboard/export/transactions.csv?token=") {
		t.Fatalf("export url %q", url)
	}
	return url
}

func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(v)
}

// The CSV export: a one-time token from GraphQL is the only credential;
// every transaction the filter selects, over several pages, as GET
// /transactions prints it; a used or expired token gets 404.
func TestTransactionExportCSV(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m, other := e.Merchant("Csv Co"), e.Merchant("Other")
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
		for i := range 105 { // more than one page of the export's reads
			depositTo(t, e, m.TestSecret, acc, fmt.Sprint(100+i))
		}
		_, wd := dashboardMoney(t, e, m.TestSecret)
		otherAcc := e.REST("POST", "/accounts", other.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
		depositTo(t, e, other.TestSecret, otherAcc, "7")

		url := exportURL(t, e, m.TestSecret, nil)
		r := e.Do("GET", url, "", nil)
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("export: %d %s %.200s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		head := rows[0]
		wantHead := []string{"reference", "merchant_reference", "type", "status", "currency", "amount", "fee",
			"amount_charged", "amount_settled", "created_at"}
		if len(head) < len(wantHead) || strings.Join(head[:len(wantHead)], ",") != strings.Join(wantHead, ",") {
			t.Fatalf("header %v", head)
		}
		// Every transaction, as GET /transactions prints it, in its order.
		var api []map[string]any
		cursor := ""
		for {
			page := e.REST("GET", "/transactions?limit=100&cursor="+cursor, m.TestSecret, nil).Expect(200)
			for _, x := range page.List() {
				api = append(api, x.(map[string]any))
			}
			next, _ := page.JSON["meta"].(map[string]any)["next_cursor"].(string)
			if next == "" {
				break
			}
			cursor = next
		}
		if len(rows)-1 != len(api) || len(api) != 108 {
			t.Fatalf("CSV has %d rows, the API %d (want 108)", len(rows)-1, len(api))
		}
		for i, tx := range api {
			for j, col := range head {
				if want, ok := tx[col]; ok && str(want) != rows[i+1][j] {
					t.Errorf("row %d %s: CSV %q, API %q", i, col, rows[i+1][j], str(want))
				}
			}
		}
		if rows[1][0] != wd {
			t.Errorf("newest first: %v", rows[1])
		}

		// One use only.
		if again := e.Do("GET", url, "", nil); again.Status != 404 || strings.Contains(string(again.Body), "reference") {
			t.Errorf("second use: %d %s", again.Status, again.Body)
		}
		// A filter travels with the token.
		filtered := e.Do("GET", exportURL(t, e, m.TestSecret, map[string]any{"type": "WITHDRAWAL"}), "", nil)
		if lines := strings.Split(strings.TrimSpace(string(filtered.Body)), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], wd+",Pay-1,WITHDRAWAL,") {
			t.Errorf("withdrawals only: %s", filtered.Body)
		}
		if r := e.GQL(m.TestSecret, exportGQL, map[string]any{"f": map[string]any{"currency": "XYZ"}}); r.Code() != "VALIDATION_ERROR" {
			t.Errorf("bad filter: %s", r.Body)
		}
		// Expired after 60 s; unknown tokens alike; no other method.
		late := exportURL(t, e, m.TestSecret, nil)
		e.Clock.Advance(61 * time.Second)
		if r := e.Do("GET", late, "", nil); r.Status != 404 {
			t.Errorf("expired token: %d %s", r.Status, r.Body)
		}
		if r := e.Do("GET", "/dashboard/export/transactions.csv?token=nope", "", nil); r.Status != 404 {
			t.Errorf("unknown token: %d %s", r.Status, r.Body)
		}
		if r := e.Do(http.MethodPost, exportURL(t, e, m.TestSecret, nil), "", nil); r.Status != 405 {
			t.Errorf("POST: %d %s", r.Status, r.Body)
		}
	})
}
