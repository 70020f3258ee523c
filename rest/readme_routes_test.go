package rest

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// README.md's "What it serves" table names every route of the table in
// rest/ops.go (path parameters may be named otherwise there).
func TestReadmeListsEveryRoute(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "## What it serves")
	if start < 0 {
		t.Fatal(`README.md has no "What it serves" section`)
	}
	section := readme[start:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	params := regexp.MustCompile(`\{[^}/]*\}`)
	listed := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) < 2 {
			continue
		}
		for _, m := range regexp.MustCompile("`([A-Z/]+) ([^`]+)`").FindAllStringSubmatch(cells[0], -1) {
			path, _, _ := strings.Cut(m[2], "?")
			for _, method := range strings.Split(m[1], "/") {
				listed[method+" "+params.ReplaceAllString(path, "{}")] = true
			}
		}
	}
	for _, r := range (&Ops{}).routes() {
		if key := r.Method + " " + params.ReplaceAllString(r.Pattern, "{}"); !listed[key] {
			t.Errorf("README.md's route table lacks %s %s", r.Method, r.Pattern)
		}
	}
}
