package hookwire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Standard Webhooks reference vector: repository
// github.com/standard-webhooks/standard-webhooks, file
// libraries/go/webhook_test.go, TestWebhookSign (the same secret, id,
// timestamp, payload and signature appear in the other libraries' tests).
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorMsgID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorPayload   = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func vectorSigner(t *testing.T) *Signer {
	t.Helper()
	s, err := NewSigner(vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSignStandardWebhooksVector(t *testing.T) {
	s := vectorSigner(t)
	got := s.Sign(vectorMsgID, time.Unix(vectorTimestamp, 0), []byte(vectorPayload))
	if got != vectorSignature {
		t.Fatalf("Sign = %s, want %s", got, vectorSignature)
	}
	// Only the Unix second counts: sub-second parts and zones change nothing.
	ts := time.Unix(vectorTimestamp, 999_999_999).In(time.FixedZone("X", 5*3600))
	if got := s.Sign(vectorMsgID, ts, []byte(vectorPayload)); got != vectorSignature {
		t.Errorf("Sign with nanoseconds and a zone = %s", got)
	}
}

func TestSignMatchesPlainHMAC(t *testing.T) {
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	body := []byte(`{"id":"evt_1","event":"deposit.success"}`)
	ts := time.Unix(1700000000, 0)
	m := hmac.New(sha256.New, key)
	m.Write([]byte("evt_1.1700000000." + string(body)))
	want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	if got := s.Sign("evt_1", ts, body); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestHeaders(t *testing.T) {
	s := vectorSigner(t)
	h := s.Headers(vectorMsgID, time.Unix(vectorTimestamp, 0), []byte(vectorPayload))
	for name, want := range map[string]string{
		"webhook-id":        vectorMsgID,
		"webhook-timestamp": "1614265330",
		"webhook-signature": vectorSignature,
	} {
		if got := h.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q, want [%q]", name, got, want)
		}
	}
	if len(h) != 3 {
		t.Errorf("got %d headers, want 3: %v", len(h), h)
	}
}

func TestVerifyVector(t *testing.T) {
	s := vectorSigner(t)
	h := http.Header{}
	h.Set("webhook-id", vectorMsgID)
	h.Set("webhook-timestamp", strconv.Itoa(vectorTimestamp))
	h.Set("webhook-signature", vectorSignature)
	now := time.Unix(vectorTimestamp, 0).Add(time.Minute)
	if err := s.Verify(h, []byte(vectorPayload), now, DefaultTolerance); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

func TestVerify(t *testing.T) {
	s := vectorSigner(t)
	other, err := NewSigner("whsec_" + base64.StdEncoding.EncodeToString([]byte("another-secret-of-32-bytes-long!")))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"id":"evt_1"}`)
	const tol = 5 * time.Minute

	signed := func(ts time.Time) http.Header { return s.Headers("evt_1", ts, body) }
	with := func(h http.Header, name, value string) http.Header {
		h = h.Clone()
		h.Set(name, value)
		return h
	}
	without := func(h http.Header, name string) http.Header {
		h = h.Clone()
		h.Del(name)
		return h
	}
	valid := signed(now)
	goodSig := valid.Get("webhook-signature")
	garbage := "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc="

	for _, tc := range []struct {
		name    string
		headers http.Header
		body    []byte
		want    error // nil: valid
	}{
		{"valid", valid, body, nil},
		{"oldest allowed", signed(now.Add(-tol)), body, nil},
		{"newest allowed", signed(now.Add(tol)), body, nil},
		{"too old", signed(now.Add(-tol - time.Second)), body, ErrTimestampOutOfRange},
		{"too new", signed(now.Add(tol + time.Second)), body, ErrTimestampOutOfRange},
		{"ancient", signed(time.Unix(0, 0)), body, ErrTimestampOutOfRange},
		{"missing id", without(valid, "webhook-id"), body, ErrMissingHeader},
		{"missing timestamp", without(valid, "webhook-timestamp"), body, ErrMissingHeader},
		{"missing signature", without(valid, "webhook-signature"), body, ErrMissingHeader},
		{"empty signature", with(valid, "webhook-signature", ""), body, ErrMissingHeader},
		{"no headers", http.Header{}, body, ErrMissingHeader},
		{"tampered body", valid, []byte(`{"id":"evt_2"}`), ErrNoMatchingSignature},
		{"empty body", valid, nil, ErrNoMatchingSignature},
		{"other id", with(valid, "webhook-id", "evt_2"), body, ErrNoMatchingSignature},
		{"other timestamp", with(valid, "webhook-timestamp", strconv.FormatInt(now.Unix()+1, 10)), body, ErrNoMatchingSignature},
		{"wrong signature", with(valid, "webhook-signature", garbage), body, ErrNoMatchingSignature},
		{"other secret", other.Headers("evt_1", now, body), body, ErrNoMatchingSignature},
		{"signature without version", with(valid, "webhook-signature", strings.TrimPrefix(goodSig, "v1,")), body, ErrNoMatchingSignature},
		{"right MAC, wrong version", with(valid, "webhook-signature", "v2,"+strings.TrimPrefix(goodSig, "v1,")), body, ErrNoMatchingSignature},
		{"right MAC, asymmetric version", with(valid, "webhook-signature", "v1a,"+strings.TrimPrefix(goodSig, "v1,")), body, ErrNoMatchingSignature},
		{"not base64", with(valid, "webhook-signature", "v1,!!!"), body, ErrNoMatchingSignature},
		{"truncated MAC", with(valid, "webhook-signature", goodSig[:len(goodSig)-8]), body, ErrNoMatchingSignature},
		{"several, one valid", with(valid, "webhook-signature",
			strings.Join([]string{garbage, "v2," + garbage[3:], goodSig, "v1a,abc", garbage}, " ")), body, nil},
		{"several, extra spaces", with(valid, "webhook-signature", "  "+garbage+"   "+goodSig+" "), body, nil},
		{"several, none valid", with(valid, "webhook-signature", garbage+" "+garbage), body, ErrNoMatchingSignature},
		{"timestamp not a number", with(valid, "webhook-timestamp", "yesterday"), body, ErrInvalidTimestamp},
		{"timestamp with plus", with(valid, "webhook-timestamp", "+"+strconv.FormatInt(now.Unix(), 10)), body, ErrInvalidTimestamp},
		{"timestamp with space", with(valid, "webhook-timestamp", " "+strconv.FormatInt(now.Unix(), 10)), body, ErrInvalidTimestamp},
		{"timestamp negative", with(valid, "webhook-timestamp", "-5"), body, ErrInvalidTimestamp},
		{"timestamp in ms", with(valid, "webhook-timestamp", strconv.FormatInt(now.UnixMilli(), 10)), body, ErrTimestampOutOfRange},
		{"timestamp float", with(valid, "webhook-timestamp", "1700000000.0"), body, ErrInvalidTimestamp},
		{"timestamp huge", with(valid, "webhook-timestamp", strings.Repeat("9", 30)), body, ErrInvalidTimestamp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Verify(tc.headers, tc.body, now, tol)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// A receiver that holds old and new secret during a roll accepts a message
// signed with both, whichever it checks with.
func TestVerifyDuringSecretRoll(t *testing.T) {
	oldS := vectorSigner(t)
	newSecret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	newS, err := NewSigner(newSecret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{}`)
	h := newS.Headers("evt_9", now, body)
	h.Set("webhook-signature", h.Get("webhook-signature")+" "+oldS.Sign("evt_9", now, body))
	for name, s := range map[string]*Signer{"old": oldS, "new": newS} {
		if err := s.Verify(h, body, now, time.Minute); err != nil {
			t.Errorf("%s secret: %v", name, err)
		}
	}
}

func TestNewSecret(t *testing.T) {
	seen := map[string]bool{}
	for range 20 {
		secret, err := NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		enc, ok := strings.CutPrefix(secret, "whsec_")
		if !ok {
			t.Fatalf("%q lacks the whsec_ prefix", secret)
		}
		key, err := base64.StdEncoding.DecodeString(enc)
		if err != nil || len(key) != 32 {
			t.Fatalf("%q: %d bytes, err %v; want 32 bytes of std base64", secret, len(key), err)
		}
		if seen[secret] {
			t.Fatalf("NewSecret repeated %q", secret)
		}
		seen[secret] = true
		if _, err := NewSigner(secret); err != nil {
			t.Fatalf("NewSigner(NewSecret()): %v", err)
		}
	}
}

func TestNewSignerAccepts(t *testing.T) {
	for _, n := range []int{24, 32, 48, 64} {
		secret := "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, n))
		if _, err := NewSigner(secret); err != nil {
			t.Errorf("%d-byte key: %v", n, err)
		}
	}
}

func TestNewSignerRejects(t *testing.T) {
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", n))) }
	for _, tc := range []struct{ name, secret string }{
		{"empty", ""},
		{"prefix only", "whsec_"},
		{"no prefix", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		{"wrong prefix", "whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		{"upper-case prefix", "WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		{"not base64", "whsec_not*base64*at*all*!!!!!!!!!!!!"},
		{"url-safe base64", "whsec_" + strings.NewReplacer("+", "-", "/", "_").Replace(base64.StdEncoding.EncodeToString([]byte{0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe, 0xfb, 0xff, 0xfe}))},
		{"bad padding", "whsec_" + strings.TrimRight(b64(25), "=")},
		{"newline inside", "whsec_" + b64(24)[:10] + "\n" + b64(24)[10:]},
		{"space after", "whsec_" + b64(24) + " "},
		{"too short", "whsec_" + b64(23)},
		{"16 bytes", "whsec_" + b64(16)},
		{"too long", "whsec_" + b64(65)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSigner(tc.secret)
			if err == nil {
				t.Fatalf("NewSigner(%q) = %v, want an error", tc.secret, s)
			}
			if enc := strings.TrimPrefix(tc.secret, "whsec_"); len(enc) > 8 && strings.Contains(err.Error(), enc) {
				t.Errorf("error %q repeats the secret", err)
			}
		})
	}
}

func TestSignerDoesNotPrintKey(t *testing.T) {
	s := vectorSigner(t)
	key, _ := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, s)
		if strings.Contains(out, "MfKQ") || strings.Contains(out, fmt.Sprint(key)) || strings.Contains(out, string(key)) {
			t.Errorf("%s printed the key: %s", format, out)
		}
	}
}
