// Package railsfake holds what the in-memory provider fakes share: the
// queue of injected failures, the log of requests received, the JSON
// answer writer and the loopback server's start and stop. Each fake keeps
// its own routes, envelopes and signing.
package railsfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"
)

// Failure is how a fake mishandles a coming call.
type Failure int

const (
	// None answers the call normally (to let calls pass in FailNext).
	None Failure = iota
	// TimeoutBefore holds the call without acting on it until the client
	// gives up.
	TimeoutBefore
	// TimeoutAfter acts on the call, then holds it until the client gives
	// up.
	TimeoutAfter
	// ServerErrorBefore answers a 5xx without acting on the call.
	ServerErrorBefore
	// ServerErrorAfter acts on the call, then answers a 5xx.
	ServerErrorAfter
)

// before reports whether the failure stops the call before it is acted on.
func (fl Failure) before() bool { return fl == TimeoutBefore || fl == ServerErrorBefore }

// maxHold bounds how long a simulated timeout holds a call.
const maxHold = 2 * time.Minute

// Base is the part of a fake that records requests of type R, injects
// failures and runs the loopback server. Embed a *Base made by NewBase.
type Base[R any] struct {
	// serverError writes the fake's answer for ServerErrorBefore/After.
	serverError func(http.ResponseWriter)

	mu       sync.Mutex
	requests []R
	failures []Failure
	server   *httptest.Server
	// hang is closed by Close so that a simulated timeout never outlives
	// the server.
	hang chan struct{}
}

// NewBase makes a Base whose server errors are written by serverError.
func NewBase[R any](serverError func(http.ResponseWriter)) *Base[R] {
	return &Base[R]{serverError: serverError, hang: make(chan struct{})}
}

// FailNext makes the next calls fail, one failure per call, in order.
func (b *Base[R]) FailNext(failures ...Failure) {
	b.mu.Lock()
	b.failures = append(b.failures, failures...)
	b.mu.Unlock()
}

// Requests returns the requests received so far, oldest first.
func (b *Base[R]) Requests() []R {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.requests)
}

// Serve serves h (the fake) on loopback; Close stops it.
func (b *Base[R]) Serve(h http.Handler) {
	b.server = httptest.NewServer(h)
}

// URL is the base URL of a started fake (scheme and host).
func (b *Base[R]) URL() string { return b.server.URL }

// Close stops a started fake and releases any request it holds.
func (b *Base[R]) Close() {
	b.mu.Lock()
	select {
	case <-b.hang:
	default:
		close(b.hang)
	}
	b.mu.Unlock()
	if b.server != nil {
		b.server.Close()
	}
}

// Handle reads one call, records it as record makes it, takes the next
// failure, and answers with route's status and JSON body unless the
// failure says otherwise (before route runs, or after it).
func (b *Base[R]) Handle(w http.ResponseWriter, r *http.Request, record func(r *http.Request, body []byte) R,
	route func(r *http.Request, body []byte) (int, any)) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	b.mu.Lock()
	b.requests = append(b.requests, record(r, body))
	fail := b.takeFailure()
	b.mu.Unlock()
	if fail != None && fail.before() {
		b.fail(w, r, fail)
		return
	}
	status, answer := route(r, body)
	if fail != None {
		b.fail(w, r, fail)
		return
	}
	WriteJSON(w, status, answer)
}

// takeFailure pops the next failure, None when there is none; b.mu held.
func (b *Base[R]) takeFailure() Failure {
	if len(b.failures) == 0 {
		return None
	}
	fl := b.failures[0]
	b.failures = b.failures[1:]
	return fl
}

func (b *Base[R]) fail(w http.ResponseWriter, r *http.Request, fl Failure) {
	switch fl {
	case TimeoutBefore, TimeoutAfter:
		select {
		case <-r.Context().Done():
		case <-b.hang:
		case <-time.After(maxHold):
		}
	default:
		b.serverError(w)
	}
}

// WriteJSON answers status with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		http.Error(w, fmt.Sprint(err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// PostWebhook posts body to url with header, as a provider delivers a
// webhook, and returns the receiver's status and answer.
func PostWebhook(ctx context.Context, url string, header http.Header, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, answer, err
}
