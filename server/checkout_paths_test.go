package server_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"merchantpay/server/servertest"
)

// rawRequest sends text as is over a new TCP connection and reads the
// answer's status and headers (the body is left unread).
func rawRequest(t *testing.T, e *servertest.Env, text string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", e.Srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	return res
}

// A path under /checkout/ that is not in canonical form names no checkout:
// it is answered 404 with the checkout's not-found page, never redirected
// (ServeMux would send "/checkout/../healthz" to "/healthz").
func TestCheckoutPathsNotCanonicalAreNotFound(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		for _, p := range []string{"/checkout/../healthz", "/checkout/%2e%2e/x", "/checkout/%2E%2E/healthz",
			"/checkout//x", "/checkout/./x", "/checkout/x/../y", "/checkout/x/", "/checkout/x/.", "/checkout/../"} {
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				res := rawRequest(t, e, method+" "+p+" HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
				if res.StatusCode != http.StatusNotFound || res.Header.Get("Location") != "" {
					t.Errorf("%s %s: %d, Location %q; want 404 and no redirect", method, p, res.StatusCode, res.Header.Get("Location"))
				}
				if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
					t.Errorf("%s %s: Content-Type %q, want the checkout's HTML page", method, p, ct)
				}
			}
		}
	})
}
