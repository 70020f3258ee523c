package hookwire_test

import (
	"bytes"
	"testing"
	"time"

	"merchantpay/internal/hookwire"
)

// Signing one delivery: the body's HMAC and the three headers, per attempt.
func BenchmarkSignerHeaders(b *testing.B) {
	secret, err := hookwire.NewSecret()
	if err != nil {
		b.Fatal(err)
	}
	s, err := hookwire.NewSigner(secret)
	if err != nil {
		b.Fatal(err)
	}
	body := bytes.Repeat([]byte(`{"reference":"WTH-0b6f1f0e-6a43-4e0b-9a0e-6f1d2c3b4a59","amount":1000.5}`), 16)
	ts := time.Unix(1_700_000_000, 0)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Headers("evt_0b6f1f0e-6a43-4e0b-9a0e-6f1d2c3b4a59", ts, body)
	}
}

func BenchmarkSignerVerify(b *testing.B) {
	secret, _ := hookwire.NewSecret()
	s, _ := hookwire.NewSigner(secret)
	body := bytes.Repeat([]byte(`{"reference":"WTH-0b6f1f0e-6a43-4e0b-9a0e-6f1d2c3b4a59","amount":1000.5}`), 16)
	ts := time.Unix(1_700_000_000, 0)
	h := s.Headers("evt_1", ts, body)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Verify(h, body, ts, 5*time.Minute); err != nil {
			b.Fatal(err)
		}
	}
}
