// Package fakedns is an in-process DNS server for tests: a *net.Resolver
// whose A and AAAA answers come from a table the test controls, and may
// change between lookups (to play DNS rebinding). Nothing touches real DNS.
package fakedns

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
)

// Table holds the records; the zero value is not usable, call New.
type Table struct {
	mu      sync.Mutex
	records map[string][]netip.Addr
}

// New returns a table holding records: a name (without the final dot) and
// its addresses. A name mapped to no address exists but has no records;
// names not in the table get NXDOMAIN.
func New(records map[string][]string) *Table {
	t := &Table{records: map[string][]netip.Addr{}}
	for name, addrs := range records {
		t.Set(name, addrs...)
	}
	return t
}

// Set replaces name's addresses (see New); later lookups see them.
func (t *Table) Set(name string, addrs ...string) {
	parsed := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		parsed[i] = netip.MustParseAddr(a)
	}
	t.mu.Lock()
	t.records[strings.ToLower(name)] = parsed
	t.mu.Unlock()
}

func (t *Table) lookup(name string) ([]netip.Addr, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	addrs, ok := t.records[strings.ToLower(name)]
	return addrs, ok
}

// Resolver returns a resolver that asks the table. Lookups go through Go's
// own resolver, over a net.Pipe speaking DNS with TCP framing (two-byte
// length, then the message).
func (t *Table) Resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			client, server := net.Pipe()
			go t.serve(server)
			return client, nil
		},
	}
}

func (t *Table) serve(c net.Conn) {
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
		resp := t.answer(q)
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
	typeA    = 1
	typeAAAA = 28
)

// answer builds the response to the query q, or nil when q cannot be read.
func (t *Table) answer(q []byte) []byte {
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

	addrs, known := t.lookup(strings.Join(labels, "."))
	var answers [][]byte
	for _, a := range addrs {
		switch {
		case qtype == typeA && a.Is4():
			b := a.As4()
			answers = append(answers, b[:])
		case qtype == typeAAAA && a.Is6():
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
