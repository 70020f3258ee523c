package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/ent/emailnotification"
	"merchantpay/ent/event"
	"merchantpay/ent/quote"
	"merchantpay/internal/apperr"
	"merchantpay/internal/cryptopay"
	"merchantpay/internal/events"
	"merchantpay/internal/ledger"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/tenant"
	"merchantpay/server/servertest"
)

// Crypto-pay tests poll for due expiries every 20 ms of real time.
var cpPoll = servertest.With("JOBS_POLL_INTERVAL", "20ms")

var (
	depRef   = regexp.MustCompile(`^DEP-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	prepayRE = regexp.MustCompile(`^[0-9a-f]{32}$`)
)

// linksFields are the spec's crypto-pay links fields and their JSON types.
var linksFields = map[string]string{
	"prepayId": "string", "terminalType": "string", "expireTime": "number", "qrcodeLink": "string",
	"qrContent": "string", "checkoutUrl": "string", "deeplink": "string", "universalUrl": "string",
	"product_name": "string", "product_description": "string", "failure_url": "string",
	"success_url": "string", "merchant_reference": "string", "from_merchant": "null", "to_merchant": "null",
}

// The enrolment every test merchant makes.
const (
	cpBusiness = "Acme Store"
	cpSuccess  = "https://acme.example/paid"
	cpFailure  = "https://acme.example/failed"
)

func sptr(s string) *string { return &s }

func liveCtx(m servertest.Merchant) context.Context {
	return tenant.With(context.Background(), tenant.Tenant{MerchantID: m.ID, Mode: tenant.Live})
}

func cpEnrolInput() cryptopay.EnrolInput {
	return cryptopay.EnrolInput{BusinessName: sptr(cpBusiness), LogoURL: sptr("https://acme.example/logo.png"),
		Website: sptr("https://acme.example"), SuccessURL: sptr(cpSuccess), FailureURL: sptr(cpFailure)}
}

// cpMerchant is a merchant enrolled for crypto-pay.
func cpMerchant(t *testing.T, e *servertest.Env, name string) servertest.Merchant {
	t.Helper()
	m := e.Merchant(name)
	if _, err := e.App.CryptoPay.Enrol(liveCtx(m), nil, cpEnrolInput()); err != nil {
		t.Fatalf("enrol: %v", err)
	}
	return m
}

func eachCryptoPay(t *testing.T, fn func(t *testing.T, e *servertest.Env), opts ...servertest.Option) {
	t.Helper()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		fn(t, e)
		if err := ledger.Check(context.Background(), e.App.DB); err != nil {
			t.Fatalf("ledger invariants: %v", err)
		}
	}, append([]servertest.Option{cpPoll}, opts...)...)
}

func directBody(productName, amount, currency string) map[string]any {
	return map[string]any{"deposit_method": "crypto-pay", "requirement": map[string]any{"product_name": productName},
		"amount": json.Number(amount), "currency": currency}
}

func startDep(e *servertest.Env, key string, body any) *servertest.Resp {
	e.T.Helper()
	return e.REST(http.MethodPost, "/transactions/deposit", key, body)
}

// start starts a deposit that must succeed and returns its links.
func start(t *testing.T, e *servertest.Env, key string, body any) map[string]any {
	t.Helper()
	d := startDep(e, key, body).Expect(200).Data()
	checkShape(t, "links", d, linksFields)
	return d
}

func getTx(t *testing.T, e *servertest.Env, key, ref string) map[string]any {
	t.Helper()
	return e.REST(http.MethodGet, "/transactions/"+url.PathEscape(ref), key, nil).Expect(200).Data()
}

// txEvents lists the outbox's event types about a transaction, in order.
func txEvents(t *testing.T, e *servertest.Env, ref string) []string {
	t.Helper()
	ctx := tenant.System(context.Background())
	evs, err := e.App.DB.Reader().Event.Query().Where(event.TransactionRef(ref)).Order(ent.Asc(event.FieldID)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

func wantEvents(t *testing.T, e *servertest.Env, ref string, want ...string) {
	t.Helper()
	if got := txEvents(t, e, ref); !slices.Equal(got, want) {
		t.Errorf("events of %s: %v, want %v", ref, got, want)
	}
}

// available is a currency's available balance ("0" when there is none).
func available(t *testing.T, e *servertest.Env, key, cur string) decimal.Decimal {
	t.Helper()
	b := balances(t, e, key)[cur]
	if b == nil {
		return decimal.Zero
	}
	return num(t, b["available"])
}

// page is an HTTP answer of the hosted checkout.
type page struct {
	status   int
	header   http.Header
	body     string
	location string
}

// browse calls the hosted page as a browser without following redirects.
func browse(t *testing.T, method, rawURL string) page {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, rawURL, body)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{status: res.StatusCode, header: res.Header, body: string(raw), location: res.Header.Get("Location")}
}

func completeVia(e *servertest.Env, key, prepayID string, outcome any) *servertest.Resp {
	e.T.Helper()
	return e.REST(http.MethodPost, "/sandbox/deposits/crypto-pay/"+prepayID, key, map[string]any{"outcome": outcome})
}

func TestCryptoPayRefusals(t *testing.T) {
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Refused Co")
		body := directBody("Mug", "100", "NGN")
		// Test mode: refused whatever the body, before and after enrolment.
		for _, b := range []any{body, map[string]any{"deposit_method": "card"}} {
			if r := startDep(e, m.TestSecret, b).Expect(http.StatusForbidden); r.Code() != "LIVE_MODE_ONLY" {
				t.Errorf("test key: code %s: %s", r.Code(), r.Body)
			}
		}
		if _, err := e.App.CryptoPay.Enrol(merchantCtx(m), nil, cpEnrolInput()); !apperr.Is(err, apperr.LiveModeOnly) {
			t.Errorf("test-mode enrolment: %v, want LIVE_MODE_ONLY", err)
		}
		if r := completeVia(e, m.TestSecret, strings.Repeat("a", 32), "success").Expect(http.StatusForbidden); r.Code() != "LIVE_MODE_ONLY" {
			t.Errorf("test-mode completion: code %s", r.Code())
		}
		// Live mode before enrolment.
		for _, b := range []any{body, map[string]any{}} {
			if r := startDep(e, m.LiveSecret, b).Expect(http.StatusForbidden); r.Code() != "NOT_ENROLLED" {
				t.Errorf("not enrolled: code %s: %s", r.Code(), r.Body)
			}
		}
		if _, err := e.App.CryptoPay.Enrolment(liveCtx(m), nil); !apperr.Is(err, apperr.NotEnrolled) {
			t.Errorf("Enrolment before enrolling: %v", err)
		}
		if _, err := e.App.CryptoPay.Enrol(liveCtx(m), nil, cpEnrolInput()); err != nil {
			t.Fatal(err)
		}
		startDep(e, m.LiveSecret, body).Expect(200)
		if r := startDep(e, m.TestSecret, body).Expect(http.StatusForbidden); r.Code() != "LIVE_MODE_ONLY" {
			t.Errorf("test key after enrolment: code %s", r.Code())
		}
		// Another merchant's enrolment does not count.
		other := e.Merchant("Other Co")
		if r := startDep(e, other.LiveSecret, body).Expect(http.StatusForbidden); r.Code() != "NOT_ENROLLED" {
			t.Errorf("other merchant: code %s", r.Code())
		}
		// A public key may not start deposits.
		if r := startDep(e, m.LivePublic, body).Expect(http.StatusForbidden); r.Code() != "FORBIDDEN" {
			t.Errorf("public key: code %s", r.Code())
		}
	})
}

func TestCryptoPayEnrolment(t *testing.T) {
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Enrol Co")
		ctx := liveCtx(m)
		fieldsOf := func(err error) []string {
			var out []string
			for _, f := range apperr.As(err).Fields {
				out = append(out, f.Field)
			}
			slices.Sort(out)
			return out
		}
		all := []string{"businessName", "failureUrl", "logoUrl", "successUrl", "website"}
		_, err := e.App.CryptoPay.Enrol(ctx, nil, cryptopay.EnrolInput{})
		if !apperr.Is(err, apperr.Validation) || !slices.Equal(fieldsOf(err), all) {
			t.Errorf("empty enrolment: %v, fields %v", err, fieldsOf(err))
		}
		_, err = e.App.CryptoPay.Enrol(ctx, nil, cryptopay.EnrolInput{BusinessName: sptr("  "), LogoURL: sptr("ftp://x/logo.png"),
			Website: sptr("acme.example"), SuccessURL: sptr("javascript:alert(1)"), FailureURL: sptr("https://")})
		if !apperr.Is(err, apperr.Validation) || !slices.Equal(fieldsOf(err), all) {
			t.Errorf("bad enrolment: %v, fields %v", err, fieldsOf(err))
		}

		enr, err := e.App.CryptoPay.Enrol(ctx, nil, cpEnrolInput())
		if err != nil {
			t.Fatal(err)
		}
		if enr.Status != cryptopay.EnrolmentApproved || enr.ApprovedAt == nil || enr.BusinessName != cpBusiness ||
			enr.SuccessURL != cpSuccess || enr.FailureURL != cpFailure || enr.Mode != tenant.Live || enr.MerchantID != m.ID {
			t.Errorf("enrolment: %+v", enr)
		}
		emails := func() []*ent.EmailNotification {
			sys := tenant.System(context.Background())
			rows, err := e.App.DB.Reader().EmailNotification.Query().
				Where(emailnotification.EventType(cryptopay.EnrolmentNoticeType), emailnotification.MerchantID(m.ID)).All(sys)
			if err != nil {
				t.Fatal(err)
			}
			return rows
		}
		got := emails()
		if len(got) != 1 || got[0].ToAddress != "enrol.co@example.com" || !strings.Contains(got[0].Subject, "approved") ||
			!strings.Contains(got[0].Body, cpBusiness) || got[0].Mode != tenant.Live {
			t.Fatalf("approval e-mails: %+v", got)
		}

		// Enrolling again replaces the details and notifies again.
		in := cpEnrolInput()
		in.BusinessName = sptr("Acme Two")
		again, err := e.App.CryptoPay.Enrol(ctx, nil, in)
		if err != nil {
			t.Fatal(err)
		}
		if again.ID != enr.ID || again.BusinessName != "Acme Two" || again.Status != cryptopay.EnrolmentApproved {
			t.Errorf("re-enrolment: %+v (first %s)", again, enr.ID)
		}
		if n := len(emails()); n != 2 {
			t.Errorf("%d approval e-mails after re-enrolment, want 2", n)
		}
		if cur, err := e.App.CryptoPay.Enrolment(ctx, nil); err != nil || cur.BusinessName != "Acme Two" {
			t.Errorf("Enrolment: %+v, %v", cur, err)
		}
	})
}

func TestCryptoPayStartValidation(t *testing.T) {
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		m := cpMerchant(t, e, "Valid Co")
		cases := []struct {
			name   string
			body   any
			fields []string
		}{
			{"every field bad", map[string]any{"deposit_method": "card",
				"requirement": map[string]any{"product_description": 5, "success_url": "nope", "failure_url": "ftp://x"},
				"amount":      "10", "currency": "XYZ", "reference": "bad ref!", "fee_bearer": "payer"},
				[]string{"amount", "currency", "deposit_method", "fee_bearer", "reference", "requirement.failure_url",
					"requirement.product_description", "requirement.product_name", "requirement.success_url"}},
			{"nothing", map[string]any{}, []string{"amount", "currency", "deposit_method", "requirement"}},
			{"requirement of the wrong type", map[string]any{"deposit_method": "crypto-pay", "requirement": "Mug",
				"amount": 1, "currency": "NGN"}, []string{"requirement"}},
			{"blank product", directBody("   ", "1", "NGN"), []string{"requirement.product_name"}},
			{"too many decimals", directBody("Mug", "10.001", "NGN"), []string{"amount"}},
			{"zero", directBody("Mug", "0", "USDT"), []string{"amount"}},
			{"cross with an amount and currency no quote has", map[string]any{"deposit_method": "crypto-pay", "requirement": map[string]any{"product_name": "Mug"},
				"rate_reference": "q", "amount": 0, "currency": "XYZ"}, []string{"amount", "currency"}},
			{"cross with a NUL in the quote's reference", map[string]any{"deposit_method": "crypto-pay", "requirement": map[string]any{"product_name": "Mug"},
				"rate_reference": "q\u0000"}, []string{"rate_reference"}},
		}
		for _, c := range cases {
			r := startDep(e, m.LiveSecret, c.body).Expect(http.StatusBadRequest)
			got := r.Fields()
			slices.Sort(got)
			if r.Code() != "VALIDATION_ERROR" || !slices.Equal(got, c.fields) {
				t.Errorf("%s: code %s fields %v, want %v; body %s", c.name, r.Code(), got, c.fields, r.Body)
			}
		}
		if r := startDep(e, m.LiveSecret, "[1]").Expect(http.StatusBadRequest); r.Code() != "BAD_REQUEST" {
			t.Errorf("not an object: %s", r.Code())
		}
		if r := startDep(e, m.LiveSecret, map[string]any{"deposit_method": "crypto-pay",
			"requirement": map[string]any{"product_name": "Mug"}, "rate_reference": "no-such-quote"}).Expect(http.StatusNotFound); r.Code() != "NOT_FOUND" {
			t.Errorf("unknown quote: %s", r.Code())
		}
	})
}

func TestCryptoPayDirectStart(t *testing.T) {
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		m := cpMerchant(t, e, "Direct Co")
		now := e.Clock.Now()
		body := map[string]any{"deposit_method": "crypto-pay", "reference": "Order-77", "fee_bearer": "beneficiary",
			"requirement": map[string]any{"product_name": "Blue Mug", "product_description": "Ceramic, 350 ml",
				"success_url": "https://shop.example/ok"},
			"amount": json.Number("2500.5"), "currency": "NGN"}
		r := startDep(e, m.LiveSecret, body).Expect(200)
		if r.JSON["status"] != true || r.JSON["statusCode"] != json.Number("200") {
			t.Errorf("envelope: %s", r.Body)
		}
		d := r.Data()
		checkShape(t, "links", d, linksFields)
		if len(d) != len(linksFields) {
			t.Errorf("links has %d fields, want exactly the spec's %d: %s", len(d), len(linksFields), r.Body)
		}
		id, _ := d["prepayId"].(string)
		if !prepayRE.MatchString(id) {
			t.Fatalf("prepayId %q", id)
		}
		page := e.URL + "/checkout/" + id
		want := map[string]any{
			"terminalType": "WEB", "universalUrl": page, "checkoutUrl": page, "deeplink": page, "qrContent": page,
			"qrcodeLink": page + "/qr.png", "product_name": "Blue Mug", "product_description": "Ceramic, 350 ml",
			"success_url": "https://shop.example/ok", "failure_url": cpFailure, "merchant_reference": "Order-77",
			"from_merchant": nil, "to_merchant": nil,
		}
		for k, v := range want {
			if d[k] != v {
				t.Errorf("%s = %v, want %v", k, d[k], v)
			}
		}
		exp := d["expireTime"].(json.Number)
		if ms, err := exp.Int64(); err != nil || ms != now.Add(30*time.Minute).UnixMilli() {
			t.Errorf("expireTime %s, want the integer %d (30 minutes on)", exp, now.Add(30*time.Minute).UnixMilli())
		}

		tx := getTx(t, e, m.LiveSecret, "order-77")
		checkShape(t, "transaction", tx, map[string]string{"to_amount": "null", "to_currency": "null", "trx_rate": "null",
			"settled_at": "null", "reject_reason": "null", "merchant_reference": "string"})
		for k, v := range map[string]any{"type": "DEPOSIT", "purpose": "DEPOSIT", "status": "pending", "currency": "NGN",
			"from_currency": "NGN", "payment_slug": "crypto-pay", "destination": "main_balance", "fee_bearer": "beneficiary",
			"merchant_reference": "Order-77", "from_merchant": "Direct Co", "narration": "Blue Mug"} {
			if tx[k] != v {
				t.Errorf("transaction %s = %v, want %v", k, tx[k], v)
			}
		}
		for _, f := range []string{"amount", "from_amount", "amount_charged", "amount_settled"} {
			wantNum(t, tx, f, "2500.5")
		}
		wantNum(t, tx, "fee", "0")
		ref := tx["reference"].(string)
		if !depRef.MatchString(ref) {
			t.Errorf("reference %q", ref)
		}
		wantEvents(t, e, ref, events.DepositPending)
		// Nothing is credited before payment.
		if b := available(t, e, m.LiveSecret, "NGN"); !b.IsZero() {
			t.Errorf("NGN available %s before payment", b)
		}

		// Merchant references are unique without regard to case.
		if r := startDep(e, m.LiveSecret, map[string]any{"deposit_method": "crypto-pay", "reference": "ORDER-77",
			"requirement": map[string]any{"product_name": "Mug"}, "amount": 1, "currency": "NGN"}).Expect(http.StatusConflict); r.Code() != "DUPLICATE_REFERENCE" {
			t.Errorf("duplicate reference: %s", r.Code())
		}

		// Without a reference or URLs: the enrolment's URLs, and the
		// service's reference stands in as merchant_reference. Any
		// supported currency works.
		d2 := start(t, e, m.LiveSecret, directBody("Sticker", "0.00012345", "BTC"))
		if d2["success_url"] != cpSuccess || d2["failure_url"] != cpFailure || d2["product_description"] != "" {
			t.Errorf("defaults: %v", d2)
		}
		mref, _ := d2["merchant_reference"].(string)
		if !depRef.MatchString(mref) {
			t.Fatalf("merchant_reference %q, want the DEP- reference", mref)
		}
		tx2 := getTx(t, e, m.LiveSecret, mref)
		if tx2["reference"] != mref || tx2["merchant_reference"] != nil || tx2["currency"] != "BTC" {
			t.Errorf("second deposit: %v", tx2)
		}
		wantNum(t, tx2, "amount", "0.00012345")
		// The other mode sees nothing.
		e.REST(http.MethodGet, "/transactions/"+mref, m.TestSecret, nil).Expect(http.StatusNotFound)
	})
}

func TestCryptoPayCheckoutPage(t *testing.T) {
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		m := cpMerchant(t, e, "Page Co")
		body := directBody(`<script>alert("x")</script> Mug`, "1234.5", "NGN")
		body["requirement"].(map[string]any)["product_description"] = `Mug & "saucer" <b>set</b>`
		d := start(t, e, m.LiveSecret, body)
		id := d["prepayId"].(string)

		p := browse(t, http.MethodGet, d["universalUrl"].(string))
		if p.status != 200 || !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") {
			t.Fatalf("page: %d %s", p.status, p.header.Get("Content-Type"))
		}
		for _, s := range []string{
			`<span id="amount">1234.5</span> <span id="currency">NGN</span>`, cpBusiness,
			`&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; Mug`, `Mug &amp; &#34;saucer&#34; &lt;b&gt;set&lt;/b&gt;`,
			`Time left: 30 min 00 s`, `src="/checkout/` + id + `/qr.png"`,
			`action="/checkout/` + id + `/pay"`, `action="/checkout/` + id + `/cancel"`, `id="pay"`, `id="cancel"`,
		} {
			if !strings.Contains(p.body, s) {
				t.Errorf("page lacks %q:\n%s", s, p.body)
			}
		}
		// Self-contained: no script, nothing loaded from elsewhere.
		for _, s := range []string{"<script", `src="http`, `href="http`, "<link"} {
			if strings.Contains(p.body, s) {
				t.Errorf("page contains %q", s)
			}
		}
		if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("Content-Security-Policy %q", csp)
		}

		// The QR code is a real PNG of a sane size.
		q := browse(t, http.MethodGet, d["qrcodeLink"].(string))
		if q.status != 200 || q.header.Get("Content-Type") != "image/png" {
			t.Fatalf("qr: %d %s", q.status, q.header.Get("Content-Type"))
		}
		img, err := png.Decode(bytes.NewReader([]byte(q.body)))
		if err != nil {
			t.Fatalf("qr is not a PNG: %v", err)
		}
		if b := img.Bounds(); b.Dx() != b.Dy() || b.Dx() < 100 || b.Dx() > 2000 {
			t.Errorf("qr size %v", b)
		}
		want, _ := cryptopay.QRCode(d["qrContent"].(string))
		if !bytes.Equal(want, []byte(q.body)) {
			t.Error("the QR code does not encode qrContent")
		}

		// Unknown checkouts, and paths that are not checkouts.
		for _, path := range []string{"/checkout/" + strings.Repeat("0", 32), "/checkout/nope", "/checkout/" + id + "/other",
			"/checkout/" + strings.Repeat("0", 32) + "/qr.png"} {
			if p := browse(t, http.MethodGet, e.URL+path); p.status != http.StatusNotFound || !strings.Contains(p.body, "Checkout not found") {
				t.Errorf("GET %s: %d", path, p.status)
			}
		}
		if p := browse(t, http.MethodPost, e.URL+"/checkout/"+strings.Repeat("0", 32)+"/pay"); p.status != http.StatusNotFound {
			t.Errorf("pay of an unknown checkout: %d", p.status)
		}

		// The page counts down with the clock.
		e.Clock.Advance(90 * time.Second)
		if p := browse(t, http.MethodGet, d["checkoutUrl"].(string)); !strings.Contains(p.body, "Time left: 28 min 30 s") {
			t.Errorf("time left after 90 s:\n%s", p.body)
		}
	})
}

func TestCryptoPayPayOnPage(t *testing.T) {
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		m := cpMerchant(t, e, "Pay Co")
		body := directBody("Blue Mug", "2500.5", "NGN")
		body["reference"] = "Order-7"
		body["requirement"].(map[string]any)["success_url"] = "https://shop.example/thanks?order=7"
		d := start(t, e, m.LiveSecret, body)
		id := d["prepayId"].(string)
		checkout := d["universalUrl"].(string)

		p := browse(t, http.MethodPost, checkout+"/pay")
		if p.status != http.StatusSeeOther {
			t.Fatalf("pay: %d %s", p.status, p.body)
		}
		loc, err := url.Parse(p.location)
		if err != nil || loc.Scheme+"://"+loc.Host+loc.Path != "https://shop.example/thanks" {
			t.Fatalf("pay redirected to %q", p.location)
		}
		if q := loc.Query(); q.Get("order") != "7" || q.Get("prepay_id") != id || q.Get("status") != "success" || q.Get("reference") != "Order-7" {
			t.Errorf("redirect query %v", q)
		}
		tx := getTx(t, e, m.LiveSecret, "Order-7")
		if tx["status"] != "success" || tx["settled_at"] == nil || tx["settlement_date"] == nil || tx["reject_reason"] != nil {
			t.Errorf("paid transaction: %v", tx)
		}
		ref := tx["reference"].(string)
		wantEvents(t, e, ref, events.DepositPending, events.DepositSuccess)
		if b := available(t, e, m.LiveSecret, "NGN"); !b.Equal(decimal.RequireFromString("2500.5")) {
			t.Errorf("NGN available %s, want 2500.5", b)
		}
		if p := browse(t, http.MethodGet, checkout); p.status != 200 || !strings.Contains(p.body, "Paid") || strings.Contains(p.body, `id="pay"`) {
			t.Errorf("paid page: %d\n%s", p.status, p.body)
		}

		// A second completion, by any route, is refused and credits nothing.
		for _, outcome := range []string{"success", "failed"} {
			r := completeVia(e, m.LiveSecret, id, outcome).Expect(http.StatusConflict)
			if r.Code() != "DUPLICATE_REFERENCE" || !strings.Contains(r.JSON["message"].(string), "already success") {
				t.Errorf("second completion (%s): %s", outcome, r.Body)
			}
		}
		if _, err := e.App.CryptoPay.Complete(tenant.System(context.Background()), nil, id, "success"); !apperr.Is(err, apperr.DuplicateReference) {
			t.Errorf("second Complete: %v", err)
		}
		for _, action := range []string{"/pay", "/cancel"} {
			if p := browse(t, http.MethodPost, checkout+action); p.status != http.StatusSeeOther || p.location != "/checkout/"+id {
				t.Errorf("%s again: %d to %q", action, p.status, p.location)
			}
		}
		if b := available(t, e, m.LiveSecret, "NGN"); !b.Equal(decimal.RequireFromString("2500.5")) {
			t.Errorf("NGN available %s after second completions, want 2500.5", b)
		}
		wantEvents(t, e, ref, events.DepositPending, events.DepositSuccess)
	})
}

func TestCryptoPayCancelOnPage(t *testing.T) {
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		m := cpMerchant(t, e, "Cancel Co")
		d := start(t, e, m.LiveSecret, directBody("Blue Mug", "40", "USDT"))
		checkout := d["universalUrl"].(string)
		p := browse(t, http.MethodPost, checkout+"/cancel")
		loc, _ := url.Parse(p.location)
		if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, cpFailure+"?") || loc.Query().Get("status") != "failed" {
			t.Fatalf("cancel: %d to %q", p.status, p.location)
		}
		tx := getTx(t, e, m.LiveSecret, d["merchant_reference"].(string))
		if tx["status"] != "failed" || tx["reject_reason"] != cryptopay.RejectCancelled || tx["settled_at"] != nil {
			t.Errorf("cancelled transaction: %v", tx)
		}
		wantEvents(t, e, tx["reference"].(string), events.DepositPending, events.DepositFailed)
		if b := available(t, e, m.LiveSecret, "USDT"); !b.IsZero() {
			t.Errorf("USDT available %s after cancellation", b)
		}
		if p := browse(t, http.MethodGet, checkout); !strings.Contains(p.body, "Cancelled") || strings.Contains(p.body, `id="pay"`) {
			t.Errorf("cancelled page:\n%s", p.body)
		}
		if p := browse(t, http.MethodPost, checkout+"/pay"); p.status != http.StatusSeeOther || p.location != "/checkout/"+d["prepayId"].(string) {
			t.Errorf("pay after cancel: %d to %q", p.status, p.location)
		}
		if tx := getTx(t, e, m.LiveSecret, d["merchant_reference"].(string)); tx["status"] != "failed" {
			t.Errorf("status after pay on a cancelled checkout: %v", tx["status"])
		}
	})
}

func TestCryptoPaySandboxCompletion(t *testing.T) {
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		m := cpMerchant(t, e, "Script Co")
		d := start(t, e, m.LiveSecret, directBody("Mug", "10", "USD"))
		id := d["prepayId"].(string)

		for _, outcome := range []any{nil, "paid", 1} {
			r := completeVia(e, m.LiveSecret, id, outcome).Expect(http.StatusBadRequest)
			if r.Code() != "VALIDATION_ERROR" || !slices.Equal(r.Fields(), []string{"outcome"}) {
				t.Errorf("outcome %v: %s", outcome, r.Body)
			}
		}
		// Another merchant cannot see the checkout.
		other := cpMerchant(t, e, "Nosy Co")
		completeVia(e, other.LiveSecret, id, "success").Expect(http.StatusNotFound)
		completeVia(e, m.LiveSecret, strings.Repeat("f", 32), "success").Expect(http.StatusNotFound)

		r := completeVia(e, m.LiveSecret, id, "success").Expect(200)
		tx := r.Data()
		checkShape(t, "transaction", tx, depositTxFields())
		if tx["status"] != "success" || tx["payment_slug"] != "crypto-pay" {
			t.Errorf("completed: %v", tx)
		}
		if b := available(t, e, m.LiveSecret, "USD"); !b.Equal(decimal.New(10, 0)) {
			t.Errorf("USD available %s, want 10", b)
		}

		d2 := start(t, e, m.LiveSecret, directBody("Mug", "10", "USD"))
		r = completeVia(e, m.LiveSecret, d2["prepayId"].(string), "failed").Expect(200)
		if tx := r.Data(); tx["status"] != "failed" || tx["reject_reason"] != cryptopay.RejectCancelled {
			t.Errorf("failed completion: %v", tx)
		}
		if b := available(t, e, m.LiveSecret, "USD"); !b.Equal(decimal.New(10, 0)) {
			t.Errorf("USD available %s after a failed deposit, want 10", b)
		}
	})
}

// depositTxFields are the Transaction fields of a direct deposit.
func depositTxFields() map[string]string {
	return map[string]string{
		"reference": "string", "merchant_reference": "null|string", "type": "string", "purpose": "string",
		"status": "string", "from_amount": "number", "amount": "number", "amount_charged": "number",
		"amount_settled": "number", "currency": "string", "from_currency": "string", "to_amount": "null",
		"to_currency": "null", "trx_rate": "null", "rateId": "null", "from": "string", "to": "string",
		"channel": "string", "narration": "string", "beneficiary": "null", "fee_bearer": "string", "fee": "number",
		"destination": "string", "payment_slug": "string", "from_merchant": "string", "to_merchant": "null",
		"settled_at": "null|string", "settlement_time": "null", "settlement_date": "null|string",
		"reject_reason": "null|string", "trace_id": "null", "payment_proof": "null", "created_at": "string", "updated_at": "string",
	}
}

func TestCryptoPayCross(t *testing.T) {
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		m := cpMerchant(t, e, "Cross Co")
		depositQuote := func(method any) string {
			body := map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 10, "transaction_type": "deposit"}
			if method != nil {
				body["deposit_method"] = method
			}
			return createQuote(e, m.LiveSecret, body)["reference"].(string)
		}
		crossBody := func(rateRef string) map[string]any {
			return map[string]any{"deposit_method": "crypto-pay", "rate_reference": rateRef, "fee_bearer": "beneficiary",
				"requirement": map[string]any{"product_name": "Big Order"}}
		}
		quoteUsed := func(ref string) bool {
			sys := tenant.System(context.Background())
			q, err := e.App.DB.Reader().Quote.Query().Where(quote.ID(ref)).Only(sys)
			if err != nil {
				t.Fatal(err)
			}
			return q.Used
		}

		// Quotes of the wrong kind are refused and stay unused.
		plain := depositQuote(nil)
		swapQ := createQuote(e, m.LiveSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 10})["reference"].(string)
		for _, ref := range []string{plain, swapQ} {
			if r := startDep(e, m.LiveSecret, crossBody(ref)).Expect(http.StatusUnprocessableEntity); r.Code() != "RATE_TYPE_MISMATCH" {
				t.Errorf("quote %s: %s", ref, r.Body)
			}
			if quoteUsed(ref) {
				t.Errorf("refused quote %s was consumed", ref)
			}
		}

		// An amount or currency beside the quote must be the quote's; a
		// refusal leaves the quote unused.
		odd := depositQuote("crypto-pay")
		for _, c := range []struct {
			amount, currency, field string
		}{{"15760.8", "USDT", "currency"}, {"15760.9", "NGN", "amount"}} {
			body := crossBody(odd)
			body["amount"], body["currency"] = json.Number(c.amount), c.currency
			if r := startDep(e, m.LiveSecret, body).Expect(http.StatusBadRequest); !slices.Equal(r.Fields(), []string{c.field}) {
				t.Errorf("%s %s beside the quote: %s", c.amount, c.currency, r.Body)
			}
		}
		if quoteUsed(odd) {
			t.Error("a refused cross deposit consumed its quote")
		}

		// SELL at 1592: gross 15920 NGN, deposit fee 1% = 159.20, to_amount
		// 15760.80 (sent too, as the quote's own amount and currency).
		rateRef := depositQuote("crypto-pay")
		body := crossBody(rateRef)
		body["amount"], body["currency"] = json.Number("15760.80"), "NGN"
		d := start(t, e, m.LiveSecret, body)
		if !quoteUsed(rateRef) {
			t.Error("quote not consumed")
		}
		if r := startDep(e, m.LiveSecret, crossBody(rateRef)).Expect(http.StatusConflict); r.Code() != "RATE_USED" {
			t.Errorf("reused quote: %s", r.Code())
		}
		tx := getTx(t, e, m.LiveSecret, d["merchant_reference"].(string))
		for k, v := range map[string]any{"status": "pending", "from_currency": "USDT", "currency": "NGN", "to_currency": "NGN",
			"rateId": rateRef, "fee_bearer": "beneficiary", "type": "DEPOSIT"} {
			if tx[k] != v {
				t.Errorf("cross %s = %v, want %v", k, tx[k], v)
			}
		}
		for f, v := range map[string]string{"from_amount": "10", "amount": "15760.8", "to_amount": "15760.8", "fee": "159.2",
			"amount_charged": "15920", "amount_settled": "15760.8", "trx_rate": "1592"} {
			wantNum(t, tx, f, v)
		}
		ref := tx["reference"].(string)
		wantEvents(t, e, ref, events.SwapPending)

		p := browse(t, http.MethodGet, d["universalUrl"].(string))
		for _, s := range []string{`<span id="amount">10</span> <span id="currency">USDT</span>`, "receives 15760.8 NGN"} {
			if !strings.Contains(p.body, s) {
				t.Errorf("cross page lacks %q", s)
			}
		}

		completeVia(e, m.LiveSecret, d["prepayId"].(string), "success").Expect(200)
		wantEvents(t, e, ref, events.SwapPending, events.SwapSuccess)
		if b := available(t, e, m.LiveSecret, "NGN"); !b.Equal(decimal.RequireFromString("15760.8")) {
			t.Errorf("NGN available %s, want 15760.8", b)
		}
		if b := available(t, e, m.LiveSecret, "USDT"); !b.IsZero() {
			t.Errorf("USDT available %s, want 0", b)
		}

		// A cross deposit that is cancelled ends with swap.failed.
		d2 := start(t, e, m.LiveSecret, crossBody(depositQuote("crypto-pay")))
		browse(t, http.MethodPost, d2["universalUrl"].(string)+"/cancel")
		tx2 := getTx(t, e, m.LiveSecret, d2["merchant_reference"].(string))
		wantEvents(t, e, tx2["reference"].(string), events.SwapPending, events.SwapFailed)
		if b := available(t, e, m.LiveSecret, "NGN"); !b.Equal(decimal.RequireFromString("15760.8")) {
			t.Errorf("NGN available %s after a cancelled cross deposit", b)
		}
	})
}

func TestCryptoPayExpiry(t *testing.T) {
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		m := cpMerchant(t, e, "Expiry Co")
		d := start(t, e, m.LiveSecret, directBody("Mug", "99", "NGN"))
		mref := d["merchant_reference"].(string)
		e.Clock.Advance(30 * time.Minute)
		var tx map[string]any
		servertest.Eventually(t, 10*time.Second, "the checkout to expire", func() bool {
			tx = getTx(t, e, m.LiveSecret, mref)
			return tx["status"] == "failed"
		})
		if reason, _ := tx["reject_reason"].(string); !strings.Contains(reason, "expired") {
			t.Errorf("reject_reason %q", reason)
		}
		wantEvents(t, e, mref, events.DepositPending, events.DepositFailed)
		if p := browse(t, http.MethodGet, d["universalUrl"].(string)); !strings.Contains(p.body, "Expired") || strings.Contains(p.body, `id="pay"`) {
			t.Errorf("expired page:\n%s", p.body)
		}
		if r := completeVia(e, m.LiveSecret, d["prepayId"].(string), "success").Expect(http.StatusConflict); r.Code() != "DUPLICATE_REFERENCE" {
			t.Errorf("completion after expiry: %s", r.Body)
		}
		if b := available(t, e, m.LiveSecret, "NGN"); !b.IsZero() {
			t.Errorf("NGN available %s after expiry", b)
		}
	})
}

func TestCryptoPayPaymentAfterExpiryFails(t *testing.T) {
	// With no expiry worker the completion is the first to find the checkout
	// past its expireTime (a worker started with the service could run after
	// the clock moves and fail it first).
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		m := cpMerchant(t, e, "Late Co")
		d := start(t, e, m.LiveSecret, directBody("Mug", "99", "NGN"))
		e.Clock.Advance(31 * time.Minute)
		if p := browse(t, http.MethodGet, d["universalUrl"].(string)); !strings.Contains(p.body, "Expired") || strings.Contains(p.body, `id="pay"`) {
			t.Errorf("page past expiry:\n%s", p.body)
		}
		tx := completeVia(e, m.LiveSecret, d["prepayId"].(string), "success").Expect(200).Data()
		if reason, _ := tx["reject_reason"].(string); tx["status"] != "failed" || !strings.Contains(reason, "expired") {
			t.Errorf("late payment: %v", tx)
		}
		wantEvents(t, e, tx["reference"].(string), events.DepositPending, events.DepositFailed)
		if b := available(t, e, m.LiveSecret, "NGN"); !b.IsZero() {
			t.Errorf("NGN available %s after a late payment", b)
		}
	}, servertest.WithoutWorkers())
}

// TestCryptoPayFees runs the operations with a crypto-pay fee configured:
// 1.5% plus 50 NGN.
func TestCryptoPayFees(t *testing.T) {
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		svc, err := cryptopay.New(e.App.DB, e.Clock, e.App.Ledger, e.App.Rates, e.App.Outbox, cryptopay.Config{
			PublicBaseURL: e.URL, Lifetime: 10 * time.Minute, Simulations: rails.SimulationsInEveryMode,
			Fee: cryptopay.Fee{Percent: decimal.RequireFromString("1.5"),
				Flat: map[money.Currency]decimal.Decimal{money.NGN: decimal.New(50, 0)}}})
		if err != nil {
			t.Fatal(err)
		}
		m := cpMerchant(t, e, "Fee Co")
		ctx := liveCtx(m)
		in := func(amount, bearer string) cryptopay.DepositInput {
			a := decimal.RequireFromString(amount)
			return cryptopay.DepositInput{DepositMethod: sptr("crypto-pay"), ProductName: sptr("Mug"),
				Amount: &a, Currency: sptr("NGN"), FeeBearer: sptr(bearer)}
		}
		cases := []struct {
			bearer                                   string
			fromAmount, charged, settled, fee, total string
		}{
			{"merchant", "1000", "1000", "935", "65", "935"},
			{"beneficiary", "1065", "1065", "1000", "65", "1935"},
		}
		for _, c := range cases {
			dep, err := svc.StartDeposit(ctx, nil, in("1000", c.bearer))
			if err != nil {
				t.Fatalf("%s: %v", c.bearer, err)
			}
			if got := dep.Links.ExpireTime - e.Clock.Now().UnixMilli(); got != (10 * time.Minute).Milliseconds() {
				t.Errorf("lifetime %d ms", got)
			}
			tx := getTx(t, e, m.LiveSecret, dep.Links.MerchantReference)
			for f, v := range map[string]string{"amount": "1000", "from_amount": c.fromAmount, "amount_charged": c.charged,
				"amount_settled": c.settled, "fee": c.fee} {
				wantNum(t, tx, f, v)
			}
			if tx["fee_bearer"] != c.bearer {
				t.Errorf("fee_bearer %v", tx["fee_bearer"])
			}
			if _, err := svc.Complete(ctx, nil, dep.Links.PrepayID, cryptopay.OutcomeSuccess); err != nil {
				t.Fatal(err)
			}
			if b := available(t, e, m.LiveSecret, "NGN"); !b.Equal(decimal.RequireFromString(c.total)) {
				t.Errorf("%s: NGN available %s, want %s", c.bearer, b, c.total)
			}
		}
		if _, err := svc.StartDeposit(ctx, nil, in("50", "merchant")); !apperr.Is(err, apperr.AmountTooSmall) {
			t.Errorf("fee above the amount: %v", err)
		}
		if _, err := svc.StartDeposit(ctx, nil, in("50", "beneficiary")); err != nil {
			t.Errorf("fee added for the payer: %v", err)
		}
	})
}

// TestCryptoPayConcurrentCompletion completes one checkout from many
// requests at once, through the sandbox endpoint and the page: exactly one
// wins and the merchant is credited once.
func TestCryptoPayConcurrentCompletion(t *testing.T) {
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		m := cpMerchant(t, e, "Race Co")
		d := start(t, e, m.LiveSecret, directBody("Mug", "75", "NGN"))
		id := d["prepayId"].(string)
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		post := func(i int) (int, string, error) {
			var req *http.Request
			var err error
			if i%2 == 0 {
				req, err = http.NewRequest(http.MethodPost, e.URL+"/v1/merchant/public/sandbox/deposits/crypto-pay/"+id,
					strings.NewReader(`{"outcome":"success"}`))
				if err == nil {
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-API-KEY", m.LiveSecret)
				}
			} else {
				req, err = http.NewRequest(http.MethodPost, d["universalUrl"].(string)+"/pay", nil)
			}
			if err != nil {
				return 0, "", err
			}
			res, err := noRedirect.Do(req)
			if err != nil {
				return 0, "", err
			}
			res.Body.Close()
			return res.StatusCode, res.Header.Get("Location"), nil
		}
		const n = 8
		type result struct {
			status   int
			location string
			err      error
		}
		results := make([]result, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, loc, err := post(i)
				results[i] = result{s, loc, err}
			}()
		}
		wg.Wait()
		wins := 0
		for i, r := range results {
			switch {
			case r.err != nil:
				t.Fatalf("request %d: %v", i, r.err)
			case r.status == 200, r.status == http.StatusSeeOther && strings.HasPrefix(r.location, cpSuccess):
				wins++
			case r.status == http.StatusConflict, r.status == http.StatusSeeOther && r.location == "/checkout/"+id:
			default:
				t.Errorf("request %d: %d %s", i, r.status, r.location)
			}
		}
		if wins != 1 {
			t.Errorf("%d completions won, want exactly 1: %+v", wins, results)
		}
		if b := available(t, e, m.LiveSecret, "NGN"); !b.Equal(decimal.New(75, 0)) {
			t.Errorf("NGN available %s, want 75", b)
		}
		wantEvents(t, e, d["merchant_reference"].(string), events.DepositPending, events.DepositSuccess)
	})
}
