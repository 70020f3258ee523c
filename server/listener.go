package server

import (
	"net/http"
	"time"
)

// HTTPDeadlines bound every phase of a request, so that no client holds a
// connection (a file descriptor, a goroutine) longer than it takes to send
// its request at a reasonable pace, wait for the answer and read it.
type HTTPDeadlines struct {
	// ReadHeader bounds the request line and headers
	// (HTTP_READ_HEADER_TIMEOUT).
	ReadHeader time.Duration
	// Body bounds the body, from the service's first read of it
	// (HTTP_BODY_TIMEOUT); BodyMinRate, in bytes per second, is the pace it
	// must keep after a short grace (HTTP_BODY_MIN_RATE; 0: none). A body
	// too slow is answered 408 and its connection closed.
	Body        time.Duration
	BodyMinRate int
	// Handler is the deadline of the request's context: the work done for
	// it (HTTP_HANDLER_TIMEOUT). WebSocket upgrades have none.
	Handler time.Duration
	// Write bounds the writing of the answer from its first byte
	// (HTTP_WRITE_TIMEOUT); a handler that streams extends it per chunk
	// (httpdeadline.ExtendWrite).
	Write time.Duration
	// Idle bounds the wait for the next request on a kept-alive
	// connection (HTTP_IDLE_TIMEOUT).
	Idle time.Duration
}

// NewHTTPServer is the HTTP server of cfg serving h; serve runs it, and the
// tests run the same.
//
// net/http itself enforces the header, idle and write deadlines; the
// middleware the body's and the handler's. The server's WriteTimeout, set
// when each request is read, is a backstop covering the handler's whole
// budget and the write; the middleware gives the answer its own write
// deadline when it starts. ReadTimeout stays unset: it would bound the
// body from the request's start whatever the handler does, and a read
// deadline left on a connection cancels the request when it passes.
// net/http clears both deadlines of a connection a WebSocket upgrade takes
// over; the WebSocket keeps its own (server/gqlws).
func NewHTTPServer(cfg Config, h http.Handler) *http.Server {
	d := cfg.HTTP
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: d.ReadHeader,
		WriteTimeout:      d.Handler + d.Write,
		IdleTimeout:       d.Idle,
	}
}
