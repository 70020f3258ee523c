package server_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"merchantpay/server/servertest"
)

// TestIndexLinks: GET / lists the service's entry points, as HTML to a
// browser and as JSON to anything else, and every link of either form
// answers (the REST base path, which names no operation, is told as text).
func TestIndexLinks(t *testing.T) {
	servertest.Each(t, testIndexLinks)
}

func testIndexLinks(t *testing.T, e *servertest.Env) {
	want := []string{"/graphql", "/dashboard", "/docs", "/openapi.json", "/healthz", "/readyz"}

	page := e.Do(http.MethodGet, "/", "", nil, "Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8").Expect(200)
	if ct := page.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("GET / for a browser: Content-Type %q", ct)
	}
	for _, href := range want {
		if !strings.Contains(string(page.Body), `href="`+href+`"`) {
			t.Errorf("the HTML index does not link %s:\n%s", href, page.Body)
		}
	}

	api := e.Do(http.MethodGet, "/", "", nil, "Accept", "application/json").Expect(200)
	var index struct {
		Links []struct{ Rel, Href string }
	}
	if err := json.Unmarshal(api.Body, &index); err != nil {
		t.Fatalf("GET / for an API client: %v: %s", err, api.Body)
	}
	hrefs := map[string]bool{}
	for _, l := range index.Links {
		hrefs[l.Href] = true
	}
	for _, href := range want {
		if !hrefs[href] {
			t.Errorf("the JSON index does not link %s: %s", href, api.Body)
		}
	}
	for _, href := range []string{"/dashboard", "/docs", "/openapi.json", "/healthz", "/readyz"} {
		e.Do(http.MethodGet, href, "", nil).Expect(200)
	}
	linked := map[string]bool{}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(string(page.Body), -1) {
		linked[m[1]] = true
	}
	for href := range hrefs {
		linked[href] = true
	}
	for href := range linked {
		if strings.HasPrefix(href, "data:") {
			continue // the inline favicon
		}
		if r := e.Do(http.MethodGet, href, "", nil); r.Status == http.StatusNotFound {
			t.Errorf("GET / links %s, which answers 404", href)
		}
	}
	if !strings.Contains(string(page.Body), "<code>/v1/merchant/public</code>") || !strings.Contains(string(api.Body), `"rest_base_path":"/v1/merchant/public"`) {
		t.Errorf("GET / does not tell the REST base path:\n%s\n%s", page.Body, api.Body)
	}
	// Only the exact path is the index: anything else is still the JSON 404.
	if r := e.Do(http.MethodGet, "/nothing-here", "", nil); r.Status != 404 || r.Code() != "NOT_FOUND" {
		t.Errorf("GET /nothing-here: %d %s", r.Status, r.Body)
	}
}

// TestOpenAPIServed: /openapi.json is the OpenAPI 3.1 description, as JSON,
// of the paths under the REST prefix; /docs is the page that renders it,
// with a policy that lets it load nothing from another origin.
func TestOpenAPIServed(t *testing.T) {
	servertest.Each(t, testOpenAPIServed)
}

func testOpenAPIServed(t *testing.T, e *servertest.Env) {
	r := e.Do(http.MethodGet, "/openapi.json", "", nil).Expect(200)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var doc struct {
		OpenAPI string
		Servers []struct{ URL string }
		Paths   map[string]any
		Info    struct{ Title string }
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") || len(doc.Servers) != 1 || doc.Servers[0].URL != "/v1/merchant/public" ||
		doc.Paths["/transactions/withdraw"] == nil || doc.Info.Title == "" {
		t.Errorf("document: openapi %q, servers %v, %d paths, title %q", doc.OpenAPI, doc.Servers, len(doc.Paths), doc.Info.Title)
	}

	page := e.Do(http.MethodGet, "/docs", "", nil).Expect(200)
	csp := page.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("/docs Content-Security-Policy %q", csp)
	}
	if !strings.Contains(string(page.Body), `src="/docs/redoc.standalone.js"`) {
		t.Errorf("/docs does not load the bundle:\n%s", page.Body)
	}
	js := e.Do(http.MethodGet, "/docs/redoc.standalone.js", "", nil).Expect(200)
	if ct := js.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") || len(js.Body) < 100_000 {
		t.Errorf("bundle: %q, %d bytes", ct, len(js.Body))
	}
	e.Do(http.MethodGet, "/docs/init.js", "", nil).Expect(200)
	e.Do(http.MethodGet, "/docs/nothing.js", "", nil).Expect(404)
	e.Do(http.MethodPost, "/openapi.json", "", "{}").Expect(405)
}
