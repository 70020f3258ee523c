package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
)

// wireProxy sits between the service and PostgreSQL and reads what the
// service sends: every Sync and every simple Query is one round trip (the
// client then waits for the server), and Parse/Bind tell which statement
// ran with which parameters, for EXPLAIN.
type wireProxy struct {
	ln       net.Listener
	upstream string

	mu    sync.Mutex
	label string
	trips map[string]int
	stmts map[string]*stmtSeen // by label + "\x00" + normalised text
	order []string
}

// stmtSeen is one statement an operation sent, with the parameters of its
// first execution.
type stmtSeen struct {
	label  string
	query  string
	params []*string
	count  int
}

func newWireProxy(upstream string) (*wireProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &wireProxy{ln: ln, upstream: upstream, trips: map[string]int{}, stmts: map[string]*stmtSeen{}}
	go p.serve()
	return p, nil
}

func (p *wireProxy) addr() string { return p.ln.Addr().String() }
func (p *wireProxy) close()       { p.ln.Close() }

// setLabel attributes what follows to an operation ("" ignores it).
func (p *wireProxy) setLabel(l string) {
	p.mu.Lock()
	p.label = l
	p.mu.Unlock()
}

func (p *wireProxy) roundTrips(label string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.trips[label]
}

func (p *wireProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *wireProxy) handle(client net.Conn) {
	defer client.Close()
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { _, _ = io.Copy(client, up); client.Close() }()
	r := bufio.NewReader(client)
	// The startup message has no type byte.
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return
	}
	n := int(binary.BigEndian.Uint32(hdr[:]))
	rest := make([]byte, n-4)
	if _, err := io.ReadFull(r, rest); err != nil {
		return
	}
	if _, err := up.Write(append(hdr[:], rest...)); err != nil {
		return
	}
	named := map[string]string{}
	for {
		typ, err := r.ReadByte()
		if err != nil {
			return
		}
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(hdr[:]))
		body := make([]byte, n-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		p.observe(typ, body, named)
		msg := make([]byte, 0, 1+n)
		msg = append(append(append(msg, typ), hdr[:]...), body...)
		if _, err := up.Write(msg); err != nil {
			return
		}
	}
}

func cstring(b []byte) (string, []byte) {
	i := 0
	for i < len(b) && b[i] != 0 {
		i++
	}
	if i >= len(b) {
		return string(b), nil
	}
	return string(b[:i]), b[i+1:]
}

func (p *wireProxy) observe(typ byte, body []byte, named map[string]string) {
	switch typ {
	case 'P': // Parse: name, query
		name, rest := cstring(body)
		q, _ := cstring(rest)
		named[name] = q
	case 'B': // Bind: portal, statement, formats, parameters
		_, rest := cstring(body)
		stmt, rest := cstring(rest)
		params, err := bindParams(rest)
		if err == nil {
			p.record(named[stmt], params)
		}
	case 'Q': // simple query: one round trip
		q, _ := cstring(body)
		p.record(q, nil)
		p.trip()
	case 'S': // Sync: the client waits for the server
		p.trip()
	}
}

func bindParams(b []byte) ([]*string, error) {
	short := errors.New("short bind")
	if len(b) < 2 {
		return nil, short
	}
	nf := int(binary.BigEndian.Uint16(b))
	b = b[2+2*nf:]
	if len(b) < 2 {
		return nil, short
	}
	np := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	out := make([]*string, np)
	for i := 0; i < np; i++ {
		if len(b) < 4 {
			return nil, short
		}
		l := int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		if l < 0 {
			continue
		}
		if int(l) > len(b) {
			return nil, short
		}
		s := string(b[:l])
		out[i] = &s
		b = b[l:]
	}
	return out, nil
}

func (p *wireProxy) trip() {
	p.mu.Lock()
	if p.label != "" {
		p.trips[p.label]++
	}
	p.mu.Unlock()
}

func (p *wireProxy) record(q string, params []*string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.label == "" || q == "" {
		return
	}
	k := p.label + "\x00" + normalise(q)
	if s := p.stmts[k]; s != nil {
		s.count++
		return
	}
	p.stmts[k] = &stmtSeen{label: p.label, query: q, params: params, count: 1}
	p.order = append(p.order, k)
}

// normalise folds the statements that differ only in the length of an IN
// list or the rows of a bulk insert.
func normalise(q string) string {
	var b strings.Builder
	inNum := false
	for _, r := range q {
		if r >= '0' && r <= '9' {
			if !inNum {
				b.WriteByte('#')
			}
			inNum = true
			continue
		}
		inNum = false
		b.WriteRune(r)
	}
	return b.String()
}

// statements returns the statements seen, per label in first-seen order.
func (p *wireProxy) statements(label string) []*stmtSeen {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*stmtSeen
	for _, k := range p.order {
		if s := p.stmts[k]; s.label == label {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
