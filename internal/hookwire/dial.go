package hookwire

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

const (
	dialTimeout   = 10 * time.Second
	dialKeepAlive = 30 * time.Second
)

// Dialer opens the connections of webhook deliveries, for an
// http.Transport's DialContext and DialTLSContext. Unless AllowPrivate, it
// refuses what CheckURL refuses, at connect time: names that only resolve
// locally before any lookup, and every address just before connecting to
// it, after name resolution, so a name that resolved to a public address
// when the endpoint was saved and to a private one now (DNS rebinding) is
// refused too. A refusal wraps a *BlockedAddressError (use errors.As).
//
// Use it with Transport.Proxy nil: through a proxy the checked address
// would be the proxy's. Redirects should not be followed either.
type Dialer struct {
	AllowPrivate bool
	// Resolver looks host names up (nil: the system's); tests replace it.
	Resolver *net.Resolver
	// TLSConfig is cloned for each TLS connection (nil: the defaults);
	// ServerName and NextProtos are filled in when empty.
	TLSConfig *tls.Config
	// HandshakeTimeout bounds a TLS handshake (0: only ctx bounds it).
	HandshakeTimeout time.Duration
}

// SafeDialContext is Dialer{AllowPrivate: allowPrivate}.DialContext.
func SafeDialContext(allowPrivate bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return Dialer{AllowPrivate: allowPrivate}.DialContext
}

// DialContext connects to addr (host:port), refusing non-public hosts
// unless AllowPrivate.
func (d Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	base := net.Dialer{Timeout: dialTimeout, KeepAlive: dialKeepAlive, Resolver: d.Resolver}
	if d.AllowPrivate {
		return base.DialContext(ctx, network, addr)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if _, err := netip.ParseAddr(host); err == nil {
		host = "" // an IP literal: the message names the address only
	} else {
		host = strings.TrimSuffix(strings.ToLower(host), ".")
		if kind := localNameKind(host); kind != "" {
			return nil, fmt.Errorf("webhook delivery refused: %w", &BlockedAddressError{Host: host, Kind: kind})
		}
	}
	base.ControlContext = func(_ context.Context, _, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("webhook delivery refused: cannot check address %q: %w", address, err)
		}
		if kind := blockedKind(ap.Addr()); kind != "" {
			return fmt.Errorf("webhook delivery refused: %w", &BlockedAddressError{Host: host, Addr: ap.Addr(), Kind: kind})
		}
		return nil
	}
	return base.DialContext(ctx, network, addr)
}

// TLSError is a failed TLS handshake with the receiver (a certificate it
// does not trust, no protocol in common, not TLS at all, ...).
type TLSError struct{ Err error }

func (e *TLSError) Error() string { return "TLS handshake: " + e.Err.Error() }
func (e *TLSError) Unwrap() error { return e.Err }

// DialTLSContext connects as DialContext does, then makes the TLS
// handshake, offering HTTP/2 and HTTP/1.1. A failed handshake is a
// *TLSError, so it can be told apart from a failed connection.
func (d Dialer) DialTLSContext(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		conn.Close()
		return nil, err
	}
	cfg := &tls.Config{}
	if d.TLSConfig != nil {
		cfg = d.TLSConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = strings.TrimSuffix(host, ".")
	}
	if len(cfg.NextProtos) == 0 {
		cfg.NextProtos = []string{"h2", "http/1.1"}
	}
	if d.HandshakeTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.HandshakeTimeout)
		defer cancel()
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, &TLSError{Err: err}
	}
	return tc, nil
}
