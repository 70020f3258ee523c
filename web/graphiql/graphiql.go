// Package graphiql serves GraphiQL, the in-browser GraphQL IDE, from the
// bundle in dist/ (built by build.sh from pinned npm packages, committed,
// and embedded here): its page at GET /graphql for browsers, and its
// script, stylesheet and editor workers under Prefix. Nothing it serves
// loads anything from another origin, and its Content-Security-Policy says
// so to the browser.
package graphiql

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

// Prefix is the path under which the assets are served.
const Prefix = "/graphiql/"

//go:embed dist
var dist embed.FS

// Policy is the Content-Security-Policy of every answer of this package:
// scripts, workers, styles, fonts, images and connections (fetch and the
// WebSocket of subscriptions, which 'self' covers) of this origin only.
// Styles also allow inline ones: the editor (monaco) writes its theme
// into <style> elements it creates at run time, with no nonce. Fonts and
// images may be data: URLs, as GraphiQL's stylesheet embeds its fonts.
const Policy = "default-src 'self'; script-src 'self'; worker-src 'self'; " +
	"style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
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
		panic("graphiql: the embedded bundle is incomplete; run web/graphiql/build.sh")
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
	case ".html":
		return "text/html; charset=utf-8"
	}
	return "application/octet-stream"
}

// Wants reports whether r is a browser opening /graphql: a GET (or HEAD)
// that accepts HTML and is no GraphQL request (no query parameter, no
// WebSocket upgrade).
func Wants(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || r.URL.Query().Has("query") {
		return false
	}
	for _, accept := range r.Header.Values("Accept") {
		if strings.Contains(strings.ToLower(accept), "text/html") {
			return true
		}
	}
	return false
}

func secure(h http.Header) {
	h.Set("Content-Security-Policy", Policy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// ServePage writes GraphiQL's page. It names the assets with the bundle's
// version, so the page itself is never cached and the assets always are.
func ServePage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	secure(h)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "Accept")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(page))
}

// ServeAsset writes the asset named by the path under Prefix. Asked with
// the current version (?v=), it may be cached for a year; otherwise it is
// revalidated by its ETag. It writes nothing and returns a NotFound error
// for a name that is none, MethodNotAllowed (with Allow set) for a method
// other than GET or HEAD: the caller answers those as any other error.
func ServeAsset(w http.ResponseWriter, r *http.Request) error {
	a := assets[strings.TrimPrefix(r.URL.Path, Prefix)]
	if a == nil {
		return apperr.New(apperr.NotFound, "no GraphiQL asset at %s", r.URL.Path)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		return apperr.New(apperr.MethodNotAllowed, "GraphiQL's assets take GET requests")
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

func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
				continue
			}
			// gzip;q=0 (or 0.0...) refuses it.
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
