package hookwire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// deliveryClient sends as the dispatcher does: through d, no proxy, no
// redirects.
func deliveryClient(d Dialer, timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy: nil, DialContext: d.DialContext, DialTLSContext: d.DialTLSContext,
			ForceAttemptHTTP2: true, DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// closedPort is a port on 127.0.0.1 where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// rawServer accepts connections on 127.0.0.1 and hands each to serve.
func rawServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

func TestClassifyFailure(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	untrusted := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer untrusted.Close()
	hold := make(chan struct{})
	defer close(hold)
	silent := rawServer(t, func(c net.Conn) { <-hold; c.Close() })
	hangUp := rawServer(t, func(c net.Conn) {
		b := make([]byte, 1)
		c.Read(b)
		c.Close()
	})
	garbage := rawServer(t, func(c net.Conn) {
		c.Write([]byte("\x00\x01 this is not HTTP\r\n\r\n"))
		c.Close()
	})
	dns := fakeResolver(t, map[string][]string{"rebind.test": {"127.0.0.1"}, "hooks.test": {"127.0.0.1"}})
	_, plainPort, _ := net.SplitHostPort(strings.TrimPrefix(plain.URL, "http://"))

	open := Dialer{AllowPrivate: true, Resolver: dns}
	guarded := Dialer{Resolver: dns}
	for _, tc := range []struct {
		name string
		d    Dialer
		url  string
		want string
	}{
		{"closed port", open, "http://" + closedPort(t) + "/hook", FailureConnectionRefused},
		{"no answer", open, "http://" + silent + "/hook", FailureTimeout},
		{"untrusted certificate", open, untrusted.URL + "/hook", FailureTLS},
		{"plain HTTP spoken to over TLS", open, "https://" + strings.TrimPrefix(plain.URL, "http://") + "/hook", FailureTLS},
		{"unknown name", open, "http://missing.test:" + plainPort + "/hook", FailureDNS},
		{"loopback literal", guarded, plain.URL + "/hook", FailureRefusedAddress},
		{"rebound name", guarded, "http://rebind.test:" + plainPort + "/hook", FailureRefusedAddress},
		{"local name", guarded, "http://vm:" + plainPort + "/hook", FailureRefusedAddress},
		{"hang-up", open, "http://" + hangUp + "/hook", FailureConnection},
		{"not HTTP", open, "http://" + garbage + "/hook", FailureConnection},
	} {
		// Only the silent server must run out of time; every other case
		// fails on its own, however slow a loaded machine makes it.
		timeout := 10 * time.Second
		if tc.want == FailureTimeout {
			timeout = 500 * time.Millisecond
		}
		res, err := deliveryClient(tc.d, timeout).Post(tc.url, "application/json", strings.NewReader(`{}`))
		if err == nil {
			res.Body.Close()
			t.Errorf("%s: got HTTP %d, want a failure", tc.name, res.StatusCode)
			continue
		}
		if got := ClassifyFailure(err); got != tc.want {
			t.Errorf("%s: ClassifyFailure(%v) = %q, want %q", tc.name, err, got, tc.want)
		}
	}

	// The same with the errors alone.
	for _, tc := range []struct {
		err  error
		want string
	}{
		{context.DeadlineExceeded, FailureTimeout},
		{fmt.Errorf("post: %w", &net.DNSError{Err: "server misbehaving", Name: "x.test", Server: "10.0.0.2:53", IsTimeout: true}), FailureDNS},
		{&TLSError{Err: errors.New("tls: no cipher suite in common")}, FailureTLS},
		{&TLSError{Err: context.DeadlineExceeded}, FailureTimeout},
		{fmt.Errorf("dial: %w", &BlockedAddressError{Kind: kindPrivate}), FailureRefusedAddress},
		{errors.New("something else"), FailureConnection},
	} {
		if got := ClassifyFailure(tc.err); got != tc.want {
			t.Errorf("ClassifyFailure(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// DialTLSContext makes a handshake http.Transport can use, HTTP/2
// included.
func TestDialTLSContext(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	d := Dialer{AllowPrivate: true, TLSConfig: &tls.Config{RootCAs: roots}, HandshakeTimeout: 5 * time.Second}
	res, err := deliveryClient(d, 5*time.Second).Post(srv.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Proto != "HTTP/2.0" {
		t.Fatalf("got %d over %s", res.StatusCode, res.Proto)
	}
	// The guard applies to TLS connections too.
	_, err = deliveryClient(Dialer{TLSConfig: d.TLSConfig}, 5*time.Second).Post(srv.URL, "application/json", strings.NewReader(`{}`))
	var be *BlockedAddressError
	if !errors.As(err, &be) {
		t.Fatalf("guarded TLS dial: %v, want a *BlockedAddressError", err)
	}
}
