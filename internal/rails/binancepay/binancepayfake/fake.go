// Package binancepayfake is an in-memory Binance Pay for tests and local
// runs: signed requests checked (HMAC-SHA512, timestamp window, nonce, API
// key), order v3 create, query and close with their documented rules, its
// own RSA key served at the certificates endpoint, and controls to pay,
// close or expire orders, fail calls and send signed webhooks.
package binancepayfake

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/internal/rails/binancepay"
	"merchantpay/internal/rails/railsfake"
)

// DefaultWindow is how far a request's timestamp may be from the fake's
// clock.
const DefaultWindow = time.Minute

// Request is one request the fake received.
type Request struct {
	Path   string
	Header http.Header
	Body   []byte
}

// Fake is the in-memory provider; call New or Start.
type Fake struct {
	apiKey, secretKey string

	mu         sync.Mutex
	key        *rsa.PrivateKey
	serial     string
	rsaPEM     bool // serve "RSA PUBLIC KEY" (PKCS#1) instead of "PUBLIC KEY"
	window     time.Duration
	orders     []*Order
	nextPrepay uint64
	nextTx     uint64
	fiatRates  map[string]decimal.Decimal // USDT per unit of a fiat currency

	*railsfake.Base[Request]
}

// New makes a fake that accepts requests signed with apiKey and secretKey.
func New(apiKey, secretKey string) *Fake {
	f := &Fake{apiKey: apiKey, secretKey: secretKey, window: DefaultWindow,
		nextPrepay: 1 << 60, nextTx: 1 << 55,
		fiatRates: map[string]decimal.Decimal{"NGN": decimal.RequireFromString("0.00065"),
			"USD": decimal.NewFromInt(1), "GHS": decimal.RequireFromString("0.08")},
		Base: railsfake.NewBase[Request](badGateway)}
	f.RotateKey()
	return f
}

// Start makes a fake and serves it on loopback; Close stops it.
func Start(apiKey, secretKey string) *Fake {
	f := New(apiKey, secretKey)
	f.Serve(f)
	return f
}

// RotateKey gives the fake a new RSA key pair and certificate serial (the
// MD5 of the public key, as Binance documents); the old key is no longer
// served.
func (f *Fake) RotateKey() {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		panic(err)
	}
	sum := md5.Sum(der)
	f.mu.Lock()
	f.key, f.serial = key, hex.EncodeToString(sum[:])
	f.mu.Unlock()
}

// Serial is the current certificate serial.
func (f *Fake) Serial() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.serial
}

// ServeRSAPublicKey makes the certificates endpoint write the key as PEM
// "RSA PUBLIC KEY" (PKCS#1) when on, "PUBLIC KEY" (PKIX) when off.
func (f *Fake) ServeRSAPublicKey(on bool) {
	f.mu.Lock()
	f.rsaPEM = on
	f.mu.Unlock()
}

// SetFiatRate sets the USDT an order priced in fiat currency cur takes per
// unit of cur; a currency without a rate is refused.
func (f *Fake) SetFiatRate(cur, usdtPerUnit string) {
	f.mu.Lock()
	f.fiatRates[cur] = decimal.RequireFromString(usdtPerUnit)
	f.mu.Unlock()
}

func (f *Fake) fiatRate(cur string) (decimal.Decimal, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.fiatRates[cur]
	return r, ok
}

// SetWindow sets how far a request's timestamp may be from now.
func (f *Fake) SetWindow(d time.Duration) {
	f.mu.Lock()
	f.window = d
	f.mu.Unlock()
}

var noncePattern = regexp.MustCompile(`^[A-Za-z0-9]{32}$`)

func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.Handle(w, r, func(r *http.Request, body []byte) Request {
		return Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	}, f.route)
}

func (f *Fake) route(r *http.Request, body []byte) (int, any) {
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, failBody("400000", "Only POST is supported.")
	}
	if code, msg := f.checkSignature(r.Header, body); code != "" {
		return http.StatusBadRequest, failBody(code, msg)
	}
	switch r.URL.Path {
	case "/binancepay/openapi/v3/order":
		return f.create(body)
	case "/binancepay/openapi/v2/order/query":
		return f.query(body)
	case "/binancepay/openapi/order/close":
		return f.closeOrder(body)
	case "/binancepay/openapi/certificates":
		return http.StatusOK, successBody([]map[string]string{{"certSerial": f.Serial(), "certPublic": f.publicPEM()}})
	}
	return http.StatusNotFound, failBody("400000", "Unknown path.")
}

// checkSignature checks a request's Binance Pay headers; a FAIL code and
// message when they do not hold.
func (f *Fake) checkSignature(h http.Header, body []byte) (string, string) {
	if h.Get("Content-Type") != "application/json" {
		return "400100", "content-type must be application/json"
	}
	ts, nonce := h.Get(binancepay.HeaderTimestamp), h.Get(binancepay.HeaderNonce)
	if h.Get(binancepay.HeaderCertificate) != f.apiKey {
		return "400004", "API identity key not found or invalid."
	}
	ms, err := strconv.ParseInt(ts, 10, 64)
	f.mu.Lock()
	window := f.window
	f.mu.Unlock()
	if skew := time.Since(time.UnixMilli(ms)); err != nil || skew > window || skew < -window {
		return "400003", "Timestamp for this request is outside of the recvWindow."
	}
	if !noncePattern.MatchString(nonce) {
		return "400100", "BinancePay-Nonce must be 32 letters or digits."
	}
	want := binancepay.Sign(f.secretKey, ts, nonce, body)
	if !hmac.Equal([]byte(h.Get(binancepay.HeaderSignature)), []byte(want)) {
		return "400002", "Signature for this request is not valid."
	}
	return "", ""
}

func successBody(data any) map[string]any {
	return map[string]any{"status": "SUCCESS", "code": "000000", "data": data}
}

func failBody(code, msg string) map[string]any {
	return map[string]any{"status": "FAIL", "code": code, "errorMessage": msg}
}
