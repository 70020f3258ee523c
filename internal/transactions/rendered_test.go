package transactions

import (
	"fmt"
	"testing"
)

// The cache keeps at most two generations, and an entry read again stays
// while the ones not read age out.
func TestRenderedCacheGenerations(t *testing.T) {
	c := newRenderedCache(3)
	for i := range 3 {
		c.put(fmt.Sprint(i), renderedEntry{version: int64(i)})
	}
	c.put("3", renderedEntry{version: 3}) // cur full: 0-2 become old
	if n := c.len(); n != 4 {
		t.Fatalf("kept %d, want 4", n)
	}
	if e, ok := c.get("0"); !ok || e.version != 0 { // read again: back in cur
		t.Fatalf("0: %v %v", e, ok)
	}
	c.put("4", renderedEntry{version: 4}) // cur (3, 0, 4) full
	c.put("5", renderedEntry{version: 5}) // old (1, 2) dropped
	for _, w := range []struct {
		ref  string
		kept bool
	}{{"1", false}, {"2", false}, {"0", true}, {"3", true}, {"4", true}, {"5", true}} {
		if _, ok := c.get(w.ref); ok != w.kept {
			t.Errorf("%s kept %v, want %v", w.ref, ok, w.kept)
		}
	}
	// Replacing keeps one entry per reference, the newest.
	c.put("5", renderedEntry{version: 50})
	if e, _ := c.get("5"); e.version != 50 {
		t.Errorf("5: version %d, want 50", e.version)
	}
	if n := c.len(); n > 6 {
		t.Errorf("kept %d, more than two generations", n)
	}
}
