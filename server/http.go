package server

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
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
	})
	mux.Handle(rest.Prefix+"/", api)
	mux.Handle("/graphql", gql)
	// The hosted crypto-pay checkout takes no API key: the prepay id in the
	// path is its credential.
	mux.Handle(checkout.Prefix, checkout.New(a.CryptoPay))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		rest.WriteError(w, r, apperr.New(apperr.NotFound, "no route for %s %s", r.Method, r.URL.Path))
	})
	return a.middleware(mux)
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
		log := a.Log.With("request_id", id)
		ctx := obs.WithLogger(obs.WithRequestID(r.Context(), id), log)
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				log.Error("panic serving request", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if rec.status == 0 {
					rest.WriteError(rec, r, apperr.New(apperr.Internal, "internal error"))
				}
			}
			level := log.Info
			if rec.status >= 500 {
				level = log.Error
			}
			if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
				level = log.Debug
			}
			level("request", "method", r.Method, "path", r.URL.Path, "status", rec.status,
				"bytes", rec.bytes, "duration_ms", float64(time.Since(start).Microseconds())/1000,
				"upgrade", strings.EqualFold(r.Header.Get("Upgrade"), "websocket"))
		}()
		next.ServeHTTP(rec, r)
	})
}
