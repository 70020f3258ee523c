package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"merchantpay/checkout"
	"merchantpay/internal/apperr"
	"merchantpay/internal/metrics"
	"merchantpay/internal/obs"
	"merchantpay/internal/rails"
	"merchantpay/rest"
	"merchantpay/rest/openapi"
	"merchantpay/web/dashboard"
	apidocs "merchantpay/web/docs"
	"merchantpay/web/graphiql"
)

func (a *App) routes(api *rest.API, gql http.Handler) http.Handler {
	// Paths are matched as sent. net/http's ServeMux would answer a path
	// with "//" or "/.." in it, and the bare REST prefix, with an HTML
	// redirect: every path not below must get the JSON 404 envelope.
	checkoutH := checkout.New(a.CryptoPay)
	index := apidocs.IndexWith(&apidocs.Rails{Test: rails.ProviderSandbox, Live: a.Config.LiveRails.LiveName()})
	return a.middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/healthz":
			metrics.SetRoute(r.Context(), "healthz")
			healthz(w, r)
		case p == "/readyz":
			metrics.SetRoute(r.Context(), "readyz")
			a.ready(w, r)
		case strings.HasPrefix(p, rest.Prefix+"/"):
			api.ServeHTTP(w, r)
		case p == "/graphql" && graphiql.Wants(r):
			// A browser opening the endpoint gets GraphiQL.
			metrics.SetRoute(r.Context(), "graphiql")
			graphiql.ServePage(w, r)
		case p == "/graphql":
			gql.ServeHTTP(w, r)
		case p == exportPath:
			a.serveExport(w, r)
		case p == "/":
			metrics.SetRoute(r.Context(), "index")
			index.ServeHTTP(w, r)
		case p == openapi.Path:
			metrics.SetRoute(r.Context(), "openapi")
			openapi.Handler().ServeHTTP(w, r)
		case apidocs.IsPage(p):
			metrics.SetRoute(r.Context(), "docs")
			if err := apidocs.ServePage(w, r); err != nil {
				rest.WriteError(w, r, err)
			}
		case strings.HasPrefix(p, apidocs.Prefix+"/"):
			metrics.SetRoute(r.Context(), "docs")
			if err := apidocs.ServeAsset(w, r); err != nil {
				rest.WriteError(w, r, err)
			}
		case strings.HasPrefix(p, graphiql.Prefix):
			metrics.SetRoute(r.Context(), "graphiql")
			if err := graphiql.ServeAsset(w, r); err != nil {
				rest.WriteError(w, r, err)
			}
		case strings.HasPrefix(p, "/rails/") && strings.HasSuffix(p, "/webhook") && strings.Count(p, "/") == 3:
			// Providers' webhooks take no API key: each is verified by
			// its provider's signature before it is read.
			metrics.SetRoute(r.Context(), "rails_webhook")
			a.railHooks(strings.TrimSuffix(strings.TrimPrefix(p, "/rails/"), "/webhook")).ServeHTTP(w, r)
		case dashboard.IsPage(p):
			metrics.SetRoute(r.Context(), "dashboard")
			if err := dashboard.ServePage(w, r); err != nil {
				rest.WriteError(w, r, err)
			}
		case strings.HasPrefix(p, dashboard.Prefix):
			metrics.SetRoute(r.Context(), "dashboard")
			if err := dashboard.ServeAsset(w, r); err != nil {
				rest.WriteError(w, r, err)
			}
		case strings.HasPrefix(p, checkout.Prefix):
			metrics.SetRoute(r.Context(), "checkout")
			// The hosted crypto-pay checkout takes no API key: the prepay
			// id in the path is its credential.
			checkoutH.ServeHTTP(w, r)
		default:
			rest.WriteError(w, r, apperr.New(apperr.NotFound, "no route for %s %s", r.Method, r.URL.Path))
		}
	}))
}

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{8,128}$`)

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

// middleware gives every request an id (echoed in X-Request-Id), a logger
// carrying it, its deadlines (statusRecorder), one access-log line, and
// turns panics into 500 envelopes.
func (a *App) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !requestIDRE.MatchString(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		ctx, labels := metrics.WithLabels(r.Context())
		ctx, span := a.startSpan(ctx, r)
		ctx = obs.With(obs.WithLogger(obs.WithRequestID(ctx, id), a.Log), a.logAttrs(id, span)...)
		r = r.WithContext(ctx)
		done := a.Metrics.Begin()
		rec := a.record(w, r)
		if !isUpgrade(r) {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, a.Config.HTTP.Handler)
			defer cancel()
		}
		defer func() {
			if p := recover(); p != nil && p != http.ErrAbortHandler {
				obs.Log(ctx).Error("panic serving request", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if rec.status == 0 {
					rest.WriteError(rec, r, apperr.New(apperr.Internal, "internal error"))
				}
			} else if p != nil {
				rec.aborted = true
			}
			rec.finish()
			done()
			route, code := labels.Values()
			a.Metrics.ObserveRequest(route, r.Method, rec.status, code, time.Since(start))
			a.endSpan(span, route, rec.status)
			a.accessLog(ctx, r, rec, id, start)
			if rec.aborted || rec.outcome == outcomeClientCancel {
				// The connection is closed without an answer: the handler
				// aborted it, or its client is gone.
				panic(http.ErrAbortHandler)
			}
		}()
		next.ServeHTTP(rec, r.WithContext(ctx))
	})
}

func isUpgrade(r *http.Request) bool { return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") }

// accessLog writes a request's line. It hands the record to the handler
// itself, with typed attributes, rather than through a Logger: the line is
// the same, without the caller's stack walk (slog records the caller's pc
// even when no handler prints it), boxing every value, or a logger with the
// request id formatted for every request.
func (a *App) accessLog(ctx context.Context, r *http.Request, rec *statusRecorder, id string, start time.Time) {
	level := slog.LevelInfo
	switch rec.outcome {
	case outcomeServerError:
		level = slog.LevelError
	case outcomeUnavailable:
		level = slog.LevelWarn
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
		slog.Int("status", rec.status), slog.String("outcome", rec.outcome), slog.Int("bytes", rec.bytes),
		slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
		slog.Bool("upgrade", isUpgrade(r)))
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		line.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	_ = h.Handle(ctx, line)
}
