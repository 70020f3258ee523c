package hookwire

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxURLLength bounds an endpoint URL.
const MaxURLLength = 2048

// DefaultLookupTimeout bounds CheckURL's lookup of a host name when its
// Lookup names no bound, so saving an endpoint stays quick when the name
// servers do not answer.
const DefaultLookupTimeout = 2 * time.Second

// Lookup is how CheckURL looks a host name up: through Resolver (nil: the
// system's), giving up after Timeout (zero: DefaultLookupTimeout). Tests
// replace both.
type Lookup struct {
	Resolver *net.Resolver
	Timeout  time.Duration
}

// Address kinds the guard refuses, worded for merchants.
const (
	kindUnspecified = "an unspecified address"
	kindLoopback    = "a loopback address (the server itself)"
	kindPrivate     = "a private network address"
	kindLinkLocal   = "a link-local address"
	kindCGNAT       = "a carrier-grade NAT (shared) address"
	kindMulticast   = "a multicast address"
	kindReserved    = "a reserved address"
	kindLocalName   = "a name that only resolves inside a local network"
)

type blockedRange struct {
	prefix netip.Prefix
	kind   string
}

// blockedRanges are the IPv4 and IPv6 ranges that are not the public
// internet: the special-purpose address registries' entries that are not
// globally reachable, or serve a protocol rather than hosts. IPv4-mapped
// (::ffff:0:0/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses are
// judged by the IPv4 address inside them.
var blockedRanges = []blockedRange{
	{netip.MustParsePrefix("0.0.0.0/8"), kindUnspecified},
	{netip.MustParsePrefix("10.0.0.0/8"), kindPrivate},
	{netip.MustParsePrefix("100.64.0.0/10"), kindCGNAT},
	{netip.MustParsePrefix("127.0.0.0/8"), kindLoopback},
	{netip.MustParsePrefix("169.254.0.0/16"), kindLinkLocal},
	{netip.MustParsePrefix("172.16.0.0/12"), kindPrivate},
	{netip.MustParsePrefix("192.0.0.0/24"), kindReserved},
	{netip.MustParsePrefix("192.0.2.0/24"), kindReserved},
	{netip.MustParsePrefix("192.31.196.0/24"), kindReserved}, // AS112
	{netip.MustParsePrefix("192.52.193.0/24"), kindReserved}, // AMT
	{netip.MustParsePrefix("192.88.99.0/24"), kindReserved},  // 6to4 relay anycast, deprecated
	{netip.MustParsePrefix("192.168.0.0/16"), kindPrivate},
	{netip.MustParsePrefix("192.175.48.0/24"), kindReserved}, // AS112 direct delegation
	{netip.MustParsePrefix("198.18.0.0/15"), kindReserved},
	{netip.MustParsePrefix("198.51.100.0/24"), kindReserved},
	{netip.MustParsePrefix("203.0.113.0/24"), kindReserved},
	{netip.MustParsePrefix("224.0.0.0/4"), kindMulticast},
	{netip.MustParsePrefix("240.0.0.0/4"), kindReserved},

	{netip.MustParsePrefix("::/128"), kindUnspecified},
	{netip.MustParsePrefix("::1/128"), kindLoopback},
	{netip.MustParsePrefix("::/96"), kindReserved}, // IPv4-compatible, deprecated
	{netip.MustParsePrefix("64:ff9b:1::/48"), kindPrivate},
	{netip.MustParsePrefix("100::/64"), kindReserved},
	{netip.MustParsePrefix("2001::/23"), kindReserved}, // IETF protocol assignments, Teredo included
	{netip.MustParsePrefix("2001:db8::/32"), kindReserved},
	{netip.MustParsePrefix("2620:4f:8000::/48"), kindReserved}, // AS112 direct delegation
	{netip.MustParsePrefix("3fff::/20"), kindReserved},         // documentation
	{netip.MustParsePrefix("5f00::/16"), kindReserved},         // SRv6 segment identifiers
	{netip.MustParsePrefix("fc00::/7"), kindPrivate},
	{netip.MustParsePrefix("fe80::/10"), kindLinkLocal},
	{netip.MustParsePrefix("fec0::/10"), kindPrivate}, // site-local, deprecated
	{netip.MustParsePrefix("ff00::/8"), kindMulticast},
}

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// blockedKind says why addr is not a public internet address, or "" when
// it is one.
func blockedKind(addr netip.Addr) string {
	if !addr.IsValid() {
		return kindReserved
	}
	addr = addr.WithZone("").Unmap()
	if addr.Is6() {
		b := addr.As16()
		switch {
		case nat64Prefix.Contains(addr):
			return blockedKind(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(addr):
			return blockedKind(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	for _, r := range blockedRanges {
		if r.prefix.Contains(addr) {
			return r.kind
		}
	}
	return ""
}

// BlockedAddressError reports an address that is not on the public
// internet. Its message is written for merchants.
//
// A host name's message never names the address it resolved to: that
// address may be the only thing an internal name server tells the world,
// so it goes to the logs (Addr) and not into the message.
type BlockedAddressError struct {
	Host string     // the host name, or "" for an IP literal
	Addr netip.Addr // the refused address (zero for a name refused without a lookup)
	Kind string     // e.g. "a private network address"
}

func (e *BlockedAddressError) Error() string {
	switch {
	case e.Host != "" && e.Addr.IsValid():
		return fmt.Sprintf("%s resolves to %s", e.Host, e.Kind)
	case e.Host != "":
		return fmt.Sprintf("%s is %s", e.Host, e.Kind)
	default:
		return fmt.Sprintf("%s is %s", e.Addr, e.Kind)
	}
}

// URLError is CheckURL's refusal. Error returns only Reason, a sentence a
// merchant can act on and safe to show; Err keeps the cause for the logs
// (for example a *BlockedAddressError or a *net.DNSError).
type URLError struct {
	Reason string
	Err    error
}

func (e *URLError) Error() string { return e.Reason }
func (e *URLError) Unwrap() error { return e.Err }

func urlErr(cause error, format string, args ...any) *URLError {
	return &URLError{Reason: fmt.Sprintf(format, args...), Err: cause}
}

// CheckURL checks a webhook endpoint URL: it must parse, use http or https,
// name a host (and a port from 1 to 65535 if any), and carry no user name or
// password. Unless allowPrivate, the host must be on the public internet:
// an IP literal, or every address the host name resolves to through
// lookup, must not be loopback, private, link-local, CGNAT, unspecified,
// multicast or reserved, IPv4-mapped forms included; names that only
// resolve locally (see localNameKind) are refused without a lookup. A name
// that resolves to nothing (not found, a name server that answers with a
// failure or cannot be reached, or no answer within the lookup's bound) is
// taken: nothing it points at can be refused yet, and Dialer checks it
// again at each delivery.
//
// A refusal is a *URLError whose message is fit for the merchant; if ctx
// ends during the lookup, the ctx error is returned instead.
func CheckURL(ctx context.Context, raw string, allowPrivate bool, lookup Lookup) error {
	if raw == "" {
		return urlErr(nil, "URL is empty")
	}
	if len(raw) > MaxURLLength {
		return urlErr(nil, "URL is too long (at most %d characters)", MaxURLLength)
	}
	if strings.TrimSpace(raw) != raw {
		return urlErr(nil, "URL must not start or end with spaces")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return urlErr(err, "URL is not valid")
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" {
		return urlErr(nil, "URL must start with http:// or https://")
	}
	if u.User != nil {
		return urlErr(nil, "URL must not contain a user name or password")
	}
	host := strings.ToLower(u.Hostname())
	if u.Opaque != "" || host == "" {
		return urlErr(nil, "URL must include a host name, as in https://example.com/webhooks")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return urlErr(err, "URL port must be a number from 1 to 65535")
		}
	}

	if addr, err := netip.ParseAddr(host); err == nil {
		if allowPrivate {
			return nil
		}
		if kind := blockedKind(addr); kind != "" {
			return blocked(&BlockedAddressError{Addr: addr, Kind: kind})
		}
		return nil
	}

	host = strings.TrimSuffix(host, ".")
	if reason := hostNameProblem(host); reason != "" {
		return urlErr(nil, "URL host %s", reason)
	}
	if allowPrivate {
		return nil
	}
	if kind := localNameKind(host); kind != "" {
		return blocked(&BlockedAddressError{Host: host, Kind: kind})
	}

	resolver, timeout := lookup.Resolver, lookup.Timeout
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	if timeout <= 0 {
		timeout = DefaultLookupTimeout
	}
	lookupCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addrs, err := resolver.LookupNetIP(lookupCtx, "ip", host)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		// The name resolves to nothing now: no such host, no answer in
		// time, or a failing name server. There is no address to refuse,
		// and the merchant's URL is not wrong for that; Dialer checks the
		// addresses the name has at each delivery.
		return nil
	}
	for _, addr := range addrs {
		if kind := blockedKind(addr); kind != "" {
			return blocked(&BlockedAddressError{Host: host, Addr: addr, Kind: kind})
		}
	}
	return nil
}

func blocked(e *BlockedAddressError) *URLError {
	return urlErr(e, "URL must point to a public internet address, but %s", e.Error())
}

// localSuffixes are the top-level names that name hosts of a local network
// only: special-use names, and names long used privately that the public
// DNS will not delegate.
var localSuffixes = []string{
	"local", "internal", "home.arpa", "localdomain", "lan", "intranet", "corp", "home", "private",
}

// localNameKind says why the lower-case host name (no final dot, not an IP
// literal) can only resolve inside a local network, or "" when it may be a
// public name: localhost and *.localhost are loopback; a single label (a
// host of the resolver's search domains, such as "vm") and the names under
// localSuffixes are local names.
func localNameKind(host string) string {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return kindLoopback
	}
	if !strings.Contains(host, ".") {
		return kindLocalName
	}
	for _, sfx := range localSuffixes {
		if host == sfx || strings.HasSuffix(host, "."+sfx) {
			return kindLocalName
		}
	}
	return ""
}

// hostNameProblem checks a lower-case DNS name (not an IP literal) and
// says what is wrong with it, or "" when nothing is.
func hostNameProblem(host string) string {
	if len(host) > 253 {
		return "name is too long"
	}
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return fmt.Sprintf("%q is not a valid host name", host)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			case c >= 0x80:
				return fmt.Sprintf("%q must be written in its ASCII (xn--) form", host)
			default:
				return fmt.Sprintf("%q is not a valid host name", host)
			}
		}
	}
	// A name whose last label is a number is an IPv4 address in a
	// shorthand form (127.1, 2130706433, 0x7f.1) that resolvers read in
	// different ways; no real top-level domain is numeric.
	last := labels[len(labels)-1]
	if isNumericLabel(last) {
		return fmt.Sprintf("%q is not a valid host name; write an IP address as four numbers, like 203.0.113.7", host)
	}
	return ""
}

func isNumericLabel(l string) bool {
	if rest, ok := strings.CutPrefix(l, "0x"); ok {
		for i := 0; i < len(rest); i++ {
			c := rest[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}
