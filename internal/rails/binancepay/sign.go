package binancepay

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Headers of a signed request, and of a webhook.
const (
	HeaderTimestamp   = "BinancePay-Timestamp"
	HeaderNonce       = "BinancePay-Nonce"
	HeaderCertificate = "BinancePay-Certificate-SN"
	HeaderSignature   = "BinancePay-Signature"
)

// Payload is what Binance Pay signs, for requests (HMAC) and webhooks (RSA):
// the timestamp, the nonce and the exact body bytes, each followed by LF.
func Payload(timestamp, nonce string, body []byte) []byte {
	b := make([]byte, 0, len(timestamp)+len(nonce)+len(body)+3)
	b = append(b, timestamp...)
	b = append(b, '\n')
	b = append(b, nonce...)
	b = append(b, '\n')
	b = append(b, body...)
	return append(b, '\n')
}

// Sign is a request's BinancePay-Signature: the upper-case hex HMAC-SHA512
// of Payload under the secret key.
func Sign(secretKey, timestamp, nonce string, body []byte) string {
	m := hmac.New(sha512.New, []byte(secretKey))
	m.Write(Payload(timestamp, nonce, body))
	return strings.ToUpper(hex.EncodeToString(m.Sum(nil)))
}

const nonceLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// Nonce is 32 random letters, as Binance's documentation writes them.
func Nonce() string {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("binancepay: no randomness: " + err.Error())
	}
	out := make([]byte, len(raw))
	for i, b := range raw {
		// 256 is a multiple of 52 to within 48 values; the slight bias of a
		// nonce's letters does not matter, only that it does not repeat.
		out[i] = nonceLetters[int(b)%len(nonceLetters)]
	}
	return string(out)
}

// Millis writes t as Binance's timestamps: Unix milliseconds in decimal.
func Millis(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
