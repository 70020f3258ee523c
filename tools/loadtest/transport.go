package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// leanTransport is the load generator's HTTP/1.1 client under vegeta: one
// keep-alive connection per worker, the request written and the answer read
// by the worker's own goroutine. net/http's Transport hands every request
// to a writer goroutine and every answer back from a reader goroutine, and
// arms a cancellation timer per request; on a 2-core machine shared with
// the service and PostgreSQL that machinery was most of the load
// generator's CPU per GET (pgbench's client, which the ratios are against,
// costs a few microseconds). It speaks only what the harness sends: plain
// HTTP/1.1 to one host, bodies of known length, no redirects, no proxies.
type leanTransport struct {
	idle    chan *leanConn
	timeout time.Duration
	dialer  net.Dialer
}

type leanConn struct {
	c  net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

func newLeanTransport(conns int, timeout time.Duration) *leanTransport {
	return &leanTransport{idle: make(chan *leanConn, conns), timeout: timeout}
}

func (t *leanTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" {
		return nil, fmt.Errorf("lean transport: %s is not plain http", req.URL)
	}
	var lc *leanConn
	select {
	case lc = <-t.idle:
	default:
		c, err := t.dialer.DialContext(req.Context(), "tcp", req.URL.Host)
		if err != nil {
			return nil, err
		}
		lc = &leanConn{c: c, br: bufio.NewReaderSize(c, 8<<10), bw: bufio.NewWriterSize(c, 4<<10)}
	}
	if err := lc.c.SetDeadline(time.Now().Add(t.timeout)); err != nil {
		lc.c.Close()
		return nil, err
	}
	if err := writeRequest(lc.bw, req); err != nil {
		lc.c.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(lc.br, req)
	if err != nil {
		lc.c.Close()
		return nil, err
	}
	resp.Body = &leanBody{ReadCloser: resp.Body, t: t, lc: lc, reuse: !resp.Close}
	return resp, nil
}

// writeRequest writes req as HTTP/1.1 with its body, which must have a
// known length (the harness's bodies are byte slices).
func writeRequest(w *bufio.Writer, req *http.Request) error {
	if req.Body != nil && req.ContentLength < 0 {
		return errors.New("lean transport: request body of unknown length")
	}
	w.WriteString(req.Method)
	w.WriteByte(' ')
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(req.URL.Host)
	w.WriteString("\r\n")
	for k, vs := range req.Header {
		for _, v := range vs {
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	if req.Body != nil {
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.FormatInt(req.ContentLength, 10))
		w.WriteString("\r\n\r\n")
		n, err := io.Copy(w, req.Body)
		req.Body.Close()
		if err != nil {
			return err
		}
		if n != req.ContentLength {
			return fmt.Errorf("lean transport: body of %d bytes, %d announced", n, req.ContentLength)
		}
	} else {
		w.WriteString("\r\n")
	}
	return w.Flush()
}

// leanBody gives the connection back once the answer is read to its end.
type leanBody struct {
	io.ReadCloser
	t     *leanTransport
	lc    *leanConn
	reuse bool
	done  bool
}

func (b *leanBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	err := b.ReadCloser.Close() // reads what is left of the body
	if err != nil || !b.reuse {
		b.lc.c.Close()
		return err
	}
	select {
	case b.t.idle <- b.lc:
	default:
		b.lc.c.Close()
	}
	return nil
}

// closeIdle closes the connections no request holds.
func (t *leanTransport) closeIdle() {
	for {
		select {
		case lc := <-t.idle:
			lc.c.Close()
		default:
			return
		}
	}
}
