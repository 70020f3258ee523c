// Package paystackfake is a stand-in for Paystack's API on 127.0.0.1, built
// from Paystack's public facts, for tests of the adapter and of the service
// end to end. It serves the paths the adapter uses (name enquiry,
// recipients, transfers and their look-up, customers, dedicated accounts),
// checks the Bearer key and every JSON field it reads (types, integer
// amounts in kobo, the transfer-reference rules, that the recipient
// exists), answers in Paystack's envelope with its error shape and
// RCP_/TRF_/CUS_ codes, and records every request.
//
// Tests steer it: AddAccount makes an account resolvable, FailNext makes the
// next matching call time out, fail with a 5xx, reset or answer garbage
// (optionally after doing the work), Settle/Fail/Reverse move a transfer,
// and SendTransferEvent / SendInflow deliver webhooks signed with the key.
//
// Behaviour Paystack does not document is chosen and said where it is: a
// reused transfer reference is refused with 400 duplicate_reference, and a
// second dedicated account for a customer at the same bank is refused.
package paystackfake

import (
	"bytes"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"merchantpay/internal/banks"
)

// Fault is what FailNext does to a call instead of answering it.
type Fault int

const (
	// Timeout holds the call without answering until the client gives up.
	Timeout Fault = iota + 1
	// ServerError answers 500 with Paystack's error envelope.
	ServerError
	// Reset closes the connection without answering.
	Reset
	// Garbage answers 200 with a body that is not JSON.
	Garbage
	// RateLimited answers 429 with Paystack's rate_limited error.
	RateLimited
)

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
}

type fault struct {
	method, path string
	kind         Fault
	processed    bool
}

// Fake is a running fake Paystack. Its methods are safe for concurrent use.
type Fake struct {
	key     string
	srv     *httptest.Server
	dir     *banks.Directory
	closing chan struct{}
	once    sync.Once

	mu         sync.Mutex
	requests   []Request
	faults     []fault
	accounts   map[string]string // bank code + "/" + account number → holder's name
	recipients map[string]*recipient
	transfers  map[string]*transfer // by reference
	customers  map[string]*customer // by e-mail
	dvas       []*dva
	nextID     int64
}

// New starts a fake that accepts secretKey (e.g. "sk_test_…") on 127.0.0.1.
// Close it when done.
func New(secretKey string) *Fake {
	dir, err := banks.Load()
	if err != nil {
		panic("paystackfake: loading the bank list: " + err.Error())
	}
	f := &Fake{key: secretKey, dir: dir, closing: make(chan struct{}), accounts: map[string]string{},
		recipients: map[string]*recipient{}, transfers: map[string]*transfer{}, customers: map[string]*customer{},
		nextID: 1000}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// URL is the base URL to configure (PAYSTACK_BASE_URL): scheme and host.
func (f *Fake) URL() string { return f.srv.URL }

// Key is the secret key the fake accepts and signs webhooks with.
func (f *Fake) Key() string { return f.key }

// Close releases held calls and stops the server.
func (f *Fake) Close() {
	f.once.Do(func() { close(f.closing) })
	f.srv.Close()
}

// FailNext makes the next call to method and path (the path without query;
// a path ending in "/" matches every path under it, e.g.
// "/transfer/verify/") fail with kind. With processed, the fake does the
// work first (a transfer is created despite the timeout) and then fails.
func (f *Fake) FailNext(method, path string, kind Fault, processed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, fault{method: method, path: path, kind: kind, processed: processed})
}

// Requests returns the requests received so far, oldest first.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Request, len(f.requests))
	copy(out, f.requests)
	return out
}

// RequestsTo returns the requests received for method and path.
func (f *Fake) RequestsTo(method, path string) []Request {
	var out []Request
	for _, r := range f.Requests() {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	f.mu.Lock()
	f.requests = append(f.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(),
		Header: r.Header.Clone(), Body: body})
	ft, faulty := f.takeFault(r.Method, r.URL.Path)
	f.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))

	if !faulty {
		f.route(w, r, body)
		return
	}
	if ft.processed {
		f.route(httptest.NewRecorder(), r, body)
	}
	switch ft.kind {
	case Timeout:
		select {
		case <-r.Context().Done():
		case <-f.closing:
		case <-time.After(2 * time.Minute):
		}
	case ServerError:
		writeError(w, http.StatusInternalServerError, "api_error", "unknown_error", "An error occurred")
	case Reset:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	case RateLimited:
		writeError(w, http.StatusTooManyRequests, "api_error", "rate_limited", "Rate limit exceeded!")
	case Garbage:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("<html><body>502 Bad Gateway</body></html>"))
	}
}

// takeFault removes and returns the first fault matching the call; f.mu held.
func (f *Fake) takeFault(method, path string) (fault, bool) {
	for i, ft := range f.faults {
		match := ft.path == path || strings.HasSuffix(ft.path, "/") && strings.HasPrefix(path, ft.path)
		if ft.method == method && match {
			f.faults = append(f.faults[:i], f.faults[i+1:]...)
			return ft, true
		}
	}
	return fault{}, false
}

func (f *Fake) route(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Header.Get("Authorization") != "Bearer "+f.key {
		writeError(w, http.StatusUnauthorized, "validation_error", "invalid_key", "Invalid key")
		return
	}
	if r.Method == http.MethodPost && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		writeError(w, http.StatusBadRequest, "validation_error", "invalid_params", "Content-Type must be application/json")
		return
	}
	p := r.URL.Path
	switch {
	case r.Method == http.MethodGet && p == "/bank/resolve":
		f.resolve(w, r.URL.Query())
	case r.Method == http.MethodPost && p == "/transferrecipient":
		f.createRecipient(w, body)
	case r.Method == http.MethodPost && p == "/transfer":
		f.createTransfer(w, body)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/transfer/verify/"):
		f.verifyTransfer(w, strings.TrimPrefix(p, "/transfer/verify/"))
	case r.Method == http.MethodPost && p == "/customer":
		f.createCustomer(w, body)
	case r.Method == http.MethodGet && p == "/dedicated_account":
		f.listDedicated(w, r.URL.Query())
	case r.Method == http.MethodPost && p == "/dedicated_account":
		f.createDedicated(w, body)
	default:
		writeError(w, http.StatusNotFound, "api_error", "not_found", "The route "+p+" is not served by this fake")
	}
}

// id returns a fresh numeric id; f.mu held.
func (f *Fake) id() int64 {
	f.nextID++
	return f.nextID
}

const codeChars = "abcdefghijklmnopqrstuvwxyz0123456789"

// code makes a Paystack-style object code: prefix and 15 random characters.
func code(prefix string) string {
	b := make([]byte, 15)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = codeChars[int(b[i])%len(codeChars)]
	}
	return prefix + string(b)
}

func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }
