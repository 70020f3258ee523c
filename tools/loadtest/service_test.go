package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The harness reads the service's gauges from its /metrics text: the
// unlabelled series of each name asked for, and an error for a name the
// service does not publish rather than a zero.
func TestMetricsReadsGauges(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `# HELP graphql_subscribers GraphQL subscriptions open on this instance.
# TYPE graphql_subscribers gauge
graphql_subscribers 10000
graphql_subscribers_total{kind="x"} 7
go_goroutines 10042
go_memstats_heap_inuse_bytes 1.2345678e+08
`)
	}))
	defer srv.Close()
	s := &service{ctl: srv.URL}
	m, err := s.metrics("graphql_subscribers", "go_goroutines", "go_memstats_heap_inuse_bytes")
	if err != nil {
		t.Fatal(err)
	}
	if m["graphql_subscribers"] != 10000 || m["go_goroutines"] != 10042 || m["go_memstats_heap_inuse_bytes"] != 123456780 {
		t.Errorf("got %v", m)
	}
	if n, err := s.subscribers(); err != nil || n != 10000 {
		t.Errorf("subscribers: %d, %v", n, err)
	}
	if _, err := s.metrics("go_goroutines", "go_memstats_stack_inuse_bytes"); err == nil {
		t.Error("no error for a gauge the service does not publish")
	}
}
