package server

import (
	"context"
	"net/http"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/exports"
	"merchantpay/internal/httpdeadline"
	"merchantpay/internal/metrics"
	"merchantpay/internal/obs"
)

// exportTimeout bounds one CSV export: it outlives the handler deadline
// (HTTP_HANDLER_TIMEOUT), which is made for one API answer, not a stream of
// every transaction.
const exportTimeout = 15 * time.Minute

// serveExport answers GET /dashboard/export/transactions.csv?token=...: the
// one-time token (exports) is the only credential; no API key is taken.
// The CSV is streamed a page at a time. A token that is unknown, used or
// expired gets 404 with a short text; a failure after the first rows cuts
// the connection, so that a truncated file is not taken for a whole one.
func (a *App) serveExport(w http.ResponseWriter, r *http.Request) {
	metrics.SetRoute(r.Context(), "dashboard-export")
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodGet {
		h.Set("Allow", http.MethodGet)
		plain(w, http.StatusMethodNotAllowed, "only GET is allowed here")
		return
	}
	t, f, err := a.Exports.Use(r.Context(), r.URL.Query().Get("token"))
	if err != nil {
		if apperr.Is(err, apperr.NotFound) {
			plain(w, http.StatusNotFound, apperr.As(err).Message)
			return
		}
		obs.Log(r.Context()).Error("export: token check failed", "err", err)
		plain(w, apperr.KindOf(err).Status(), "the export could not start; try again")
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), exportTimeout)
	defer cancel()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="transactions.csv"`)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	err = a.Exports.WriteCSV(ctx, w, t, f, func() {
		_ = httpdeadline.ExtendWrite(w)
		_ = rc.Flush()
	})
	if err != nil {
		obs.Log(ctx).Warn("export: stopped before its end", "err", err)
		panic(http.ErrAbortHandler)
	}
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// exportPath is where serveExport answers.
const exportPath = exports.Path
