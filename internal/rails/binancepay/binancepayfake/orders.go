package binancepayfake

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Order is an order the fake holds. Amount is the decimal text as sent, or
// for an order priced in fiat (FiatAmount and FiatCurrency as sent) the
// fiat amount converted into USDT at the fake's rate.
type Order struct {
	PrepayID        string
	MerchantTradeNo string
	Amount          string
	Currency        string
	FiatAmount      string
	FiatCurrency    string
	Description     string
	TerminalType    string
	WebhookURL      string
	Status          string // INITIAL, PAID, CANCELED, EXPIRED, ERROR
	TransactionID   string
	CreatedAt       time.Time
	ExpiresAt       time.Time
	PaidAt          time.Time
}

var (
	tradeNoPattern = regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`)
	tickerPattern  = regexp.MustCompile(`^[A-Z0-9]{2,10}$`)
	numberPattern  = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`)
	terminalTypes  = map[string]bool{"APP": true, "WEB": true, "WAP": true, "MINI_PROGRAM": true, "OTHERS": true}
	fiat           = map[string]bool{"USD": true, "EUR": true, "GBP": true, "NGN": true, "GHS": true, "KES": true}
)

type createBody struct {
	Env struct {
		TerminalType string `json:"terminalType"`
	} `json:"env"`
	MerchantTradeNo string          `json:"merchantTradeNo"`
	OrderAmount     json.RawMessage `json:"orderAmount"`
	Currency        string          `json:"currency"`
	FiatAmount      json.RawMessage `json:"fiatAmount"`
	FiatCurrency    string          `json:"fiatCurrency"`
	Description     string          `json:"description"`
	GoodsDetails    []struct {
		GoodsType        string `json:"goodsType"`
		GoodsCategory    string `json:"goodsCategory"`
		ReferenceGoodsID string `json:"referenceGoodsId"`
		GoodsName        string `json:"goodsName"`
	} `json:"goodsDetails"`
	OrderExpireTime int64  `json:"orderExpireTime"`
	WebhookURL      string `json:"webhookUrl"`
}

// create checks an order v3 request the way Binance documents its fields.
func (f *Fake) create(body []byte) (int, any) {
	var in createBody
	if err := json.Unmarshal(body, &in); err != nil {
		return http.StatusBadRequest, failBody("400100", "The request body is not valid JSON.")
	}
	var problems []string
	if !terminalTypes[in.Env.TerminalType] {
		problems = append(problems, "env.terminalType is not one of APP, WEB, WAP, MINI_PROGRAM, OTHERS")
	}
	if !tradeNoPattern.MatchString(in.MerchantTradeNo) {
		return http.StatusBadRequest, failBody("400103", "merchantTradeNo must be 1 to 32 letters or digits.")
	}
	amount, currency, fiatAmount := string(bytes.TrimSpace(in.OrderAmount)), in.Currency, string(bytes.TrimSpace(in.FiatAmount))
	switch {
	case (amount != "" || currency != "") == (fiatAmount != "" || in.FiatCurrency != ""):
		problems = append(problems, "exactly one of orderAmount with currency, or fiatAmount with fiatCurrency, is required")
	case fiatAmount != "":
		// The order is in USDT, converted at the fake's rate.
		d, err := decimal.NewFromString(fiatAmount)
		rate, known := f.fiatRate(in.FiatCurrency)
		if !numberPattern.MatchString(fiatAmount) || err != nil || !d.IsPositive() {
			problems = append(problems, "fiatAmount must be a number above 0")
		} else if !known {
			problems = append(problems, "fiatCurrency is not a supported fiat currency")
		} else if amount = d.Mul(rate).Truncate(8).String(); !d.Mul(rate).Truncate(8).IsPositive() {
			problems = append(problems, "fiatAmount is below the smallest USDT amount")
		}
		currency = "USDT"
	default:
		d, err := decimal.NewFromString(amount)
		if !numberPattern.MatchString(amount) || err != nil || !d.IsPositive() || !d.Equal(d.Truncate(8)) {
			problems = append(problems, "orderAmount must be a number above 0 with at most 8 decimals")
		}
		if !tickerPattern.MatchString(in.Currency) || fiat[in.Currency] {
			problems = append(problems, "currency must be an upper-case crypto ticker")
		}
	}
	if in.Description == "" || len(in.Description) > 256 {
		problems = append(problems, "description is required (at most 256 characters)")
	}
	for _, g := range in.GoodsDetails {
		if (g.GoodsType != "01" && g.GoodsType != "02") || g.GoodsCategory == "" || g.ReferenceGoodsID == "" || g.GoodsName == "" {
			problems = append(problems, "goodsDetails need goodsType 01/02, goodsCategory, referenceGoodsId and goodsName")
			break
		}
	}
	if u, err := url.Parse(in.WebhookURL); in.WebhookURL != "" &&
		(err != nil || len(in.WebhookURL) > 256 || (u.Scheme != "http" && u.Scheme != "https")) {
		problems = append(problems, "webhookUrl must be an http(s) URL of at most 256 characters")
	}
	now := time.Now()
	expires := now.Add(time.Hour)
	if in.OrderExpireTime != 0 {
		if expires = time.UnixMilli(in.OrderExpireTime); !expires.After(now) {
			problems = append(problems, "orderExpireTime must be in the future")
		}
	}
	if len(problems) > 0 {
		return http.StatusBadRequest, failBody("400100", strings.Join(problems, "; "))
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byTradeNo(in.MerchantTradeNo) != nil {
		return http.StatusBadRequest, failBody("400201", "INVALID_MERCHANT_TRADE_NO: merchantTradeNo is duplicated.")
	}
	f.nextPrepay++
	o := &Order{PrepayID: strconv.FormatUint(f.nextPrepay, 10), MerchantTradeNo: in.MerchantTradeNo,
		Amount: amount, Currency: currency, FiatAmount: fiatAmount, FiatCurrency: in.FiatCurrency, Description: in.Description, TerminalType: in.Env.TerminalType,
		WebhookURL: in.WebhookURL, Status: "INITIAL", CreatedAt: now, ExpiresAt: expires}
	f.orders = append(f.orders, o)
	checkout := "https://pay.binance.com/en/checkout/" + o.PrepayID
	return http.StatusOK, successBody(map[string]any{
		"currency": o.Currency, "totalFee": json.Number(o.Amount), "prepayId": o.PrepayID,
		"terminalType": o.TerminalType, "expireTime": expires.UnixMilli(),
		"qrcodeLink":  "https://public.bnbstatic.com/static/payment/" + o.PrepayID + ".jpg",
		"qrContent":   "https://app.binance.com/qr/dplk" + o.PrepayID,
		"checkoutUrl": checkout, "deeplink": "bnc://app.binance.com/payment/secpay?tempToken=" + o.PrepayID,
		"universalUrl": "https://app.binance.com/payment/secpay?linkToken=" + o.PrepayID,
	})
}

type lookupBody struct {
	MerchantTradeNo string `json:"merchantTradeNo"`
	PrepayID        string `json:"prepayId"`
}

// find reads a query or close body; prepayId wins over merchantTradeNo.
// The caller holds f.mu.
func (f *Fake) find(body []byte) *Order {
	var in lookupBody
	if json.Unmarshal(body, &in) != nil {
		return nil
	}
	if in.PrepayID != "" {
		for _, o := range f.orders {
			if o.PrepayID == in.PrepayID {
				return o
			}
		}
		return nil
	}
	return f.byTradeNo(in.MerchantTradeNo)
}

func (f *Fake) byTradeNo(tradeNo string) *Order {
	for _, o := range f.orders {
		if o.MerchantTradeNo == tradeNo {
			return o
		}
	}
	return nil
}

func (f *Fake) query(body []byte) (int, any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.find(body)
	if o == nil {
		return http.StatusBadRequest, failBody("400202", "ORDER_NOT_FOUND")
	}
	if o.Status == "INITIAL" && time.Now().After(o.ExpiresAt) {
		o.Status = "EXPIRED"
	}
	data := map[string]any{"merchantId": 987654321, "prepayId": o.PrepayID, "merchantTradeNo": o.MerchantTradeNo,
		"status": o.Status, "currency": o.Currency, "orderAmount": json.Number(o.Amount),
		"createTime": o.CreatedAt.UnixMilli()}
	if o.TransactionID != "" {
		data["transactionId"] = o.TransactionID
		data["transactTime"] = o.PaidAt.UnixMilli()
		data["openUserId"] = "fakeopenuser"
	}
	return http.StatusOK, successBody(data)
}

func (f *Fake) closeOrder(body []byte) (int, any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.find(body)
	switch {
	case o == nil:
		return http.StatusBadRequest, failBody("400202", "ORDER_NOT_FOUND")
	case o.Status == "INITIAL" || o.Status == "PENDING" || o.Status == "CANCELED":
		o.Status = "CANCELED"
		return http.StatusOK, successBody(true)
	}
	return http.StatusBadRequest, failBody("400204", "INVALID_ORDER_STATUS")
}

// publicPEM is the current public key as the certificates endpoint writes
// it.
func (f *Fake) publicPEM() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rsaPEM {
		return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&f.key.PublicKey)}))
	}
	der, _ := x509.MarshalPKIXPublicKey(&f.key.PublicKey)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}
