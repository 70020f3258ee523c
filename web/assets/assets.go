// Package assets serves a web page and the files it loads from a bundle
// embedded in the binary: the page is never cached, each file carries an
// ETag, may be cached for a year when asked with the bundle's version
// (?v=), and goes gzipped to a client that takes gzip. Every answer
// carries the bundle's Content-Security-Policy. GraphiQL, the dashboard
// and the REST reference are served by it.
package assets

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"merchantpay/internal/apperr"
)

// PageName is the file of a bundle that is its page; every "{{version}}"
// in it becomes the bundle's version, so that it can name its files with
// ?v={{version}}.
const PageName = "index.html"

// Bundle is one page and its files.
type Bundle struct {
	// What names the bundle in errors ("dashboard", "GraphiQL").
	what    string
	prefix  string
	policy  string
	page    []byte
	files   map[string]*file
	version string
}

// file is one file of a bundle, with its gzip form made on first demand.
type file struct {
	body        []byte
	contentType string
	zipOnce     sync.Once
	zipped      []byte
}

// Options say where a bundle's files are and how they are served.
type Options struct {
	// What names the bundle in errors ("dashboard", "GraphiQL").
	What string
	// Dirs are the folders of the embedded file system whose files make
	// the bundle, each named by its path below its folder; one of them
	// holds PageName. A name in two folders is an error.
	Dirs []string
	// Prefix is the path under which the files are served ("/dashboard/").
	Prefix string
	// Policy is the Content-Security-Policy of every answer.
	Policy string
}

// Load reads a bundle from fsys. Its version is a digest of every file's
// name and content, so it changes with any of them.
func Load(fsys fs.FS, o Options) (*Bundle, error) {
	b := &Bundle{what: o.What, prefix: o.Prefix, policy: o.Policy, files: map[string]*file{}}
	bodies := map[string][]byte{}
	for _, dir := range o.Dirs {
		err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			name := strings.TrimPrefix(p, dir+"/")
			if _, dup := bodies[name]; dup {
				return fmt.Errorf("%s is in two of the folders %v", name, o.Dirs)
			}
			bodies[name], err = fs.ReadFile(fsys, p)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.What, err)
		}
	}
	names := make([]string, 0, len(bodies))
	for name := range bodies {
		names = append(names, name)
	}
	sort.Strings(names)
	sum := sha256.New()
	for _, name := range names {
		sum.Write([]byte(name))
		sum.Write(bodies[name])
	}
	b.version = hex.EncodeToString(sum.Sum(nil))[:16]
	if _, ok := bodies[PageName]; !ok {
		return nil, fmt.Errorf("%s: no %s in %v", o.What, PageName, o.Dirs)
	}
	for name, body := range bodies {
		if name == PageName {
			b.page = bytes.ReplaceAll(body, []byte("{{version}}"), []byte(b.version))
			continue
		}
		b.files[name] = &file{body: body, contentType: contentType(name)}
	}
	return b, nil
}

// MustLoad is Load for a bundle embedded in the binary, which is complete
// unless its build was not run: it panics, saying which build to run.
func MustLoad(fsys fs.FS, o Options, build string) *Bundle {
	b, err := Load(fsys, o)
	if err != nil {
		panic(fmt.Sprintf("%v: the embedded bundle is incomplete; run %s", err, build))
	}
	return b
}

// Version is the digest the page names its files with.
func (b *Bundle) Version() string { return b.version }

// Policy is the Content-Security-Policy of every answer.
func (b *Bundle) Policy() string { return b.policy }

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".txt", "":
		// Licences and notices (LICENSE has no extension).
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

func (b *Bundle) secure(h http.Header) {
	h.Set("Content-Security-Policy", b.policy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// getOnly returns a MethodNotAllowed error (with Allow set) saying
// message for a method other than GET or HEAD.
func getOnly(w http.ResponseWriter, r *http.Request, message string) error {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	w.Header().Set("Allow", "GET, HEAD")
	return apperr.New(apperr.MethodNotAllowed, "%s", message)
}

// ServePage writes the page for a GET or HEAD. It names the files with
// the bundle's version, so the page itself is never cached and the files
// always are. Another method gets a MethodNotAllowed error (with Allow
// set), which the caller answers as any other error.
func (b *Bundle) ServePage(w http.ResponseWriter, r *http.Request) error {
	if err := getOnly(w, r, "the "+b.what+" page takes GET requests"); err != nil {
		return err
	}
	h := w.Header()
	b.secure(h)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b.page))
	return nil
}

// ServeFile writes the file named by the path under the prefix. Asked
// with the current version (?v=), it may be cached for a year; otherwise
// it is revalidated by its ETag. It writes nothing and returns a NotFound
// error for a name that is none (the page among them: it has its own
// address), MethodNotAllowed (with Allow set) for a method other than GET
// or HEAD: the caller answers those as any other error.
func (b *Bundle) ServeFile(w http.ResponseWriter, r *http.Request) error {
	f := b.files[strings.TrimPrefix(r.URL.Path, b.prefix)]
	if f == nil || !strings.HasPrefix(r.URL.Path, b.prefix) {
		return apperr.New(apperr.NotFound, "no %s asset at %s", b.what, r.URL.Path)
	}
	if err := getOnly(w, r, "the "+b.what+" assets take GET requests"); err != nil {
		return err
	}
	h := w.Header()
	b.secure(h)
	h.Set("Content-Type", f.contentType)
	h.Set("Vary", "Accept-Encoding")
	if r.URL.Query().Get("v") == b.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	body, etag := f.body, `"`+b.version+`"`
	if acceptsGzip(r) {
		body, etag = f.gzipped(), `"`+b.version+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	return nil
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip
// (gzip;q=0, or 0.0..., refuses it).
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
				continue
			}
			q, isQ := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
			if v, err := strconv.ParseFloat(q, 64); isQ && err == nil && v == 0 {
				return false
			}
			return true
		}
	}
	return false
}

func (f *file) gzipped() []byte {
	f.zipOnce.Do(func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
		_, _ = zw.Write(f.body)
		_ = zw.Close()
		f.zipped = buf.Bytes()
	})
	return f.zipped
}
