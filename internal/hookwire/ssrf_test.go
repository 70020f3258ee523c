package hookwire

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestBlockedKind(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		// Public.
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"93.184.216.34", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"172.15.255.255", ""},
		{"172.32.0.0", ""},
		{"169.253.255.255", ""},
		{"223.255.255.255", ""},
		{"2606:4700:4700::1111", ""},
		{"2001:4860:4860::8888", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""}, // NAT64 of 8.8.8.8
		{"2002:808:808::1", ""},  // 6to4 of 8.8.8.8
		// Unspecified.
		{"0.0.0.0", kindUnspecified},
		{"0.1.2.3", kindUnspecified},
		{"::", kindUnspecified},
		// Loopback.
		{"127.0.0.1", kindLoopback},
		{"127.255.255.254", kindLoopback},
		{"::1", kindLoopback},
		{"::ffff:127.0.0.1", kindLoopback},
		{"64:ff9b::7f00:1", kindLoopback},
		{"2002:7f00:1::", kindLoopback},
		// Private (RFC 1918, RFC 4193).
		{"10.0.0.1", kindPrivate},
		{"10.255.255.255", kindPrivate},
		{"172.16.0.1", kindPrivate},
		{"172.31.255.255", kindPrivate},
		{"192.168.1.1", kindPrivate},
		{"::ffff:10.1.2.3", kindPrivate},
		{"::ffff:192.168.0.1", kindPrivate},
		{"fc00::1", kindPrivate},
		{"fd12:3456:789a::1", kindPrivate},
		{"fec0::1", kindPrivate},
		{"64:ff9b:1::a00:1", kindPrivate},
		// Link-local, cloud metadata included.
		{"169.254.169.254", kindLinkLocal},
		{"169.254.0.1", kindLinkLocal},
		{"::ffff:169.254.169.254", kindLinkLocal},
		{"fe80::1", kindLinkLocal},
		{"fe80::1%eth0", kindLinkLocal},
		{"febf::1", kindLinkLocal},
		// CGNAT.
		{"100.64.0.1", kindCGNAT},
		{"100.127.255.255", kindCGNAT},
		{"::ffff:100.64.0.1", kindCGNAT},
		// Multicast.
		{"224.0.0.1", kindMulticast},
		{"239.255.255.250", kindMulticast},
		{"ff02::1", kindMulticast},
		{"ff05::1:3", kindMulticast},
		// Reserved.
		{"255.255.255.255", kindReserved},
		{"240.0.0.1", kindReserved},
		{"192.0.2.1", kindReserved},
		{"198.18.0.1", kindReserved},
		{"203.0.113.7", kindReserved},
		{"2001:db8::1", kindReserved},
		{"::127.0.0.1", kindReserved},
		{"100::1", kindReserved},
		// Special-purpose ranges that are not globally reachable.
		{"192.88.99.1", kindReserved},
		{"192.31.196.1", kindReserved},
		{"192.52.193.1", kindReserved},
		{"192.175.48.1", kindReserved},
		{"::ffff:192.175.48.6", kindReserved},
		{"2001::1", kindReserved},     // Teredo
		{"2001:1ff::1", kindReserved}, // the end of 2001::/23
		{"2001:200::1", ""},           // just past it: public
		{"3fff::1", kindReserved},     // documentation
		{"3fff:fff:ffff::1", kindReserved},
		{"3fff:1000::1", ""},
		{"2620:4f:8000::1", kindReserved},
		{"2620:4f:8001::1", ""},
		{"5f00::1", kindReserved},
		{"5f01::1", ""},
		{"192.88.98.255", ""},
		{"192.175.49.0", ""},
	} {
		got := blockedKind(netip.MustParseAddr(tc.addr))
		if got != tc.want {
			t.Errorf("blockedKind(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
	if blockedKind(netip.Addr{}) == "" {
		t.Error("the zero Addr counts as public")
	}
}

func TestCheckURLShape(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ url, msg string }{
		{"", "URL is empty"},
		{"https://" + strings.Repeat("a", MaxURLLength), "too long"},
		{" https://example.com", "spaces"},
		{"https://example.com/ ", "spaces"},
		{"://missing-scheme", "not valid"},
		{"http://[::1", "not valid"},
		{"http://exa mple.com/", "not valid"},
		{"example.com/hook", "http:// or https://"},
		{"//example.com/hook", "http:// or https://"},
		{"ftp://example.com/hook", "http:// or https://"},
		{"javascript:alert(1)", "http:// or https://"},
		{"file:///etc/passwd", "http:// or https://"},
		{"gopher://8.8.8.8/", "http:// or https://"},
		{"ws://example.com/", "http:// or https://"},
		{"http:example.com", "host name"},
		{"http:///path", "host name"},
		{"https://", "host name"},
		{"https://:443/", "host name"},
		{"https://user@example.com/", "user name or password"},
		{"https://user:pass@example.com/", "user name or password"},
		{"https://:pass@8.8.8.8/", "user name or password"},
		{"https://example.com:0/", "port must be a number from 1 to 65535"},
		{"https://example.com:65536/", "port must be a number from 1 to 65535"},
		{"https://example.com:99999999999999999999/", "port must be a number from 1 to 65535"},
		{"https://example..com/", "not a valid host name"},
		{"https://-_-.com!/", "not a valid host name"},
		{"https://bücher.example/", "ASCII (xn--) form"},
		{"https://" + strings.Repeat("a", 64) + ".com/", "not a valid host name"},
		{"https://" + strings.Repeat("a.", 130) + "com/", "too long"},
		{"http://2130706433/", "four numbers"},
		{"http://0x7f000001/", "four numbers"},
		{"http://127.1/", "four numbers"},
		{"http://0x7f.0.0.1/", "four numbers"},
		{"http://127.0.0.1./", "four numbers"},
		{"http://017700000001/", "four numbers"},
	} {
		for _, allowPrivate := range []bool{false, true} {
			err := CheckURL(ctx, tc.url, allowPrivate, Lookup{Resolver: failingResolver(t)})
			var ue *URLError
			if !errors.As(err, &ue) {
				t.Errorf("CheckURL(%q, allowPrivate=%v) = %v, want a *URLError", tc.url, allowPrivate, err)
				continue
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("CheckURL(%q, allowPrivate=%v) = %q, want it to mention %q", tc.url, allowPrivate, err, tc.msg)
			}
		}
	}
}

func TestCheckURLLiteralIPs(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ url, msg string }{
		// Public: allowed.
		{"https://8.8.8.8/hook", ""},
		{"http://1.1.1.1:8080/hook?x=1#frag", ""},
		{"HTTPS://8.8.4.4/", ""},
		{"https://[2606:4700:4700::1111]/hook", ""},
		{"https://[2606:4700:4700::1111]:8443/hook", ""},
		{"https://[::ffff:8.8.8.8]/", ""},
		// Refused unless allowPrivate.
		{"http://127.0.0.1/hook", "127.0.0.1 is a loopback address"},
		{"http://127.0.0.1:8080/hook", "loopback"},
		{"http://[::1]:8080/", "::1 is a loopback address"},
		{"http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1 is a loopback address"},
		{"http://[::ffff:7f00:1]/", "loopback"},
		{"http://[0:0:0:0:0:ffff:7f00:1]/", "loopback"},
		{"http://0.0.0.0:80/", "unspecified"},
		{"http://[::]/", "unspecified"},
		{"https://10.1.2.3/", "10.1.2.3 is a private network address"},
		{"https://172.16.5.4/", "private network"},
		{"https://192.168.0.10/", "private network"},
		{"https://[fd00::1]/", "private network"},
		{"https://[::ffff:192.168.0.10]/", "private network"},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"},
		{"http://[fe80::1]/", "link-local"},
		{"http://[fe80::1%25eth0]/", "link-local"},
		{"https://100.64.0.1/", "carrier-grade NAT"},
		{"https://224.0.0.1/", "multicast"},
		{"https://[ff02::1]/", "multicast"},
		{"https://255.255.255.255/", "reserved"},
	} {
		err := CheckURL(ctx, tc.url, false, Lookup{Resolver: failingResolver(t)})
		if tc.msg == "" {
			if err != nil {
				t.Errorf("CheckURL(%q) = %v, want nil", tc.url, err)
			}
			continue
		}
		var be *BlockedAddressError
		if !errors.As(err, &be) {
			t.Errorf("CheckURL(%q) = %v, want a *BlockedAddressError inside", tc.url, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), "URL must point to a public internet address, but ") || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("CheckURL(%q) = %q, want it to mention %q", tc.url, err, tc.msg)
		}
		if err := CheckURL(ctx, tc.url, true, Lookup{Resolver: failingResolver(t)}); err != nil {
			t.Errorf("CheckURL(%q, allowPrivate) = %v, want nil", tc.url, err)
		}
	}
}

func TestCheckURLLocalhost(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{
		"http://localhost/", "http://localhost:3000/hook", "http://LOCALHOST/",
		"http://localhost./", "http://api.localhost/", "https://a.b.localhost:8443/",
	} {
		err := CheckURL(ctx, u, false, Lookup{Resolver: failingResolver(t)})
		var be *BlockedAddressError
		if !errors.As(err, &be) || be.Kind != kindLoopback {
			t.Errorf("CheckURL(%q) = %v, want a loopback refusal", u, err)
			continue
		}
		if !strings.Contains(err.Error(), "localhost is a loopback address") {
			t.Errorf("CheckURL(%q) = %q", u, err)
		}
		if err := CheckURL(ctx, u, true, Lookup{Resolver: failingResolver(t)}); err != nil {
			t.Errorf("CheckURL(%q, allowPrivate) = %v, want nil", u, err)
		}
	}
	// With the system resolver too (localhost comes from /etc/hosts or the
	// name rule, never from the network).
	if err := CheckURL(ctx, "http://localhost:8080/", false, Lookup{Resolver: nil}); err == nil {
		t.Error("CheckURL(localhost, nil resolver) = nil")
	}
}

func TestCheckURLResolvedNames(t *testing.T) {
	ctx := context.Background()
	r := fakeResolver(t, map[string][]string{
		"public.test":       {"93.184.216.34"},
		"public6.test":      {"2606:2800:220:1:248:1893:25c8:1946"},
		"dual.test":         {"93.184.216.34", "2606:2800:220:1::1"},
		"internal.test":     {"10.0.0.5"},
		"mixed.test":        {"93.184.216.34", "8.8.8.8", "192.168.1.20"},
		"mixed6.test":       {"93.184.216.34", "fd00::5"},
		"loop.test":         {"127.0.0.2"},
		"mapped.test":       {"::ffff:127.0.0.1"},
		"metadata.test":     {"169.254.169.254"},
		"cgnat.test":        {"100.100.100.100"},
		"nodata.test":       {},
		"UpperCase.Test":    {"8.8.8.8"},
		"hooks.public.test": {"1.1.1.1"},
	})
	for _, tc := range []struct{ url, msg string }{
		{"https://public.test/hook", ""},
		{"https://public6.test/hook", ""},
		{"https://dual.test/hook", ""},
		{"https://uppercase.TEST/hook", ""},
		{"https://hooks.public.test./hook", ""},
		{"https://internal.test/hook", "internal.test resolves to a private network address"},
		{"https://mixed.test/hook", "mixed.test resolves to a private network address"},
		{"https://mixed6.test/hook", "mixed6.test resolves to a private network address"},
		{"https://loop.test/hook", "loop.test resolves to a loopback address"},
		{"https://mapped.test/hook", "loopback"},
		{"https://metadata.test/hook", "link-local"},
		{"https://cgnat.test/hook", "carrier-grade NAT"},
		// Names that resolve to nothing are taken: the dialer checks them
		// again at delivery (TestCheckURLLookupErrors).
		{"https://missing.test/hook", ""},
		{"https://nodata.test/hook", ""},
	} {
		err := CheckURL(ctx, tc.url, false, Lookup{Resolver: r})
		switch {
		case tc.msg == "" && err != nil:
			t.Errorf("CheckURL(%q) = %v, want nil", tc.url, err)
		case tc.msg != "" && (err == nil || !strings.Contains(err.Error(), tc.msg)):
			t.Errorf("CheckURL(%q) = %v, want it to mention %q", tc.url, err, tc.msg)
		}
		// What an internal name resolves to is never told.
		for _, addr := range []string{"10.0.0.5", "192.168.1.20", "fd00::5", "127.0.0.2", "127.0.0.1", "169.254", "100.100"} {
			if err != nil && strings.Contains(err.Error(), addr) {
				t.Errorf("CheckURL(%q) = %q names the resolved address", tc.url, err)
			}
		}
		// With allowPrivate nothing is looked up.
		if err := CheckURL(ctx, tc.url, true, Lookup{Resolver: failingResolver(t)}); err != nil {
			t.Errorf("CheckURL(%q, allowPrivate) = %v, want nil", tc.url, err)
		}
	}
}

func TestCheckURLLookupErrors(t *testing.T) {
	// The caller's context ends during the lookup: its error comes back,
	// not a refusal that would blame the merchant's URL.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := CheckURL(ctx, "https://slow.test/", false, Lookup{Resolver: blockingResolver()})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
	var ue *URLError
	if errors.As(err, &ue) {
		t.Fatalf("got a *URLError: %v", err)
	}

	// Name servers that never answer: the lookup gives up after its
	// bound (here far below the default) and the URL is taken, since it
	// points nowhere yet.
	start := time.Now()
	if err := CheckURL(context.Background(), "https://slow.test/", false, Lookup{Resolver: blockingResolver(), Timeout: 50 * time.Millisecond}); err != nil {
		t.Errorf("hanging name servers: got %v, want nil", err)
	}
	if d := time.Since(start); d >= DefaultLookupTimeout/2 {
		t.Errorf("the lookup took %v: its 50ms bound was not used", d)
	}

	// A failing name server: taken too.
	broken := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("connection refused")
	}}
	if err := CheckURL(context.Background(), "https://down.test/", false, Lookup{Resolver: broken}); err != nil {
		t.Errorf("failing name server: got %v, want nil", err)
	}

	// What resolves to nothing is still refused when its form is wrong or
	// it is a local name, before any lookup.
	for _, u := range []string{"https://a..b.test/", "https://hooks.test.7/", "https://bad host.test/", "https://localhost/", "https://vm/", "https://db.internal/"} {
		if err := CheckURL(context.Background(), u, false, Lookup{Resolver: failingResolver(t)}); !errors.As(err, &ue) {
			t.Errorf("CheckURL(%q) = %v, want a refusal", u, err)
		}
	}
}

// listen starts a TCP server on 127.0.0.1 that answers "ok" to every
// connection and counts them.
func listen(t *testing.T) (addr string, accepted chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Write([]byte("ok"))
			c.Close()
		}
	}()
	return ln.Addr().String(), accepted
}

func TestSafeDialContext(t *testing.T) {
	addr, accepted := listen(t)
	_, port, _ := net.SplitHostPort(addr)
	ctx := context.Background()

	for _, target := range []string{addr, "localhost:" + port, "[::ffff:127.0.0.1]:" + port} {
		c, err := SafeDialContext(false)(ctx, "tcp", target)
		if err == nil {
			c.Close()
			t.Errorf("dial %s: connected, want a refusal", target)
			continue
		}
		var be *BlockedAddressError
		if !errors.As(err, &be) || be.Kind != kindLoopback {
			t.Errorf("dial %s: %v, want a loopback *BlockedAddressError", target, err)
		}
		if !strings.Contains(err.Error(), "webhook delivery refused") {
			t.Errorf("dial %s: %q", target, err)
		}
		if strings.HasPrefix(target, "localhost") && be != nil && be.Host != "localhost" {
			t.Errorf("dial %s: Host = %q, want localhost", target, be.Host)
		}
	}
	select {
	case <-accepted:
		t.Fatal("a refused dial reached the server")
	case <-time.After(50 * time.Millisecond):
	}

	c, err := SafeDialContext(true)(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("allowPrivate: %v", err)
	}
	defer c.Close()
	if b, _ := io.ReadAll(c); string(b) != "ok" {
		t.Fatalf("read %q", b)
	}
}

// DNS rebinding: the name was public when the endpoint was saved, and
// points at the server itself at delivery time.
func TestSafeDialContextRebinding(t *testing.T) {
	addr, accepted := listen(t)
	_, port, _ := net.SplitHostPort(addr)
	ctx := context.Background()

	atSave := fakeResolver(t, map[string][]string{"rebind.test": {"93.184.216.34"}})
	if err := CheckURL(ctx, "http://rebind.test:"+port+"/hook", false, Lookup{Resolver: atSave}); err != nil {
		t.Fatalf("CheckURL at save time: %v", err)
	}

	atDelivery := fakeResolver(t, map[string][]string{"rebind.test": {"127.0.0.1"}})
	_, err := Dialer{Resolver: atDelivery}.DialContext(ctx, "tcp", "rebind.test:"+port)
	var be *BlockedAddressError
	if !errors.As(err, &be) {
		t.Fatalf("dial: %v, want a *BlockedAddressError", err)
	}
	if be.Host != "rebind.test" || be.Addr != netip.MustParseAddr("127.0.0.1") || be.Kind != kindLoopback {
		t.Errorf("got %+v", be)
	}
	// The dialer's own error names the address (it is for the logs); the
	// guard's message does not.
	if msg := be.Error(); msg != "rebind.test resolves to a loopback address (the server itself)" {
		t.Errorf("message %q", msg)
	}
	select {
	case <-accepted:
		t.Fatal("the rebound dial reached the server")
	case <-time.After(50 * time.Millisecond):
	}

	// The same resolver with allowPrivate really does reach the server, so
	// the refusal above came from the guard and not from the fake DNS.
	c, err := Dialer{AllowPrivate: true, Resolver: atDelivery}.DialContext(ctx, "tcp", "rebind.test:"+port)
	if err != nil {
		t.Fatalf("allowPrivate dial: %v", err)
	}
	c.Close()
}

func TestSafeDialContextInTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	client := func(allowPrivate bool) *http.Client {
		return &http.Client{
			Timeout:   5 * time.Second,
			Transport: &http.Transport{Proxy: nil, DialContext: SafeDialContext(allowPrivate)},
		}
	}
	resp, err := client(false).Post(srv.URL, "application/json", strings.NewReader(`{}`))
	if err == nil {
		resp.Body.Close()
		t.Fatal("delivery to 127.0.0.1 went through")
	}
	var be *BlockedAddressError
	if !errors.As(err, &be) {
		t.Fatalf("got %v, want a *BlockedAddressError", err)
	}

	resp, err = client(true).Post(srv.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatalf("allowPrivate: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// Names that only resolve inside a local network are refused without a
// lookup, at save time and at connect time, unless allowPrivate.
func TestLocalNames(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{
		"http://vm/", "http://vm:8080/x", "http://VM./", "https://db/hook",
		"http://printer.local/", "https://api.internal/hook", "http://metadata.google.internal/",
		"http://nas.home.arpa/", "http://router.lan/", "http://wiki.intranet/", "http://ad.corp/",
		"http://box.home/", "http://x.private/", "http://localhost.localdomain/",
	} {
		err := CheckURL(ctx, u, false, Lookup{Resolver: failingResolver(t)})
		var be *BlockedAddressError
		if !errors.As(err, &be) || be.Kind != kindLocalName {
			t.Errorf("CheckURL(%q) = %v, want a local-name refusal", u, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), "URL must point to a public internet address, but ") {
			t.Errorf("CheckURL(%q) = %q", u, err)
		}
		if err := CheckURL(ctx, u, true, Lookup{Resolver: failingResolver(t)}); err != nil {
			t.Errorf("CheckURL(%q, allowPrivate) = %v, want nil", u, err)
		}
	}
	// Public names that merely contain those words are not local.
	r := fakeResolver(t, map[string][]string{
		"local.example.com": {"93.184.216.34"}, "internal.example.org": {"93.184.216.34"},
		"lan.example.net": {"93.184.216.34"}, "mylocal.test": {"93.184.216.34"},
	})
	for _, u := range []string{"https://local.example.com/", "https://internal.example.org/", "https://lan.example.net/", "https://mylocal.test/"} {
		if err := CheckURL(ctx, u, false, Lookup{Resolver: r}); err != nil {
			t.Errorf("CheckURL(%q) = %v, want nil", u, err)
		}
	}

	// At connect time, the name is refused before it is looked up (the
	// resolver's search domains would otherwise complete it).
	addr, accepted := listen(t)
	_, port, _ := net.SplitHostPort(addr)
	for _, host := range []string{"vm", "vm.", "api.internal", "printer.local"} {
		_, err := Dialer{Resolver: failingResolver(t)}.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
		var be *BlockedAddressError
		if !errors.As(err, &be) || be.Kind != kindLocalName {
			t.Errorf("dial %s: %v, want a local-name refusal", host, err)
		}
	}
	select {
	case <-accepted:
		t.Fatal("a refused dial reached the server")
	case <-time.After(50 * time.Millisecond):
	}
}
