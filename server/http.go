package server

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/checkout"
	"merchantpay/internal/obs"
	"merchantpay/rest"
)

func (a *App) routes(api *rest.API, gql http.Handler) http.Handler {
	// Paths are matched as sent. net/http's ServeMux would answer a path
	// with "//" or "/.." in it, and the bare REST prefix, with an HTML
	// redirect: every path not below must get the JSON 404 envelope.
	checkoutH := checkout.New(a.CryptoPay)
	return a.middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/healthz":
			healthz(w, r)
		case p == "/readyz":
			a.ready(w, r)
		case strings.HasPrefix(p, rest.Prefix+"/"):
			api.ServeHTTP(w, r)
		case p == "/graphql":
			gql.ServeHTTP(w, r)
		case strings.HasPrefix(p, checkout.Prefix):
			// The hosted crypto-pay checkout takes no API key: the prepay
			// id in the path is its credential.
			checkoutH.ServeHTTP(w, r)
		default:
			rest.WriteError(w, r, apperr.New(apperr.NotFound, "no route for %s %s", r.Method, r.URL.Path))
		}
	}))
}

// ready answers GET /readyz: 200 while the database answers.
func (a *App) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	w.Header().Set("Content-Type", "application/json")
	if err := a.DB.Ping(ctx); err != nil {
		obs.Log(r.Context()).Warn("readiness: database does not answer", "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"unavailable"}` + "\n"))
		return
	}
	_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
}

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{8,128}$`)

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}

// Hijack hands the connection to the WebSocket upgrade.
func (s *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := s.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("server: connection cannot be hijacked")
	}
	s.status = http.StatusSwitchingProtocols
	return h.Hijack()
}

// Unwrap lets http.ResponseController and the WebSocket upgrade reach the
// connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// middleware gives every request an id (echoed in X-Request-Id), a logger
// carrying it, one access-log line, and turns panics into 500 envelopes.
func (a *App) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !requestIDRE.MatchString(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		ctx := obs.With(obs.WithLogger(obs.WithRequestID(r.Context(), id), a.Log), "request_id", id)
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				obs.Log(ctx).Error("panic serving request", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if rec.status == 0 {
					rest.WriteError(rec, r, apperr.New(apperr.Internal, "internal error"))
				}
			}
			a.accessLog(ctx, r, rec, id, start)
		}()
		next.ServeHTTP(rec, r)
	})
}

// accessLog writes a request's line. It hands the record to the handler
// itself, with typed attributes, rather than through a Logger: the line is
// the same, without the caller's stack walk (slog records the caller's pc
// even when no handler prints it), boxing every value, or a logger with the
// request id formatted for every request.
func (a *App) accessLog(ctx context.Context, r *http.Request, rec *statusRecorder, id string, start time.Time) {
	level := slog.LevelInfo
	if rec.status >= 500 {
		level = slog.LevelError
	}
	if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
		level = slog.LevelDebug
	}
	h := a.Log.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	line := slog.NewRecord(time.Now(), level, "request", 0)
	line.AddAttrs(slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", rec.status), slog.Int("bytes", rec.bytes),
		slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
		slog.Bool("upgrade", strings.EqualFold(r.Header.Get("Upgrade"), "websocket")))
	_ = h.Handle(ctx, line)
}
