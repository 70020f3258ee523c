package hookwire

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks names and limits
// (https://www.standardwebhooks.com).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"

	// SecretPrefix starts every endpoint secret.
	SecretPrefix = "whsec_"
	// MinSecretBytes and MaxSecretBytes bound the decoded secret: the spec
	// asks for at least 24 bytes (192 bits) and at most 512 bits.
	MinSecretBytes = 24
	MaxSecretBytes = 64
	// NewSecretBytes is the size of the secrets NewSecret makes.
	NewSecretBytes = 32

	// DefaultTolerance is the usual allowed clock difference for Verify.
	DefaultTolerance = 5 * time.Minute

	signatureVersion = "v1"
)

// Errors of Verify; test with errors.Is.
var (
	ErrMissingHeader       = errors.New("webhook: missing webhook header")
	ErrInvalidTimestamp    = errors.New("webhook: invalid webhook-timestamp")
	ErrTimestampOutOfRange = errors.New("webhook: webhook-timestamp outside the allowed tolerance")
	ErrNoMatchingSignature = errors.New("webhook: no matching signature")
)

// NewSecret makes a new endpoint secret: "whsec_" and the standard base64
// of NewSecretBytes random bytes.
func NewSecret() (string, error) {
	b := make([]byte, NewSecretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("webhook: generating secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// Signer signs and verifies webhooks with one endpoint secret. It is safe
// for concurrent use. Its String method hides the key.
type Signer struct {
	key []byte
}

// NewSigner makes a Signer from a "whsec_<base64>" secret. It refuses a
// secret without the prefix, with anything but standard base64 after it, or
// whose key is shorter than MinSecretBytes or longer than MaxSecretBytes.
// Error messages never repeat the secret.
func NewSigner(secret string) (*Signer, error) {
	enc, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("webhook: secret must start with %q", SecretPrefix)
	}
	// StdEncoding skips CR and LF; a secret with them is malformed anyway.
	if enc == "" || strings.ContainsAny(enc, "\r\n") {
		return nil, errors.New("webhook: secret is not valid base64")
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, errors.New("webhook: secret is not valid base64")
	}
	if len(key) < MinSecretBytes || len(key) > MaxSecretBytes {
		return nil, fmt.Errorf("webhook: secret key is %d bytes, want %d to %d", len(key), MinSecretBytes, MaxSecretBytes)
	}
	return &Signer{key: key}, nil
}

// String hides the key from fmt and logs.
func (s *Signer) String() string { return "hookwire.Signer{key:redacted}" }

// GoString hides the key from %#v.
func (s *Signer) GoString() string { return s.String() }

func (s *Signer) mac(msgID, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(msgID))
	h.Write([]byte{'.'})
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Sign returns "v1,<base64 HMAC-SHA256 of msgID.timestamp.body>" with the
// timestamp in Unix seconds. msgID must not contain '.' (event ids do not).
func (s *Signer) Sign(msgID string, ts time.Time, body []byte) string {
	ts10 := strconv.FormatInt(ts.Unix(), 10)
	return signatureVersion + "," + base64.StdEncoding.EncodeToString(s.mac(msgID, ts10, body))
}

// Headers returns the three Standard Webhooks headers for one attempt.
func (s *Signer) Headers(msgID string, ts time.Time, body []byte) http.Header {
	h := make(http.Header, 3)
	h.Set(HeaderID, msgID)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, s.Sign(msgID, ts, body))
	return h
}

// Verify checks a received webhook: the three headers must be present, the
// timestamp must be a Unix time in seconds no more than tolerance away from
// now (either way), and at least one of the space-separated signatures must
// be a v1 signature that matches, compared in constant time. Signatures of
// other versions (such as v1a) are skipped. Errors wrap ErrMissingHeader,
// ErrInvalidTimestamp, ErrTimestampOutOfRange or ErrNoMatchingSignature.
func (s *Signer) Verify(headers http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	msgID := headers.Get(HeaderID)
	tsText := headers.Get(HeaderTimestamp)
	sigs := headers.Get(HeaderSignature)
	for _, h := range [...]struct{ name, value string }{
		{HeaderID, msgID}, {HeaderTimestamp, tsText}, {HeaderSignature, sigs},
	} {
		if h.value == "" {
			return fmt.Errorf("%w: %s", ErrMissingHeader, h.name)
		}
	}

	ts, err := parseUnixSeconds(tsText)
	if err != nil {
		return err
	}
	tsTime := time.Unix(ts, 0)
	if tsTime.Before(now.Add(-tolerance)) {
		return fmt.Errorf("%w: too old", ErrTimestampOutOfRange)
	}
	if tsTime.After(now.Add(tolerance)) {
		return fmt.Errorf("%w: in the future", ErrTimestampOutOfRange)
	}

	want := s.mac(msgID, tsText, body)
	for _, sig := range strings.Fields(sigs) {
		version, enc, ok := strings.Cut(sig, ",")
		if !ok || version != signatureVersion {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrNoMatchingSignature
}

// parseUnixSeconds accepts only plain decimal digits, so that the signed
// text and the checked time cannot disagree ("+1", " 1", "1e9" are refused).
func parseUnixSeconds(s string) (int64, error) {
	if len(s) > 18 {
		return 0, fmt.Errorf("%w: %q", ErrInvalidTimestamp, s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%w: %q", ErrInvalidTimestamp, s)
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", ErrInvalidTimestamp, s)
	}
	return n, nil
}
