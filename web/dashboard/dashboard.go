// Package dashboard serves the merchant dashboard, a web page on the
// GraphQL API, from the bundle in dist/ (built by build.sh from src/ and
// pinned npm packages, committed, and embedded here): its page at
// GET /dashboard and its script and stylesheet under Prefix. Nothing it
// serves loads anything from another origin, and its
// Content-Security-Policy says so to the browser.
package dashboard

import (
	"embed"
	"net/http"

	"merchantpay/web/assets"
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

var bundle = assets.MustLoad(dist, assets.Options{What: "dashboard", Dirs: []string{"dist"}, Prefix: Prefix, Policy: Policy},
	"web/dashboard/build.sh")

// IsPage reports whether p is the page's address (with or without the
// trailing slash).
func IsPage(p string) bool { return p == Path || p == Prefix }

// ServePage writes the dashboard's page for a GET or HEAD (see
// assets.Bundle.ServePage); another method gets a MethodNotAllowed error,
// which the caller answers as any other error.
func ServePage(w http.ResponseWriter, r *http.Request) error { return bundle.ServePage(w, r) }

// ServeAsset writes the asset named by the path under Prefix, or returns
// the error to answer (see assets.Bundle.ServeFile).
func ServeAsset(w http.ResponseWriter, r *http.Request) error { return bundle.ServeFile(w, r) }
