package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

// TestPublicKeyFromBrowser calls the REST API from a merchant's own page in
// headless Chromium (another origin): the routes a public key may call answer
// it, errors included (a public key is safe to ship in a page); the browser
// refuses to show the page any other route's answer.
func TestPublicKeyFromBrowser(t *testing.T) {
	dir := browserDir(t)
	e := servertest.New(t, testdb.MigratedSQLiteURL(t))
	m := e.Merchant("Browser Shop")
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><title>Shop</title><h1>Shop</h1>")
	}))
	t.Cleanup(site.Close)

	api := e.URL + "/v1/merchant/public"
	type call struct {
		URL string `json:"url"`
		Key string `json:"key"`
	}
	calls := []call{
		{api + "/misc/banks?country=NG", m.TestPublic},
		{api + "/misc/banks?country=XX", m.TestPublic},
		{api + "/misc/banks?country=NG", "PUBK_TEST_not-a-key"},
		{api + "/transactions", m.TestPublic},
		{api + "/transactions", m.TestSecret},
	}
	out := runBrowser(t, dir, "cors.mjs", map[string]any{"pageUrl": site.URL + "/shop", "calls": calls})
	var got []struct {
		Status    int
		Code      *string
		RequestID *string
		Error     string
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(calls) {
		t.Fatalf("browser output %q: %v", out, err)
	}
	code := func(i int) string {
		if got[i].Code == nil {
			return ""
		}
		return *got[i].Code
	}
	if got[0].Status != 200 || got[0].RequestID == nil || *got[0].RequestID == "" {
		t.Errorf("banks with the public key: %+v", got[0])
	}
	if got[1].Status != 400 || code(1) != "VALIDATION_ERROR" {
		t.Errorf("banks of an unknown country: %+v (%s)", got[1], code(1))
	}
	if got[2].Status != 401 || code(2) != "UNAUTHORIZED" {
		t.Errorf("banks with an unknown key: %+v (%s)", got[2], code(2))
	}
	for _, i := range []int{3, 4} {
		if got[i].Error == "" {
			t.Errorf("%s with %s: the page read the answer %+v", calls[i].URL, calls[i].Key[:9], got[i])
		}
	}
}

// The CORS headers themselves, over plain HTTP: the preflight of a
// public-key route needs no key; a wrong method there lists OPTIONS among
// the allowed; secret-key routes carry no CORS header and refuse OPTIONS.
func TestPublicKeyCORSHeaders(t *testing.T) {
	e := servertest.New(t, testdb.MigratedSQLiteURL(t))
	m := e.Merchant("Header Shop")
	pre := e.REST(http.MethodOptions, "/misc/banks", "", nil,
		"Origin", "https://shop.example", "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "x-api-key")
	if pre.Status != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "*" ||
		pre.Header.Get("Access-Control-Allow-Headers") == "" || pre.Header.Get("Access-Control-Allow-Methods") == "" {
		t.Errorf("preflight of /misc/banks: %d %v", pre.Status, pre.Header)
	}
	if r := e.REST(http.MethodPost, "/markets/rates", m.TestPublic, nil); r.Status != 405 || r.Header.Get("Allow") != "GET, OPTIONS" {
		t.Errorf("POST /markets/rates: %d, Allow %q", r.Status, r.Header.Get("Allow"))
	}
	if r := e.REST(http.MethodGet, "/misc/banks?country=NG", "", nil); r.Status != 401 || r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("GET /misc/banks without a key: %d %v", r.Status, r.Header)
	}
	for _, r := range []*servertest.Resp{
		e.REST(http.MethodOptions, "/balances", "", nil, "Origin", "https://shop.example"),
		e.REST(http.MethodGet, "/balances", m.TestSecret, nil, "Origin", "https://shop.example"),
	} {
		if r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("a secret-key route answered with CORS: %d %v", r.Status, r.Header)
		}
	}
	if r := e.REST(http.MethodOptions, "/balances", "", nil); r.Status != 405 || r.Header.Get("Allow") != "GET" {
		t.Errorf("OPTIONS /balances: %d, Allow %q", r.Status, r.Header.Get("Allow"))
	}
}
