package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/internal/events"
	"merchantpay/server/servertest"
)

// browserDir runs testdata/browser/setup.sh, which installs Debian's
// Chromium when it is missing and the pinned playwright-core, and returns
// that folder. The test is skipped only where Chromium cannot be installed.
func browserDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "browser"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(dir, "setup.sh"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		t.Skipf("Chromium cannot be installed here: %s", lastLine(out.String()))
	}
	if err != nil {
		t.Fatalf("browser test setup: %v\n%s", err, out.String())
	}
	return dir
}

// runBrowser runs the Node script of dir (see browserDir) with in as JSON
// on its stdin, and returns what it printed.
func runBrowser(t *testing.T, dir, script string, in any) []byte {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(raw)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("browser (%s): %v\nstdout: %s\nstderr: %s", script, err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// shop is a merchant's web site: it records the pages the payer lands on.
type shop struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits []string
}

func newShop(t *testing.T) *shop {
	s := &shop{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits = append(s.hits, r.URL.String())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><title>Thanks</title><h1>Thank you for your order</h1>")
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *shop) visited() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.hits...)
}

// hookSink is a webhook endpoint that keeps every body it gets.
type hookSink struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newHookSink(t *testing.T) *hookSink {
	h := &hookSink{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies = append(h.bodies, b)
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// event finds a received webhook of type typ about the transaction ref.
func (h *hookSink) event(t *testing.T, typ, ref string) map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range h.bodies {
		m := decodeWebhook(t, b)
		data, _ := m["data"].(map[string]any)
		if m["event"] == typ && data != nil && data["reference"] == ref {
			return m
		}
	}
	return nil
}

func decodeWebhook(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("webhook body %s: %v", b, err)
	}
	return m
}

// TestCryptoPayBrowser pays a checkout in headless Chromium: the payer opens
// universalUrl, sees the amount, clicks Pay and lands on the merchant's
// success_url; the deposit is then success, the balance credited and the
// deposit.success webhook arrives. MERCHANTPAY_SCREENSHOTS=dir keeps a
// screenshot of the page.
func TestCryptoPayBrowser(t *testing.T) {
	dir := browserDir(t)
	eachCryptoPay(t, func(t *testing.T, e *servertest.Env) {
		m := cpMerchant(t, e, "Browser Co")
		site := newShop(t)
		hooks := newHookSink(t)
		e.REST(http.MethodPost, "/webhooks", m.LiveSecret, map[string]any{"url": hooks.srv.URL + "/hooks",
			"events": []string{"deposit.success"}}).Expect(http.StatusCreated)

		body := directBody("Blue Mug", "2500.5", "NGN")
		body["reference"] = "Browser-1"
		body["requirement"].(map[string]any)["success_url"] = site.srv.URL + "/thanks"
		d := start(t, e, m.LiveSecret, body)

		in := map[string]any{"url": d["universalUrl"], "amount": "2500.5", "currency": "NGN",
			"successPrefix": site.srv.URL + "/thanks"}
		if shots := os.Getenv("MERCHANTPAY_SCREENSHOTS"); shots != "" {
			in["screenshot"] = filepath.Join(shots, "checkout-"+e.Kind+".png")
		}
		out := runBrowser(t, dir, "checkout.mjs", in)
		var saw struct {
			Amount, Currency, Landed string
			QR                       struct {
				Complete bool
				Width    int
			}
		}
		if err := json.Unmarshal(out, &saw); err != nil {
			t.Fatalf("browser output %q: %v", out, err)
		}
		if !saw.QR.Complete || saw.QR.Width < 100 {
			t.Errorf("the QR image did not load in the browser: %+v", saw.QR)
		}
		if !strings.HasPrefix(saw.Landed, site.srv.URL+"/thanks?") || !strings.Contains(saw.Landed, "status=success") {
			t.Errorf("landed on %q", saw.Landed)
		}
		var thanks []string
		for _, v := range site.visited() {
			if strings.HasPrefix(v, "/thanks") {
				thanks = append(thanks, v)
			}
		}
		if len(thanks) != 1 || !strings.Contains(thanks[0], "prepay_id="+d["prepayId"].(string)) {
			t.Errorf("the shop's success page saw %v", thanks)
		}

		tx := getTx(t, e, m.LiveSecret, "Browser-1")
		if tx["status"] != "success" {
			t.Fatalf("status after paying in the browser: %v", tx["status"])
		}
		ref := tx["reference"].(string)
		wantEvents(t, e, ref, events.DepositPending, events.DepositSuccess)
		if b := available(t, e, m.LiveSecret, "NGN"); !b.Equal(decimal.RequireFromString("2500.5")) {
			t.Errorf("NGN available %s, want 2500.5", b)
		}
		var hook map[string]any
		servertest.Eventually(t, 15*time.Second, "the deposit.success webhook", func() bool {
			hook = hooks.event(t, events.DepositSuccess, ref)
			return hook != nil
		})
		if data := hook["data"].(map[string]any); data["status"] != "success" || data["merchant_reference"] != "Browser-1" {
			t.Errorf("webhook data: %v", data)
		}
	}, servertest.With("EVENTS_POLL_INTERVAL", "50ms"))
}
