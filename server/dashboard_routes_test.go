package server_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
	"merchantpay/web/dashboard"
)

// The dashboard's routes over plain HTTP: the page at /dashboard (and
// /dashboard/) with its policy, naming no other origin; its script and
// stylesheet with their types, a year's caching when asked with the
// page's version, gzip; the JSON error envelope for an unknown asset or a
// wrong method. No route needs a key: the page asks for one. The routes
// meet no database feature: SQLite only.
func TestDashboardRoutes(t *testing.T) {
	e := servertest.New(t, testdb.MigratedSQLiteURL(t))
	var version string
	for _, p := range []string{"/dashboard", "/dashboard/"} {
		page := e.Do("GET", p, "", nil).Expect(200)
		if page.Header.Get("Content-Type") != "text/html; charset=utf-8" || page.Header.Get("Content-Security-Policy") != dashboard.Policy ||
			page.Header.Get("Cache-Control") != "no-cache" || page.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: the page's headers %v", p, page.Header)
		}
		for _, other := range []string{`"https://`, `"http://`, `"//`, "<script>", "<style", " style="} {
			if bytes.Contains(page.Body, []byte(other)) {
				t.Errorf("%s names another origin or has inline code (%s): %s", p, other, page.Body)
			}
		}
		m := regexp.MustCompile(`src="/dashboard/index\.js\?(v=[0-9a-f]+)"`).FindSubmatch(page.Body)
		if m == nil {
			t.Fatalf("%s: no versioned script in the page: %s", p, page.Body)
		}
		version = string(m[1])
	}
	if strings.Contains(dashboard.Policy, "unsafe-inline") || strings.Contains(dashboard.Policy, "http") {
		t.Errorf("the policy allows inline code or another origin: %s", dashboard.Policy)
	}

	for name, ct := range map[string]string{"index.js": "text/javascript; charset=utf-8", "index.css": "text/css; charset=utf-8"} {
		r := e.Do("GET", "/dashboard/"+name+"?"+version, "", nil).Expect(200)
		if r.Header.Get("Content-Type") != ct || r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" ||
			r.Header.Get("Content-Security-Policy") != dashboard.Policy || len(r.Body) < 1000 {
			t.Errorf("%s: %v, %d bytes", name, r.Header, len(r.Body))
		}
	}
	plain := e.Do("GET", "/dashboard/index.js", "", nil).Expect(200)
	if plain.Header.Get("Cache-Control") != "no-cache" || plain.Header.Get("ETag") == "" {
		t.Errorf("index.js without a version: %v", plain.Header)
	}
	e.Do("GET", "/dashboard/index.js", "", nil, "If-None-Match", plain.Header.Get("ETag")).Expect(304)
	zipped := e.Do("GET", "/dashboard/index.js?"+version, "", nil, "Accept-Encoding", "gzip").Expect(200)
	if zipped.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("index.js with gzip: %v", zipped.Header)
	} else if zr, err := gzip.NewReader(bytes.NewReader(zipped.Body)); err != nil {
		t.Errorf("gzip: %v", err)
	} else if raw, err := io.ReadAll(zr); err != nil || !bytes.Equal(raw, plain.Body) {
		t.Errorf("the gzipped script is not the script (%v)", err)
	}
	if r := e.Do("GET", "/dashboard/index.js", "", nil, "Accept-Encoding", "gzip;q=0"); r.Header.Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0 got %v", r.Header)
	}

	for _, p := range []string{"/dashboard/nope.js", "/dashboard/index.html", "/dashboardx"} {
		if r := e.Do("GET", p, "", nil); r.Status != http.StatusNotFound || r.Code() != "NOT_FOUND" {
			t.Errorf("GET %s: %d %s", p, r.Status, r.Body)
		}
	}
	for _, p := range []string{"/dashboard", "/dashboard/index.js"} {
		if r := e.Do("POST", p, "", "x"); r.Status != http.StatusMethodNotAllowed || r.Code() != "METHOD_NOT_ALLOWED" ||
			r.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("POST %s: %d %v %s", p, r.Status, r.Header, r.Body)
		}
	}
}
