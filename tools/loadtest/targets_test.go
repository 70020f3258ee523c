package main

import (
	"strings"
	"testing"
	"time"
)

// Each target is met only when every one of its conditions holds, and a
// phase that did not run is reported as such, never as met.
func TestJudgeTargets(t *testing.T) {
	good := func(tput, yard float64, p99 time.Duration) measured {
		return measured{phase: phase{OK: 100, Throughput: tput, P99: p99}, ran: true, yardTPS: yard}
	}
	all := httpResults{
		keyed:      good(600, 1000, 20*time.Millisecond),
		keyless:    good(500, 1000, 25*time.Millisecond),
		gqlKeyed:   good(540, 1000, 20*time.Millisecond),
		gqlKeyless: good(450, 1000, 20*time.Millisecond),
		get:        good(2500, 10000, time.Millisecond),
	}
	verdicts := func(r httpResults) string {
		var v []string
		for _, t := range judge(r) {
			v = append(v, t.verdict())
		}
		return strings.Join(v, ",")
	}
	cases := []struct {
		name   string
		change func(*httpResults)
		want   string
	}{
		{"all met at the bounds", func(*httpResults) {}, "met,met,met,met"},
		{"keyed ratio below", func(r *httpResults) { r.keyed.Throughput = 499 }, "NOT MET,met,met,met"},
		{"keyless p99 above", func(r *httpResults) { r.keyless.P99 = 25*time.Millisecond + 1 }, "met,NOT MET,met,met"},
		{"keyed errors", func(r *httpResults) { r.keyed.Errors = 1 }, "NOT MET,met,met,met"},
		{"nothing succeeded", func(r *httpResults) { r.keyless = measured{ran: true, yardTPS: 1000} }, "met,NOT MET,met,NOT MET"},
		{"get ratio below", func(r *httpResults) { r.get.Throughput = 2499 }, "met,met,NOT MET,met"},
		{"get errors", func(r *httpResults) { r.get.Errors = 3 }, "met,met,NOT MET,met"},
		{"graphql keyless below", func(r *httpResults) { r.gqlKeyless.Throughput = 449 }, "met,met,met,NOT MET"},
		{"graphql errors", func(r *httpResults) { r.gqlKeyed.Errors = 1 }, "met,met,met,NOT MET"},
		{"graphql keyed alone", func(r *httpResults) { r.gqlKeyless, r.keyless = measured{}, measured{} }, "met,not run,met,met"},
		{"nothing ran", func(r *httpResults) { *r = httpResults{} }, "not run,not run,not run,not run"},
		{"no REST to compare with", func(r *httpResults) { r.keyed, r.keyless = measured{}, measured{} }, "not run,not run,met,not run"},
	}
	for _, c := range cases {
		r := all
		c.change(&r)
		if got := verdicts(r); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
