package binancepayfake_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/rails/binancepay"
	"merchantpay/internal/rails/binancepay/binancepayfake"
)

type signing struct {
	key, secret string
	at          time.Time
	nonce       string
}

func send(t *testing.T, f *binancepayfake.Fake, s signing, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.URL()+path, strings.NewReader(body))
	ts := binancepay.Millis(s.at)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(binancepay.HeaderTimestamp, ts)
	req.Header.Set(binancepay.HeaderNonce, s.nonce)
	req.Header.Set(binancepay.HeaderCertificate, s.key)
	req.Header.Set(binancepay.HeaderSignature, binancepay.Sign(s.secret, ts, s.nonce, []byte(body)))
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

func TestFakeChecksRequests(t *testing.T) {
	f := binancepayfake.Start("key", "secret")
	defer f.Close()
	ok := signing{"key", "secret", time.Now(), "abcdefghijklmnopqrstuvwxyzABCDEF"}
	order := `{"env":{"terminalType":"WEB"},"merchantTradeNo":"T1","orderAmount":1.5,"currency":"USDT","description":"d",` +
		`"goodsDetails":[{"goodsType":"02","goodsCategory":"Z000","referenceGoodsId":"T1","goodsName":"d"}]}`
	const create = "/binancepay/openapi/v3/order"
	if code, out := send(t, f, ok, create, order); code != 200 || out["status"] != "SUCCESS" {
		t.Fatalf("good order: %d %v", code, out)
	}
	stale, wrongSecret, wrongKey, shortNonce := ok, ok, ok, ok
	stale.at = time.Now().Add(-2 * time.Minute)
	wrongSecret.secret = "other"
	wrongKey.key = "other"
	shortNonce.nonce = "abc"
	for name, c := range map[string]struct {
		s    signing
		body string
		code string
	}{
		"duplicate trade number": {ok, order, "400201"},
		"stale timestamp":        {stale, strings.Replace(order, "T1", "T2", 1), "400003"},
		"wrong secret":           {wrongSecret, strings.Replace(order, "T1", "T3", 1), "400002"},
		"wrong API key":          {wrongKey, strings.Replace(order, "T1", "T4", 1), "400004"},
		"short nonce":            {shortNonce, strings.Replace(order, "T1", "T5", 1), "400100"},
		"dashes in trade number": {ok, strings.Replace(order, "T1", "DEP-1", 1), "400103"},
		"trade number too long":  {ok, strings.Replace(order, "T1", strings.Repeat("A", 33), 1), "400103"},
		"fiat currency":          {ok, strings.Replace(strings.Replace(order, "USDT", "USD", 1), "T1", "T6", 1), "400100"},
		"no description":         {ok, strings.Replace(strings.Replace(order, `"description":"d",`, "", 1), "T1", "T7", 1), "400100"},
		"nine decimals":          {ok, strings.Replace(strings.Replace(order, "1.5", "1.000000001", 1), "T1", "T8", 1), "400100"},
		"amount as text":         {ok, strings.Replace(strings.Replace(order, "1.5", `"1.5"`, 1), "T1", "T9", 1), "400100"},
	} {
		code, out := send(t, f, c.s, create, c.body)
		if code != 400 || out["status"] != "FAIL" || out["code"] != c.code {
			t.Errorf("%s: %d %v, want FAIL %s", name, code, out, c.code)
		}
	}
	if n := len(f.Orders()); n != 1 {
		t.Fatalf("%d orders, want 1", n)
	}
	if code, out := send(t, f, ok, "/binancepay/openapi/v2/order/query", `{"merchantTradeNo":"NOPE"}`); code != 400 || out["code"] != "400202" {
		t.Fatalf("query of a missing order: %d %v", code, out)
	}
}
