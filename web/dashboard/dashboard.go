// Package dashboard serves the merchant dashboard, a web page on the
// GraphQL API, from the bundle in dist/ (built by build.sh from src/ and
// pinned npm packages, committed, and embedded here): its page at
// GET /dashboard and its script and stylesheet under Prefix. Nothing it
// serves loads anything from another origin, and its
// Content-Security-Policy says so to the browser.
package dashboard

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"merchantpay/internal/apperr"
)

// Path is the page's address; Prefix the one under which its assets are
// served (and the CSV export, which another handler answers).
const (
	Path   = "/dashboard"
	Prefix = "/dashboard/"
)

//go:embed dist
var dist embed.FS

// Policy is the Content-Security-Policy of every answer of this package:
// the page's script, stylesheet and connections (fetch to /graphql and
// the WebSocket of the live feed, which 'self' covers) of this origin
// only, and nothing inline.
const Policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// asset is one file of dist, with its gzip form made on first demand.
type asset struct {
	body        []byte
	contentType string
	zipOnce     sync.Once
	zipped      []byte
}

var (
	assets  = map[string]*asset{}
	page    []byte
	version string
)

func init() {
	sum := sha256.New()
	err := fs.WalkDir(dist, "dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := dist.ReadFile(p)
		if err != nil {
			return err
		}
		sum.Write([]byte(p))
		sum.Write(body)
		name := strings.TrimPrefix(p, "dist/")
		if name == "index.html" {
			page = body
			return nil
		}
		assets[name] = &asset{body: body, contentType: contentType(name)}
		return nil
	})
	if err != nil || page == nil {
		panic("dashboard: the embedded bundle is incomplete; run web/dashboard/build.sh")
	}
	version = hex.EncodeToString(sum.Sum(nil))[:16]
	page = bytes.ReplaceAll(page, []byte("{{version}}"), []byte(version))
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	}
	return "application/octet-stream"
}

func secure(h http.Header) {
	h.Set("Content-Security-Policy", Policy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// IsPage reports whether p is the page's address (with or without the
// trailing slash).
func IsPage(p string) bool { return p == Path || p == Prefix }

// ServePage writes the dashboard's page for a GET or HEAD. It names the
// assets with the bundle's version, so the page itself is never cached
// and the assets always are. Another method gets a MethodNotAllowed error
// (with Allow set), which the caller answers as any other error.
func ServePage(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		return apperr.New(apperr.MethodNotAllowed, "the dashboard takes GET requests")
	}
	h := w.Header()
	secure(h)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(page))
	return nil
}

// ServeAsset writes the asset named by the path under Prefix. Asked with
// the current version (?v=), it may be cached for a year; otherwise it is
// revalidated by its ETag. It writes nothing and returns a NotFound error
// for a name that is none, MethodNotAllowed (with Allow set) for a method
// other than GET or HEAD: the caller answers those as any other error.
func ServeAsset(w http.ResponseWriter, r *http.Request) error {
	a := assets[strings.TrimPrefix(r.URL.Path, Prefix)]
	if a == nil {
		return apperr.New(apperr.NotFound, "no dashboard asset at %s", r.URL.Path)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		return apperr.New(apperr.MethodNotAllowed, "the dashboard's assets take GET requests")
	}
	h := w.Header()
	secure(h)
	h.Set("Content-Type", a.contentType)
	h.Set("Vary", "Accept-Encoding")
	if r.URL.Query().Get("v") == version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	body, etag := a.body, `"`+version+`"`
	if acceptsGzip(r) {
		body, etag = a.gzipped(), `"`+version+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	return nil
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip
// (gzip;q=0 refuses it).
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
				continue
			}
			q, isQ := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
			if v, err := strconv.ParseFloat(q, 64); isQ && err == nil && v == 0 {
				return false
			}
			return true
		}
	}
	return false
}

func (a *asset) gzipped() []byte {
	a.zipOnce.Do(func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
		_, _ = zw.Write(a.body)
		_ = zw.Close()
		a.zipped = buf.Bytes()
	})
	return a.zipped
}
