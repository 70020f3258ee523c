package webhook

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// fakeResolver answers A and AAAA queries from records, in process, so the
// tests never touch real DNS. Names not in records get NXDOMAIN. Lookups
// go through Go's own resolver, over a net.Pipe speaking DNS over TCP
// framing (two-byte length, then the message).
func fakeResolver(t *testing.T, records map[string][]string) *net.Resolver {
	t.Helper()
	table := make(map[string][]netip.Addr, len(records))
	for name, addrs := range records {
		for _, a := range addrs {
			table[strings.ToLower(name)] = append(table[strings.ToLower(name)], netip.MustParseAddr(a))
		}
	}
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			client, server := net.Pipe()
			go serveFakeDNS(server, table)
			return client, nil
		},
	}
}

// blockingResolver never answers; lookups end only with their context.
func blockingResolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
}

// failingResolver fails the test if it is ever asked anything.
func failingResolver(t *testing.T) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			t.Errorf("unexpected DNS lookup (dial %s %s)", network, address)
			return nil, &net.DNSError{Err: "unexpected lookup", IsNotFound: true}
		},
	}
}

func serveFakeDNS(c net.Conn, table map[string][]netip.Addr) {
	defer c.Close()
	for {
		var n [2]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(n[:]))
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		resp := fakeDNSAnswer(q, table)
		if resp == nil {
			return
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
		if _, err := c.Write(append(out, resp...)); err != nil {
			return
		}
	}
}

const (
	dnsTypeA    = 1
	dnsTypeAAAA = 28
)

func fakeDNSAnswer(q []byte, table map[string][]netip.Addr) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil
	}
	// Read the question's name, then its type and class.
	var labels []string
	i := 12
	for {
		if i >= len(q) {
			return nil
		}
		l := int(q[i])
		i++
		if l == 0 {
			break
		}
		if l > 63 || i+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i:i+l]))
		i += l
	}
	if i+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i : i+2])
	question := q[12 : i+4]
	name := strings.ToLower(strings.Join(labels, "."))

	addrs, known := table[name]
	var answers [][]byte
	for _, a := range addrs {
		switch {
		case qtype == dnsTypeA && a.Is4():
			b := a.As4()
			answers = append(answers, b[:])
		case qtype == dnsTypeAAAA && a.Is6():
			b := a.As16()
			answers = append(answers, b[:])
		}
	}

	resp := append([]byte(nil), q[0:2]...) // id
	flags := uint16(0x8180)                // response, recursion desired and available
	if !known {
		flags |= 3 // NXDOMAIN
	}
	resp = binary.BigEndian.AppendUint16(resp, flags)
	resp = binary.BigEndian.AppendUint16(resp, 1)
	resp = binary.BigEndian.AppendUint16(resp, uint16(len(answers)))
	resp = binary.BigEndian.AppendUint16(resp, 0)
	resp = binary.BigEndian.AppendUint16(resp, 0)
	resp = append(resp, question...)
	for _, rdata := range answers {
		resp = append(resp, 0xC0, 0x0C) // pointer to the question's name
		resp = binary.BigEndian.AppendUint16(resp, qtype)
		resp = binary.BigEndian.AppendUint16(resp, 1) // class IN
		resp = binary.BigEndian.AppendUint32(resp, 60)
		resp = binary.BigEndian.AppendUint16(resp, uint16(len(rdata)))
		resp = append(resp, rdata...)
	}
	return resp
}

func TestFakeResolver(t *testing.T) {
	r := fakeResolver(t, map[string][]string{"both.test": {"93.184.216.34", "2606:2800:220:1::1"}})
	got, err := r.LookupNetIP(context.Background(), "ip", "both.test")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %v, want two addresses", got)
	}
	_, err = r.LookupNetIP(context.Background(), "ip", "missing.test")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("missing name: got %v, want a not-found DNSError", err)
	}
}
