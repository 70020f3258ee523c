package metrics

import (
	"context"
	"strings"
	"testing"
	"time"
)

// What one request costs the metrics: its labels in the context, the
// in-flight gauge, and the counter and histogram it is observed in.
func BenchmarkRequestObserved(b *testing.B) {
	m := New()
	base := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		done := m.Begin()
		ctx, l := WithLabels(base)
		SetRoute(ctx, "POST /v1/merchant/public/transactions/withdraw")
		done()
		route, code := l.Values()
		m.ObserveRequest(route, "POST", 200, code, 3*time.Millisecond)
	}
}

// A method a client makes up is one series ("OTHER"), not one per method;
// a status out of range likewise.
func TestLabelsBounded(t *testing.T) {
	m := New()
	for _, method := range []string{"GET", "BREW", "PROPFIND", "X" + strings.Repeat("Y", 100)} {
		m.ObserveRequest("", method, 999, "", time.Millisecond)
	}
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "http_requests_total" {
			continue
		}
		if n := len(f.Metric); n != 2 {
			t.Errorf("%d series for GET and three made-up methods, want 2 (GET, OTHER)", n)
		}
		for _, s := range f.Metric {
			for _, l := range s.Label {
				if l.GetName() == "status" && l.GetValue() != "other" {
					t.Errorf("status label %q for 999", l.GetValue())
				}
				if l.GetName() == "route" && l.GetValue() != "unmatched" {
					t.Errorf("route label %q for none", l.GetValue())
				}
			}
		}
	}
}
