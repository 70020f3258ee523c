package server_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
	"merchantpay/web/dashboard"
)

// dashboardSeen is what testdata/browser/dashboard.mjs reports.
type dashboardSeen struct {
	Foreign, Violations, PageErrors, Shots, URLs []string
	CSP                                          *string
	A11y                                         map[string][]string
	Stored, StoredAfterRoll, StoredAfterSignOut  []string
	Links, LiveLinks                             []string
	LiveBanners                                  int
	Banner, LiveAttr                             string
	Balances, Rows, History                      [][]string
	LiveMs                                       int
	LiveRef, ResumedRef                          string
	Sockets                                      int
	Feed                                         []string
	ExportHref                                   string
	Searched                                     int
	Detail, Quote, Delivery, Resent, Funded      string
	NewKey                                       string
	KeysAfterRoll                                [][]string
	TestCryptoPay, EnrolFocus, Started           string
	TestCryptoPayControls                        int
	Checkout                                     struct{ URL, Amount, Currency string }
	FirstFocus                                   string
	EndpointsLeft                                int
	Time                                         struct{ Text, Title, ISO string }
}

// The merchant dashboard in headless Chromium, with every other origin
// refused, as a merchant's staff would use it: sign in with the test
// secret key, the balances, a deposit made through REST in "Live activity"
// within 2 s (and one made while the feed's WebSocket was dropped, once it
// is back), the transactions filtered and their CSV (checked against GET
// /transactions), a transaction's detail, a webhook endpoint with its test
// delivery and attempt, and a roll of the keys with an overlap during
// which both keys work; the Sandbox page funds a balance and, with the
// live key (live mode on the sandbox rails), enrols for crypto-pay and
// opens a pending checkout. axe-core finds no serious or critical violation on
// any page. Screenshots of each page go to the test's artifact directory
// (kept with `go test -artifacts`), or to MERCHANTPAY_SCREENSHOTS when set.
// It needs no database feature: SQLite only.
func TestDashboardInBrowser(t *testing.T) {
	dir := browserDir(t)
	e := servertest.New(t, testdb.MigratedSQLiteURL(t), servertest.With("EVENTS_POLL_INTERVAL", "50ms"))
	m := e.Merchant("Dashboard Shop")
	acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
	e.REST("POST", "/wallets", m.TestSecret, sampleWallet("cust-dash-1")).Expect(201)
	e.REST("POST", "/sandbox/balances/fund", m.TestSecret, map[string]any{"currency": "GHS", "amount": 75.25}).Expect(200)
	depositBody := map[string]any{"account_number": acc, "amount": 1500.5}
	for range 3 {
		e.REST("POST", "/sandbox/deposits/bank-transfer", m.TestSecret, depositBody).Expect(200)
	}
	// A swap that stays pending (the test's clock stands still): a
	// transaction the transactions filter, and so the CSV, leaves out.
	q := e.REST("POST", "/rates/create", m.TestSecret, map[string]any{"from_currency": "NGN", "to_currency": "USDT", "from_amount": 1600}).Expect(200).Data()
	e.REST("POST", "/transactions/swap", m.TestSecret, map[string]any{"rate_reference": q["reference"], "reference": "dash-swap-1"}).Expect(200)
	hooks := newHookSink(t)

	shots := os.Getenv("MERCHANTPAY_SCREENSHOTS")
	if shots == "" {
		shots = t.ArtifactDir()
	}
	csvPath := filepath.Join(t.TempDir(), "transactions.csv")
	const overlap = 600
	out := runBrowser(t, dir, "dashboard.mjs", map[string]any{
		"url":         e.URL + "/dashboard",
		"key":         m.TestSecret,
		"liveKey":     m.LiveSecret,
		"depositUrl":  e.URL + "/v1/merchant/public/sandbox/deposits/bank-transfer",
		"depositBody": depositBody,
		"hookUrl":     hooks.srv.URL + "/hooks",
		"overlap":     overlap,
		"shots":       shots,
		"csv":         csvPath,
		// Not UTC, so that local times differ from UTC ones.
		"timezoneId": "Africa/Lagos",
		"checkout": map[string]any{"product": "Blue Mug", "amount": "2500.5", "currency": "NGN", "enrolment": map[string]string{
			"Business name": "Dashboard Shop Ltd", "Logo URL": "https://shop.example/logo.png", "Website": "https://shop.example",
			"Success URL": "https://shop.example/thanks", "Failure URL": "https://shop.example/sorry",
		}},
	})
	var got dashboardSeen
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("browser output %q: %v", out, err)
	}
	t.Logf("screenshots: %v; the deposit reached Live activity in %d ms", got.Shots, got.LiveMs)

	// The page itself: this origin only, its policy, no errors, the key
	// in sessionStorage and never in a URL.
	if len(got.Foreign) > 0 {
		t.Errorf("the dashboard asked other origins: %v", got.Foreign)
	}
	if len(got.Violations) > 0 {
		t.Errorf("Content-Security-Policy violations: %v", got.Violations)
	}
	if len(got.PageErrors) > 0 {
		t.Errorf("uncaught errors in the page: %v", got.PageErrors)
	}
	if got.CSP == nil || *got.CSP != dashboard.Policy {
		t.Errorf("the page's policy: %v", got.CSP)
	}
	if !slices.Equal(got.Stored, []string{m.TestSecret}) || !slices.Equal(got.StoredAfterRoll, []string{got.NewKey}) ||
		len(got.StoredAfterSignOut) != 0 {
		t.Errorf("sessionStorage held %q, after the roll %q, after signing out %q", got.Stored, got.StoredAfterRoll, got.StoredAfterSignOut)
	}
	for _, u := range got.URLs {
		if strings.Contains(u, m.TestSecret) || (got.NewKey != "" && strings.Contains(u, got.NewKey)) {
			t.Errorf("a key in a URL: %s", u)
		}
	}
	if want := []string{"Overview", "Transactions", "Balance history", "Wallets", "Developers", "Sandbox"}; !slices.Equal(got.Links, want) {
		t.Errorf("navigation %q, want %q", got.Links, want)
	}
	if want := []string{"Overview", "Transactions", "Balance history", "Wallets", "Developers", "Sandbox"}; !slices.Equal(got.LiveLinks, want) ||
		got.LiveBanners != 0 {
		t.Errorf("with the live key: navigation %q, %d test-mode banners", got.LiveLinks, got.LiveBanners)
	}
	if got.FirstFocus != "Secret key" {
		t.Errorf("the first Tab of the sign-in page reached %q", got.FirstFocus)
	}
	if !strings.Contains(got.Banner, "Test mode") {
		t.Errorf("test-mode banner %q", got.Banner)
	}
	for page, found := range got.A11y {
		if len(found) > 0 {
			t.Errorf("axe-core on %s: %v", page, found)
		}
	}
	for _, name := range []string{"sign-in", "overview", "transactions", "transaction", "balance-history", "wallets", "developers", "sandbox", "sandbox-live"} {
		if st, err := os.Stat(filepath.Join(shots, name+".png")); err != nil || st.Size() == 0 {
			t.Errorf("screenshot of %s: %v", name, err)
		}
	}

	// Overview: the balances as the API gives them, the live feed.
	if !slices.ContainsFunc(got.Balances, func(r []string) bool { return slices.Equal(r, []string{"GHS", "75.25", "0.00"}) }) {
		t.Errorf("balances %q lack GHS 75.25 available", got.Balances)
	}
	checkLocalTime(t, got.Time.ISO, got.Time.Text, got.Time.Title)
	if got.LiveAttr != "polite" {
		t.Errorf("Live activity's aria-live is %q", got.LiveAttr)
	}
	if got.LiveRef == "" || got.LiveMs > 2000 {
		t.Errorf("the deposit %s showed in Live activity after %d ms, want at most 2000", got.LiveRef, got.LiveMs)
	}
	if got.Sockets < 2 {
		t.Errorf("%d WebSockets: the feed did not reconnect after its connection was dropped", got.Sockets)
	}
	for _, ref := range []string{got.LiveRef, got.ResumedRef} {
		if n := countContaining(got.Feed, ref); n != 1 {
			t.Errorf("the feed shows %s %d times: %q", ref, n, got.Feed)
		}
	}

	// Transactions: the filtered rows and the CSV against GET /transactions.
	listed := e.REST("GET", "/transactions?type=DEPOSIT&status=success&limit=100", m.TestSecret, nil).Expect(200).List()
	if len(listed) != 5 {
		t.Fatalf("GET /transactions listed %d successful deposits, want 5", len(listed))
	}
	var refs []string
	for _, it := range listed {
		refs = append(refs, it.(map[string]any)["reference"].(string))
	}
	var shown []string
	for _, r := range got.Rows {
		shown = append(shown, r[0])
	}
	if !slices.Equal(shown, refs) {
		t.Errorf("the filtered table lists %q, GET /transactions %q", shown, refs)
	}
	if got.Searched != 1 {
		t.Errorf("a search by reference listed %d rows", got.Searched)
	}
	if !strings.HasPrefix(got.ExportHref, "/dashboard/export/transactions.csv?token=") {
		t.Errorf("the export link is %q", got.ExportHref)
	}
	checkExportCSV(t, csvPath, listed)
	if !strings.Contains(got.Detail, "1500.50 NGN") {
		t.Errorf("the detail's amounts: %q", got.Detail)
	}
	if len(got.History) == 0 {
		t.Errorf("no balance history")
	}
	if !strings.Contains(got.Quote, "You receive") {
		t.Errorf("the quote: %q", got.Quote)
	}

	// Developers: the test delivery reached the receiver, with its attempt.
	if !strings.Contains(got.Delivery, "ping") || !strings.Contains(got.Delivery, "HTTP 204") {
		t.Errorf("the test delivery's row: %q", got.Delivery)
	}
	if strings.Count(got.Resent, "HTTP 204") != 2 {
		t.Errorf("the resent delivery's row: %q", got.Resent)
	}
	if got.EndpointsLeft != 0 {
		t.Errorf("the deleted endpoint is still listed")
	}
	if eps := e.REST("GET", "/webhooks", got.NewKey, nil).Expect(http.StatusOK).List(); len(eps) != 0 {
		t.Errorf("endpoints after the delete: %v", eps)
	}
	servertest.Eventually(t, 5*time.Second, "the ping webhook", func() bool {
		hooks.mu.Lock()
		defer hooks.mu.Unlock()
		for _, b := range hooks.bodies {
			if bytes.Contains(b, []byte(`"event":"ping"`)) {
				return true
			}
		}
		return false
	})

	// The roll: both keys work during the overlap, only the new one after.
	if !strings.HasPrefix(got.NewKey, "SECK_TEST_") || got.NewKey == m.TestSecret {
		t.Fatalf("the rolled secret key %q", got.NewKey)
	}
	expiring := 0
	for _, k := range got.KeysAfterRoll {
		if k[5] != "not set" {
			expiring++
		}
	}
	if len(got.KeysAfterRoll) != 4 || expiring != 2 {
		t.Errorf("the keys after a roll with overlap: %q", got.KeysAfterRoll)
	}
	e.REST("GET", "/balances", m.TestSecret, nil).Expect(http.StatusOK)
	e.REST("GET", "/balances", got.NewKey, nil).Expect(http.StatusOK)
	e.Clock.Advance((overlap + 1) * time.Second)
	e.REST("GET", "/balances", m.TestSecret, nil).Expect(http.StatusUnauthorized)
	e.REST("GET", "/balances", got.NewKey, nil).Expect(http.StatusOK)
	if !strings.Contains(got.Funded, "6153.00 NGN") { // 5 deposits of 1500.5, a swap of 1600, 250.5
		t.Errorf("the sandbox's funding said %q", got.Funded)
	}

	// The Sandbox page and crypto-pay: live mode only, so nothing to click
	// in test mode; with the live key, an enrolment (approved at once) and
	// a pending deposit whose hosted checkout opened in a new tab.
	if !strings.Contains(got.TestCryptoPay, "live mode only") || got.TestCryptoPayControls != 0 {
		t.Errorf("in test mode the crypto-pay checkout says %q with %d controls", got.TestCryptoPay, got.TestCryptoPayControls)
	}
	if got.EnrolFocus != "Business name" {
		t.Errorf("asked for the enrolment, the focus went to %q", got.EnrolFocus)
	}
	if enr, err := e.App.CryptoPay.Enrolment(liveCtx(m), nil); err != nil || enr.BusinessName != "Dashboard Shop Ltd" || enr.SuccessURL != "https://shop.example/thanks" {
		t.Errorf("the enrolment after the Sandbox page: %+v, %v", enr, err)
	}
	pending := e.REST("GET", "/transactions?type=DEPOSIT&status=pending", m.LiveSecret, nil).Expect(http.StatusOK).List()
	if len(pending) != 1 {
		t.Fatalf("live pending deposits after the checkout: %v", pending)
	}
	dep := pending[0].(map[string]any)
	if ref, _ := dep["reference"].(string); ref == "" || !strings.Contains(got.Started, ref) || !strings.Contains(got.Started, "is pending") ||
		dep["currency"] != "NGN" {
		t.Errorf("the page said %q of the deposit %v", got.Started, dep)
	}
	if !strings.HasPrefix(got.Checkout.URL, e.URL+"/checkout/") || got.Checkout.Amount != "2500.5" || got.Checkout.Currency != "NGN" {
		t.Errorf("the opened checkout: %+v", got.Checkout)
	}
}

// checkLocalTime checks a <time> of the page: its text in the browser's
// zone (Africa/Lagos, UTC+1 all year; the en-US locale), its title the
// same instant in UTC.
func checkLocalTime(t *testing.T, iso, text, title string) {
	t.Helper()
	at, err := time.Parse(time.RFC3339, iso)
	if err != nil {
		t.Fatalf("a time's datetime %q: %v", iso, err)
	}
	lagos := at.In(time.FixedZone("WAT", 3600))
	if !strings.Contains(text, lagos.Format("3:04:05 PM")) {
		t.Errorf("the time %s reads %q, want West Africa's %s", iso, text, lagos.Format("3:04:05 PM"))
	}
	if want := at.UTC().Format("2006-01-02 15:04:05") + " UTC"; title != want {
		t.Errorf("the time %s has the title %q, want %q", iso, title, want)
	}
}

func countContaining(items []string, s string) int {
	n := 0
	for _, it := range items {
		if strings.Contains(it, s) {
			n++
		}
	}
	return n
}

// checkExportCSV compares the downloaded CSV with GET /transactions'
// items, row by row: reference first, the values as the API prints them.
func checkExportCSV(t *testing.T, path string, listed []any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the downloaded CSV: %v", err)
	}
	records, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil || len(records) == 0 {
		t.Fatalf("the CSV %q: %v", raw, err)
	}
	head := records[0]
	if head[0] != "reference" {
		t.Fatalf("the CSV's header %q", head)
	}
	if len(records)-1 != len(listed) {
		t.Fatalf("the CSV has %d rows, GET /transactions %d:\n%s", len(records)-1, len(listed), raw)
	}
	byRef := map[string]map[string]any{}
	for _, it := range listed {
		m := it.(map[string]any)
		byRef[m["reference"].(string)] = m
	}
	for _, rec := range records[1:] {
		item := byRef[rec[0]]
		if item == nil {
			t.Errorf("the CSV's row %q is not in GET /transactions", rec)
			continue
		}
		for i, col := range head {
			want, ok := item[col]
			if !ok || col == "created_at" {
				continue
			}
			if s := jsonText(want); s != rec[i] {
				t.Errorf("%s's %s: CSV %q, API %q", rec[0], col, rec[i], s)
			}
		}
	}
}

// jsonText is how a JSON value reads in a CSV cell.
func jsonText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}
