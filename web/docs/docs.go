// Package apidocs serves the service's front pages: the REST API's
// reference at /docs (Redoc's standalone bundle, embedded, reading
// /openapi.json), and / (an index of what the service serves). Nothing is
// loaded from another origin, which the Content-Security-Policy enforces.
package apidocs

import (
	"embed"
	"net/http"

	"merchantpay/web/assets"
)

// dist is Redoc's bundle and its licences (build.sh copies them), page the
// reference's own page (index.html) and the script that starts Redoc.
//
//go:embed dist page
var files embed.FS

// Prefix is where the reference is served; its assets are below it.
const Prefix = "/docs"

// Policy lets the page run only the service's own scripts and read only
// the service's own document. Redoc writes its styles inline
// (styled-components) and runs its search index in a Worker made from a
// blob: URL.
const Policy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

var bundle = assets.MustLoad(files,
	assets.Options{What: "REST reference", Dirs: []string{"dist", "page"}, Prefix: Prefix + "/", Policy: Policy},
	"web/docs/build.sh")

// IsPage reports whether p is the reference's address (with or without
// the trailing slash).
func IsPage(p string) bool { return p == Prefix || p == Prefix+"/" }

// ServePage writes the reference's page for a GET or HEAD, or returns the
// error to answer (see assets.Bundle.ServePage).
func ServePage(w http.ResponseWriter, r *http.Request) error { return bundle.ServePage(w, r) }

// ServeAsset writes the file named by the path below Prefix, or returns
// the error to answer (see assets.Bundle.ServeFile).
func ServeAsset(w http.ResponseWriter, r *http.Request) error { return bundle.ServeFile(w, r) }
