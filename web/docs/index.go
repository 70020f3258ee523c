package apidocs

import (
	"encoding/json"
	"html/template"
	"net/http"
	"strings"
)

// A link is one thing the service serves, as the index lists it: each
// answers a GET.
type link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
	What string `json:"title"`
}

var links = []link{
	{"graphql", "/graphql", "GraphQL (POST; WebSocket subscriptions on the same path)"},
	{"dashboard", "/dashboard", "merchant dashboard (sign in with a secret key)"},
	{"docs", Prefix, "REST API reference"},
	{"openapi", "/openapi.json", "OpenAPI 3.1 description of the REST API"},
	{"healthz", "/healthz", "liveness: answers while the process runs"},
	{"readyz", "/readyz", "readiness: answers while the database answers and takes writes"},
}

// restBasePath is where the REST operations are, shown as text rather than
// linked: the path itself names no operation and answers 404.
const restBasePath = "/v1/merchant/public"

var indexPage = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>merchantpay</title>
<link rel="icon" href="data:,">
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5}code{font-size:.95em}</style>
</head>
<body>
<h1>merchantpay</h1>
<p>Merchant payments: wallets, NGN virtual accounts, rates, crypto-pay deposits and bank payouts.</p>
{{with .Rails}}<p>Test mode runs on the <code>{{.Test}}</code> rails; live mode on <code>{{.Live}}</code>.</p>
{{end}}<p>The REST API's operations are under <code>{{.RESTBasePath}}</code> (see the reference at <a href="/docs">/docs</a>).</p>
<ul>
{{range .Links}}<li><a href="{{.Href}}" rel="{{.Rel}}"><code>{{.Href}}</code></a>: {{.What}}</li>
{{end}}</ul>
</body>
</html>
`))

// Index answers GET / with an HTML page of links for a browser (Accept
// names text/html) and the same links as JSON for anything else.
func Index() http.Handler { return IndexWith(nil) }

// Rails says what each mode's money moves on, as GET / tells it: "sandbox"
// or the live providers' names.
type Rails struct {
	Test string `json:"test"`
	Live string `json:"live"`
}

// IndexWith is Index telling also what each mode runs on (rails nil: not
// told).
func IndexWith(rails *Rails) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Vary", "Accept")
		h.Set("X-Content-Type-Options", "nosniff")
		if strings.Contains(r.Header.Get("Accept"), "text/html") {
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
			w.WriteHeader(http.StatusOK)
			if r.Method == http.MethodGet {
				_ = indexPage.Execute(w, struct {
					Links        []link
					Rails        *Rails
					RESTBasePath string
				}{links, rails, restBasePath})
			}
			return
		}
		body, _ := json.Marshal(struct {
			Name         string `json:"name"`
			Links        []link `json:"links"`
			RESTBasePath string `json:"rest_base_path"`
			Rails        *Rails `json:"rails,omitempty"`
		}{"merchantpay", links, restBasePath, rails})
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(append(body, '\n'))
		}
	})
}
