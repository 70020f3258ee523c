package server

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// AdminHandler is the operator's listener (ADMIN_ADDR): /metrics for
// Prometheus, /debug/pprof/ for profiles, and the health routes. None of it
// is on the public listener: a profile or the metrics' figures are for the
// people who run the service, not for merchants.
func (a *App) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.Metrics.Registry, promhttp.HandlerOpts{
		// A scrape that fails part-way still serves what it could read.
		ErrorHandling: promhttp.ContinueOnError,
		// Scrapes are few; one at a time keeps a stuck database from
		// piling them up.
		MaxRequestsInFlight: 2,
		Timeout:             10 * time.Second,
	}))
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("GET /readyz", a.ready)
	return mux
}

// healthz answers 200 while the process runs.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
}

// serveAdmin starts the admin listener on cfg.AdminAddr (none when empty)
// and returns what stops it. An address that cannot be listened on is an
// error: the service does not run unobserved by mistake.
func serveAdmin(cfg Config, app *App, log *slog.Logger) (stop func(), err error) {
	if cfg.AdminAddr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", cfg.AdminAddr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{
		Handler:           app.AdminHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		// A CPU profile takes 30 s by default.
		WriteTimeout: 2 * time.Minute,
		IdleTimeout:  2 * time.Minute,
	}
	go func() { _ = srv.Serve(ln) }()
	log.Info("admin listener serving /metrics, /debug/pprof/ and health", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}
