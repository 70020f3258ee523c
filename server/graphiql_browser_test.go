package server_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
	"merchantpay/web/graphiql"
)

// GraphiQL in headless Chromium, with every other origin refused: it
// shows the "paste your key" state without asking the service anything,
// loads the schema's docs once the key is in the headers editor, runs
// { me { id mode } }, and streams a subscription's event over the same
// origin's WebSocket; the browser reports no Content-Security-Policy
// violation. Screenshots go to the test's artifact directory (kept with
// `go test -artifacts`). It needs no database feature: SQLite only.
func TestGraphiQLInBrowser(t *testing.T) {
	dir := browserDir(t)
	e := servertest.New(t, testdb.MigratedSQLiteURL(t))
	m := e.Merchant("GraphiQL Shop")
	acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
	shot := filepath.Join(t.ArtifactDir(), "graphiql.png")

	out := runBrowser(t, dir, "graphiql.mjs", map[string]any{
		"url":         e.URL + "/graphql",
		"key":         m.TestSecret,
		"depositUrl":  e.URL + "/v1/merchant/public/sandbox/deposits/bank-transfer",
		"depositBody": map[string]any{"account_number": acc, "amount": 5000},
		"screenshot":  shot,
	})
	var got struct {
		Foreign, Violations, PageErrors, Requests, Sockets []string
		CSP                                                *string
		NoKey, HeadersBefore, DocsText                     string
		QueryResult, EventResult                           string
		PostsWithoutKey                                    int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("browser output %q: %v", out, err)
	}
	t.Logf("screenshots: %s; requests: %v; sockets: %v", shot, got.Requests, got.Sockets)
	if len(got.Foreign) > 0 {
		t.Errorf("GraphiQL asked other origins: %v", got.Foreign)
	}
	if len(got.Violations) > 0 {
		t.Errorf("Content-Security-Policy violations: %v", got.Violations)
	}
	if len(got.PageErrors) > 0 {
		t.Errorf("uncaught errors in the page: %v", got.PageErrors)
	}
	if got.CSP == nil || *got.CSP != graphiql.Policy {
		t.Errorf("the page's policy: %v", got.CSP)
	}
	if !strings.Contains(got.NoKey, "Paste your secret key into the X-API-KEY header") || got.PostsWithoutKey != 0 {
		t.Errorf("without a key: banner %q, %d requests to /graphql", got.NoKey, got.PostsWithoutKey)
	}
	if !regexp.MustCompile(`"X-API-KEY":\s*""`).MatchString(got.HeadersBefore) {
		t.Errorf("the headers editor started with %q", got.HeadersBefore)
	}
	if !strings.Contains(got.DocsText, "Query") {
		t.Errorf("the docs: %q", got.DocsText)
	}
	// The result pane wraps long lines: the id is compared without spaces.
	if !strings.Contains(strings.Join(strings.Fields(got.QueryResult), ""), m.ID) || !regexp.MustCompile(`"mode":\s*"TEST"`).MatchString(got.QueryResult) {
		t.Errorf("the result of { me { id mode } }: %q", got.QueryResult)
	}
	if !regexp.MustCompile(`"event":\s*"deposit\.`).MatchString(got.EventResult) {
		t.Errorf("the subscription showed %q", got.EventResult)
	}
	if len(got.Sockets) == 0 {
		t.Errorf("no WebSocket was opened for the subscription")
	}
	for _, name := range []string{"graphiql.png", "graphiql-subscription.png"} {
		if st, err := os.Stat(filepath.Join(t.ArtifactDir(), name)); err != nil || st.Size() == 0 {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
}

// The routes over plain HTTP: only a browser's GET of /graphql gets the
// page, with its policy; the assets have their types, a year's caching
// when asked with the page's version, gzip, and the JSON error envelope
// for an unknown name or a wrong method. GraphiQL's introspection query
// passes with a secret key of either mode.
func TestGraphiQLRoutes(t *testing.T) {
	introspection, err := os.ReadFile("testdata/graphiql-introspection.graphql")
	if err != nil {
		t.Fatal(err)
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("GraphiQL Routes")
		html := "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
		page := e.Do("GET", "/graphql", "", nil, "Accept", html).Expect(200)
		if ct := page.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" ||
			page.Header.Get("Content-Security-Policy") != graphiql.Policy || page.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("the page's headers: %v", page.Header)
		}
		for _, p := range []string{`"https://`, `"http://`, `"//`} {
			if bytes.Contains(page.Body, []byte(p)) {
				t.Errorf("the page names another origin (%s): %s", p, page.Body)
			}
		}
		script := regexp.MustCompile(`src="(/graphiql/index\.js\?v=[0-9a-f]+)"`).FindSubmatch(page.Body)
		if script == nil {
			t.Fatalf("no versioned script in the page: %s", page.Body)
		}
		version := strings.SplitN(string(script[1]), "?", 2)[1]

		// Not the page: another method, a GraphQL GET, an API client.
		for _, r := range []*servertest.Resp{
			e.Do("POST", "/graphql", m.TestSecret, map[string]any{"query": "{ me { id } }"}, "Accept", html),
			e.Do("GET", "/graphql?query=%7B__typename%7D", m.TestSecret, nil, "Accept", html),
			e.Do("GET", "/graphql", m.TestSecret, nil, "Accept", "application/json"),
		} {
			if strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
				t.Errorf("a GraphQL request got the page: %d %v", r.Status, r.Header)
			}
		}

		for name, ct := range map[string]string{
			"index.js": "text/javascript; charset=utf-8", "index.css": "text/css; charset=utf-8",
			"editor.worker.js": "text/javascript; charset=utf-8", "json.worker.js": "text/javascript; charset=utf-8",
			"graphql.worker.js": "text/javascript; charset=utf-8",
		} {
			r := e.Do("GET", "/graphiql/"+name+"?"+version, "", nil).Expect(200)
			if r.Header.Get("Content-Type") != ct || r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" ||
				r.Header.Get("X-Content-Type-Options") != "nosniff" || len(r.Body) < 1000 {
				t.Errorf("%s: %v, %d bytes", name, r.Header, len(r.Body))
			}
		}
		// Without the version, it is revalidated; its ETag answers 304.
		plain := e.Do("GET", "/graphiql/index.css", "", nil).Expect(200)
		if plain.Header.Get("Cache-Control") != "no-cache" || plain.Header.Get("ETag") == "" {
			t.Errorf("index.css without a version: %v", plain.Header)
		}
		e.Do("GET", "/graphiql/index.css", "", nil, "If-None-Match", plain.Header.Get("ETag")).Expect(304)
		zipped := e.Do("GET", "/graphiql/index.css?"+version, "", nil, "Accept-Encoding", "gzip").Expect(200)
		if zipped.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("index.css with gzip: %v", zipped.Header)
		} else if zr, err := gzip.NewReader(bytes.NewReader(zipped.Body)); err != nil {
			t.Errorf("gzip: %v", err)
		} else if raw, err := io.ReadAll(zr); err != nil || !bytes.Equal(raw, plain.Body) {
			t.Errorf("the gzipped stylesheet is not the stylesheet (%v)", err)
		}

		if r := e.Do("GET", "/graphiql/nope.js", "", nil); r.Status != http.StatusNotFound || r.Code() != "NOT_FOUND" {
			t.Errorf("an unknown asset: %d %s", r.Status, r.Body)
		}
		if r := e.Do("GET", "/graphiql/index.html", "", nil); r.Status != http.StatusNotFound {
			t.Errorf("the page's template as an asset: %d", r.Status)
		}
		if r := e.Do("POST", "/graphiql/index.js", "", "x"); r.Status != http.StatusMethodNotAllowed ||
			r.Code() != "METHOD_NOT_ALLOWED" || r.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("POST to an asset: %d %v %s", r.Status, r.Header, r.Body)
		}

		for _, key := range []string{m.TestSecret, m.LiveSecret} {
			types, _ := e.GQL(key, string(introspection), nil).GQLData()["__schema"].(map[string]any)["types"].([]any)
			if len(types) < 50 {
				t.Errorf("GraphiQL's introspection with %s...: %d types", key[:10], len(types))
			}
		}
	})
}
