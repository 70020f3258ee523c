package assets

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"merchantpay/internal/apperr"
)

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"gzip":                  true,
		"br, gzip;q=0.5":        true,
		"deflate, GZIP":         true,
		"gzip;q=0":              false,
		"gzip;q=0.000":          false,
		"gzip;q=0.001":          true,
		"gzip; q=0, br":         false,
		"identity":              false,
		"":                      false,
		"x-gzip-not-really, br": false,
	} {
		r := httptest.NewRequest("GET", "/x/index.js", nil)
		if header != "" {
			r.Header.Set("Accept-Encoding", header)
		}
		if got := acceptsGzip(r); got != want {
			t.Errorf("Accept-Encoding %q: %v, want %v", header, got, want)
		}
	}
}

func testBundle(t *testing.T) *Bundle {
	t.Helper()
	b, err := Load(fstest.MapFS{
		"dist/index.html":  {Data: []byte(`<script src="/x/app.js?v={{version}}"></script>`)},
		"dist/app.js":      {Data: []byte(strings.Repeat("console.log(1);\n", 100))},
		"dist/LICENSE":     {Data: []byte("MIT")},
		"page/sub/init.js": {Data: []byte("init()")},
	}, Options{What: "test", Dirs: []string{"dist", "page"}, Prefix: "/x/", Policy: "default-src 'none'"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func serve(t *testing.T, h func(http.ResponseWriter, *http.Request) error, method, target string, header ...string) (*httptest.ResponseRecorder, error) {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	return w, h(w, r)
}

// The page names its files with the version, is never cached and carries
// the policy; files of every folder are served with their types, cached
// for a year only when asked with the version, revalidated by ETag
// otherwise, gzipped on demand; the page's own name, an unknown name and
// another method are errors the caller answers.
func TestBundle(t *testing.T) {
	b := testBundle(t)
	page, err := serve(t, b.ServePage, "GET", "/x")
	if err != nil || page.Code != 200 || page.Body.String() != `<script src="/x/app.js?v=`+b.Version()+`"></script>` ||
		page.Header().Get("Cache-Control") != "no-cache" || page.Header().Get("Content-Security-Policy") != "default-src 'none'" ||
		page.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("page: %v %d %v %q", err, page.Code, page.Header(), page.Body)
	}
	if _, err := serve(t, b.ServePage, "POST", "/x"); !apperr.Is(err, apperr.MethodNotAllowed) {
		t.Errorf("POST page: %v", err)
	}

	js, err := serve(t, b.ServeFile, "GET", "/x/app.js?v="+b.Version())
	if err != nil || js.Code != 200 || js.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" ||
		js.Header().Get("Content-Type") != "text/javascript; charset=utf-8" || js.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("app.js: %v %d %v", err, js.Code, js.Header())
	}
	plain, _ := serve(t, b.ServeFile, "GET", "/x/app.js?v=old")
	if plain.Header().Get("Cache-Control") != "no-cache" || plain.Header().Get("ETag") == "" {
		t.Errorf("app.js with another version: %v", plain.Header())
	}
	if again, _ := serve(t, b.ServeFile, "GET", "/x/app.js", "If-None-Match", plain.Header().Get("ETag")); again.Code != 304 {
		t.Errorf("revalidated app.js: %d", again.Code)
	}
	zipped, _ := serve(t, b.ServeFile, "GET", "/x/app.js", "Accept-Encoding", "gzip")
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil || zipped.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip: %v %v", err, zipped.Header())
	}
	if raw, _ := io.ReadAll(zr); !bytes.Equal(raw, plain.Body.Bytes()) || zipped.Header().Get("ETag") == plain.Header().Get("ETag") {
		t.Errorf("the gzipped file is not the file, or shares its ETag")
	}
	for target, ct := range map[string]string{"/x/LICENSE": "text/plain; charset=utf-8", "/x/sub/init.js": "text/javascript; charset=utf-8"} {
		if w, err := serve(t, b.ServeFile, "HEAD", target); err != nil || w.Code != 200 || w.Header().Get("Content-Type") != ct {
			t.Errorf("%s: %v %d %v", target, err, w.Code, w.Header())
		}
	}
	for _, target := range []string{"/x/index.html", "/x/nope.js", "/y/app.js", "/x/"} {
		if w, err := serve(t, b.ServeFile, "GET", target); !apperr.Is(err, apperr.NotFound) || w.Body.Len() != 0 {
			t.Errorf("%s: %v, %d bytes written", target, err, w.Body.Len())
		}
	}
	if w, err := serve(t, b.ServeFile, "DELETE", "/x/app.js"); !apperr.Is(err, apperr.MethodNotAllowed) || w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("DELETE app.js: %v %v", err, w.Header())
	}
}

// The version follows every file's content, and a bundle without its
// page or with a name in two folders is refused.
func TestLoad(t *testing.T) {
	o := Options{What: "test", Dirs: []string{"a", "b"}, Prefix: "/x/"}
	one, err := Load(fstest.MapFS{"a/index.html": {Data: []byte("p")}, "b/f.js": {Data: []byte("1")}}, o)
	if err != nil {
		t.Fatal(err)
	}
	two, err := Load(fstest.MapFS{"a/index.html": {Data: []byte("p")}, "b/f.js": {Data: []byte("2")}}, o)
	if empty, err := Load(fstest.MapFS{"a/index.html": {}}, Options{What: "test", Dirs: []string{"a"}, Prefix: "/x/"}); err != nil || empty.ServePage(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil)) != nil {
		t.Errorf("a bundle with an empty page: %v", err)
	}
	if err != nil || one.Version() == two.Version() {
		t.Errorf("versions %q and %q (%v)", one.Version(), two.Version(), err)
	}
	if _, err := Load(fstest.MapFS{"a/f.js": {Data: []byte("1")}, "b/page.html": {Data: []byte("p")}}, o); err == nil {
		t.Error("a bundle without its page loaded")
	}
	if _, err := Load(fstest.MapFS{"a/index.html": {Data: []byte("p")}, "a/f.js": {Data: []byte("1")}, "b/f.js": {Data: []byte("1")}}, o); err == nil {
		t.Error("a name in two folders loaded")
	}
}
