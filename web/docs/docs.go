// Package apidocs serves the service's front pages: the REST API's
// reference at /docs (Redoc's standalone bundle, embedded, reading
// /openapi.json), and / (an index of what the service serves). Nothing is
// loaded from another origin, which the Content-Security-Policy enforces.
package apidocs

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed dist page
var files embed.FS

// Prefix is where the reference is served; its assets are below it.
const Prefix = "/docs"

// csp lets the page run only the service's own scripts and read only the
// service's own document. Redoc writes its styles inline (styled-components)
// and runs its search index in a Worker made from a blob: URL.
const csp = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// assets are the files below Prefix: the bundle and the page's own script.
var assets = map[string]string{
	"redoc.standalone.js":             "dist/redoc.standalone.js",
	"redoc.standalone.js.LICENSE.txt": "dist/redoc.standalone.js.LICENSE.txt",
	"LICENSE":                         "dist/LICENSE",
	"init.js":                         "page/init.js",
}

// Docs serves Prefix (the page) and the assets below it; anything else below
// it is 404.
func Docs() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := "page/docs.html"
		if p := r.URL.Path; p != Prefix && p != Prefix+"/" {
			file, ok := assets[strings.TrimPrefix(p, Prefix+"/")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			name = file
		}
		serve(w, r, name)
	})
}

func serve(w http.ResponseWriter, r *http.Request, name string) {
	body, err := fs.ReadFile(files, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", contentType(name))
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	}
	return "text/plain; charset=utf-8"
}
