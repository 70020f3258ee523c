// Package graphiql serves GraphiQL, the in-browser GraphQL IDE, from the
// bundle in dist/ (built by build.sh from pinned npm packages, committed,
// and embedded here): its page at GET /graphql for browsers, and its
// script, stylesheet and editor workers under Prefix. Nothing it serves
// loads anything from another origin, and its Content-Security-Policy says
// so to the browser.
package graphiql

import (
	"embed"
	"net/http"
	"strings"

	"merchantpay/web/assets"
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

var bundle = assets.MustLoad(dist, assets.Options{What: "GraphiQL", Dirs: []string{"dist"}, Prefix: Prefix, Policy: Policy},
	"web/graphiql/build.sh")

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

// ServePage writes GraphiQL's page, for a request Wants. The same path
// answers GraphQL requests, so the page varies with Accept.
func ServePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Accept")
	// Wants took only GET and HEAD, the methods the page is served for.
	_ = bundle.ServePage(w, r)
}

// ServeAsset writes the asset named by the path under Prefix, or returns
// the error to answer (see assets.Bundle.ServeFile).
func ServeAsset(w http.ResponseWriter, r *http.Request) error { return bundle.ServeFile(w, r) }
