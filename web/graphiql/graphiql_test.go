package graphiql

import (
	"net/http/httptest"
	"testing"
)

func TestWants(t *testing.T) {
	browser := "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	for _, c := range []struct {
		method, target, accept, upgrade string
		want                            bool
	}{
		{"GET", "/graphql", browser, "", true},
		{"HEAD", "/graphql", "TEXT/HTML", "", true},
		{"GET", "/graphql?variables=%7B%7D", browser, "", true},
		{"GET", "/graphql?query=%7B__typename%7D", browser, "", false},
		{"GET", "/graphql", "application/json", "", false},
		{"GET", "/graphql", "", "", false},
		{"POST", "/graphql", browser, "", false},
		{"GET", "/graphql", browser, "websocket", false},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		if c.accept != "" {
			r.Header.Set("Accept", c.accept)
		}
		if c.upgrade != "" {
			r.Header.Set("Upgrade", c.upgrade)
		}
		if got := Wants(r); got != c.want {
			t.Errorf("%s %s Accept %q Upgrade %q: %v, want %v", c.method, c.target, c.accept, c.upgrade, got, c.want)
		}
	}
}
