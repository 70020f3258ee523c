// Package checkout serves the hosted crypto-pay checkout page of the sandbox,
// a transport beside rest/ and graph/: PUBLIC_BASE_URL/checkout/{prepayId},
// server-rendered HTML with no external assets and no JavaScript, its QR
// code PNG, and the Pay and Cancel forms that complete the payment and send
// the payer to the merchant's success_url or failure_url. It needs no API
// key: the prepay id, 128 random bits, is the credential. The rules are
// internal/cryptopay's.
package checkout

import (
	"fmt"
	"html/template"
	"net/http"
	"path"
	"strings"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/cryptopay"
	"merchantpay/internal/obs"
	"merchantpay/internal/tenant"
)

// Prefix is where the pages live.
const Prefix = "/checkout/"

// securityHeaders keep the page self-contained: nothing loads from
// elsewhere, no script runs, no other site frames the Pay button, and the
// prepay id in the address does not leak through Referer. form-action is
// left open: browsers apply it to the redirect to the merchant's URLs too.
var securityHeaders = [][2]string{
	{"Content-Security-Policy", "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'"},
	{"X-Frame-Options", "DENY"},
	{"X-Content-Type-Options", "nosniff"},
	{"Referrer-Policy", "no-referrer"},
	{"Cache-Control", "no-store"},
}

// Handler serves the checkout pages.
type Handler struct {
	svc  *cryptopay.Service
	page *template.Template
	mux  *http.ServeMux
}

// New returns the handler of everything under Prefix.
func New(svc *cryptopay.Service) *Handler {
	h := &Handler{svc: svc, page: template.Must(template.New("checkout").Parse(pageHTML)), mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /checkout/{prepayId}", h.show)
	h.mux.HandleFunc("GET /checkout/{prepayId}/qr.png", h.qr)
	h.mux.HandleFunc("POST /checkout/{prepayId}/pay", h.complete(cryptopay.OutcomeSuccess))
	h.mux.HandleFunc("POST /checkout/{prepayId}/cancel", h.complete(cryptopay.OutcomeFailed))
	h.mux.HandleFunc(Prefix, h.notFound)
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for _, kv := range securityHeaders {
		w.Header().Set(kv[0], kv[1])
	}
	// ServeMux answers a path that is not in canonical form ("..", ".",
	// "//", in plain or escaped form) with a redirect to the cleaned path,
	// which may be no checkout at all ("/checkout/../healthz"). No checkout
	// has such an address: it is not found.
	if !canonical(r.URL.Path) || !canonical(r.URL.EscapedPath()) {
		h.notFound(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// canonical reports whether p is a path that cleaning leaves as it is.
func canonical(p string) bool { return path.Clean(p) == p }

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusNotFound, view{Title: "Checkout not found", Message: notFoundText})
}

const notFoundText = "There is no checkout at this address. Check the link you were given."

// view is the template's data.
type view struct {
	Title   string
	Message string
	C       *cryptopay.Checkout
	// Left and Expires describe the expiry; Refresh reloads the page when it
	// comes, so the page shows it without JavaScript.
	Left, Expires string
	Refresh       int
	Cross         bool
	PayAction     string
	CancelAction  string
	QRSrc         string
}

func (h *Handler) show(w http.ResponseWriter, r *http.Request) {
	c, err := h.svc.Checkout(r.Context(), r.PathValue("prepayId"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	base := Prefix + c.PrepayID
	v := view{Title: "Pay " + c.BusinessName, C: c,
		Expires:   c.ExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC"),
		Left:      left(c.Left),
		Cross:     c.Currency != c.CreditedCurrency,
		PayAction: base + "/pay", CancelAction: base + "/cancel", QRSrc: base + "/qr.png"}
	if c.State == cryptopay.StateOpen {
		v.Refresh = int((c.Left+time.Second-1)/time.Second) + 1
	}
	h.render(w, r, http.StatusOK, v)
}

// left renders a duration as "29 min 59 s".
func left(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	if s >= 60 {
		return fmt.Sprintf("%d min %02d s", s/60, s%60)
	}
	return fmt.Sprintf("%d s", s)
}

func (h *Handler) qr(w http.ResponseWriter, r *http.Request) {
	png, err := h.svc.QRPNG(r.Context(), r.PathValue("prepayId"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	// The code of a prepay id never changes.
	w.Header().Set("Cache-Control", "private, max-age=3600")
	_, _ = w.Write(png)
}

// complete is the Pay (success) or Cancel (failed) form: it completes the
// checkout and sends the payer on with 303 to the merchant's success_url or
// failure_url, or back to this page when there is none or the checkout was
// already completed (the page then shows how it ended).
func (h *Handler) complete(outcome string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("prepayId")
		back := Prefix + id
		t, err := h.svc.Complete(tenant.System(r.Context()), nil, id, outcome)
		switch {
		case apperr.Is(err, apperr.DuplicateReference):
			http.Redirect(w, r, back, http.StatusSeeOther)
			return
		case err != nil:
			h.fail(w, r, err)
			return
		}
		to := cryptopay.Redirect(t)
		if to == "" {
			to = back
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
	}
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if apperr.Is(err, apperr.NotFound) {
		h.notFound(w, r)
		return
	}
	obs.Log(r.Context()).Log(r.Context(), obs.FailureLevel(r.Context()), "checkout page failed", "path", r.URL.Path, "err", err)
	status := http.StatusInternalServerError
	if apperr.Is(err, apperr.Unavailable) {
		status = http.StatusServiceUnavailable
	}
	h.render(w, r, status, view{Title: "Something went wrong",
		Message: "The checkout could not be shown. Try again in a moment (request " + obs.RequestID(r.Context()) + ")."})
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, v view) {
	var b strings.Builder
	if err := h.page.Execute(&b, v); err != nil {
		obs.Log(r.Context()).Error("checkout page rendering failed", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}
