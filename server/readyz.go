package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"merchantpay/internal/obs"
	"merchantpay/internal/store"
)

// ready answers GET /readyz: 200 while the database answers and takes
// writes; 503 {"status":"read_only"} while it answers but takes none (a
// standby, a fenced database), 503 {"status":"unavailable"} while it does
// not answer.
func (a *App) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	w.Header().Set("Content-Type", "application/json")
	err := a.DB.Writable(ctx)
	if err == nil {
		_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
		return
	}
	status := `{"status":"unavailable"}`
	if errors.Is(err, store.ErrReadOnly) {
		status = `{"status":"read_only"}`
		obs.Log(r.Context()).Warn("readiness: the database takes no writes", "err", err)
	} else {
		obs.Log(r.Context()).Warn("readiness: database does not answer", "err", err)
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte(status + "\n"))
}
