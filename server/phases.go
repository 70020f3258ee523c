package server

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/httpdeadline"
	"merchantpay/internal/obs"
	"merchantpay/rest"
)

// StatusClientClosedRequest is the access log's status of a request whose
// client went away before its answer: nothing was sent (nginx's 499).
const StatusClientClosedRequest = 499

// A request's outcome, in its access-log line, counts it in one of these.
const (
	outcomeOK          = "ok"
	outcomeClientError = "client_error"
	// outcomeSlowClient: its body came too slowly; answered 408.
	outcomeSlowClient = "slow_client"
	// outcomeClientCancel: its client went away first; status 499.
	outcomeClientCancel = "client_cancel"
	// outcomeUnavailable: 503, the database down, slow or failing over;
	// logged as a warning, since every request says the same until it is
	// back and /readyz already tells the load balancer.
	outcomeUnavailable = "unavailable"
	outcomeServerError = "server_error"
)

// drainLimit is how much of a body its handler left unread is read after
// it, so that the connection can serve the next request (net/http's own
// limit); with more left, the connection is closed after the answer.
const drainLimit = 256 << 10

// statusRecorder is the ResponseWriter handlers get: it records the
// status and size for the access log and, at the handler's first header,
// settles the request's phases: the rest of the body is read under its
// deadline, a body that came too slowly is answered 408 instead, and
// nothing is sent to a client that went away.
type statusRecorder struct {
	http.ResponseWriter
	// r is the request as the middleware got it: its context is the
	// client's, without the handler's deadline.
	r      *http.Request
	body   *httpdeadline.Body // nil for a request without a body
	limits HTTPDeadlines
	status int
	bytes  int
	// dropped: the handler's answer is not sent (408 went instead, or the
	// client is gone); its writes fail with errDropped.
	dropped bool
	// aborted: the handler aborted the answer (http.ErrAbortHandler).
	aborted bool
	outcome string
}

var errDropped = errors.New("server: the answer is not sent: the client is gone or its body came too slowly")

// record installs the request's body deadline and returns its recorder.
// The body is wrapped before any handler runs, authenticated or not.
func (a *App) record(w http.ResponseWriter, r *http.Request) *statusRecorder {
	d := a.Config.HTTP
	rec := &statusRecorder{ResponseWriter: w, r: r, limits: d}
	if r.Body != nil && r.Body != http.NoBody {
		rc := http.NewResponseController(w)
		rec.body = httpdeadline.NewBody(r.Body, r.ContentLength, d.Body, d.BodyMinRate, rc.SetReadDeadline)
		r.Body = rec.body
	}
	return rec
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.begin(code)
		return
	}
	if !s.dropped {
		s.ResponseWriter.WriteHeader(code) // net/http reports the superfluous call
	}
}

// begin settles what is sent, at the handler's first header.
func (s *statusRecorder) begin(code int) {
	if s.body != nil && !s.body.Done() && !obs.Abandoned(s.r.Context()) {
		if !s.body.Drain(drainLimit) && !s.body.TimedOut() {
			// The connection cannot serve another request: the rest of
			// this one's body comes first on it.
			s.Header().Set("Connection", "close")
		}
	}
	switch {
	case s.body != nil && s.body.TimedOut():
		// A read of the body timed out (net/http then cancels the
		// request's context too): 408 instead of whatever the handler
		// made of it, and the connection closes after it.
		s.status, s.dropped, s.outcome = http.StatusRequestTimeout, true, outcomeSlowClient
		h := s.ResponseWriter.Header()
		for k := range h {
			if k != "X-Request-Id" {
				delete(h, k)
			}
		}
		h.Set("Connection", "close")
		_ = s.ExtendWriteDeadline()
		rest.WriteError(sent{s}, s.r, apperr.New(apperr.RequestTimeout,
			"the request body did not arrive in time: it must arrive within %s, at no less than %d bytes a second after the first %s",
			s.limits.Body, s.limits.BodyMinRate, httpdeadline.Grace))
	case obs.Abandoned(s.r.Context()):
		s.status, s.dropped, s.outcome = StatusClientClosedRequest, true, outcomeClientCancel
	default:
		s.status = code
		_ = s.ExtendWriteDeadline()
		s.ResponseWriter.WriteHeader(code)
	}
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.begin(http.StatusOK)
	}
	if s.dropped {
		return 0, errDropped
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}

// sent writes the recorder's own answer (the 408) past its dropped flag.
type sent struct{ s *statusRecorder }

func (w sent) Header() http.Header  { return w.s.ResponseWriter.Header() }
func (w sent) WriteHeader(code int) { w.s.ResponseWriter.WriteHeader(code) }
func (w sent) Write(b []byte) (int, error) {
	n, err := w.s.ResponseWriter.Write(b)
	w.s.bytes += n
	return n, err
}

// finish settles a request whose handler wrote nothing (net/http would
// answer 200 with no body) and names the outcome.
func (s *statusRecorder) finish() {
	if s.status == 0 && !s.aborted {
		s.begin(http.StatusOK)
	}
	if s.outcome != "" {
		return
	}
	switch {
	case s.status == http.StatusServiceUnavailable:
		s.outcome = outcomeUnavailable
	case s.status >= 500:
		s.outcome = outcomeServerError
	case s.status >= 400:
		s.outcome = outcomeClientError
	default:
		s.outcome = outcomeOK
	}
}

// ExtendWriteDeadline gives the answer the write timeout from now
// (httpdeadline.ExtendWrite).
func (s *statusRecorder) ExtendWriteDeadline() error {
	return http.NewResponseController(s.ResponseWriter).SetWriteDeadline(time.Now().Add(s.limits.Write))
}

// Hijack hands the connection to the WebSocket upgrade. net/http clears
// the connection's deadlines when it is hijacked: a WebSocket keeps its own
// (server/gqlws), and an idle subscriber is not cut off when the request's
// would have passed.
func (s *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := s.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("server: connection cannot be hijacked")
	}
	s.status, s.outcome = http.StatusSwitchingProtocols, outcomeOK
	return h.Hijack()
}

// Unwrap lets http.ResponseController and the WebSocket upgrade reach the
// connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
