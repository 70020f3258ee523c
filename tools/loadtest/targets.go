package main

import (
	"fmt"
	"strings"
	"time"
)

// The targets of the http suite.
const (
	withdrawMinRatio = 0.50                  // of pgbench TPC-B-like
	withdrawMaxP99   = 25 * time.Millisecond // each withdrawal shape
	getMinRatio      = 0.25                  // of pgbench select-only
	graphqlMinRatio  = 0.90                  // of the same REST withdrawal
)

// target is one line of the final table.
type target struct {
	name, want, got string
	ran, met        bool
}

func (t target) verdict() string {
	switch {
	case !t.ran:
		return "not run"
	case t.met:
		return "met"
	}
	return "NOT MET"
}

// judge sets each target against the figures of the phases that ran.
func judge(r httpResults) []target {
	withdraw := func(name string, m measured) target {
		t := target{name: name, ran: m.ran,
			want: fmt.Sprintf(">= %.2f of TPC-B-like, p99 <= %.0f ms, no errors", withdrawMinRatio, ms(withdrawMaxP99))}
		if m.ran {
			t.got = fmt.Sprintf("%.2f (%.0f/s, TPC-B %.0f tps), p99 %.2f ms, %d errors", m.ratio(), m.Throughput, m.yardTPS, ms(m.P99), m.Errors)
			t.met = m.OK > 0 && m.ratio() >= withdrawMinRatio && m.P99 <= withdrawMaxP99 && m.Errors == 0
		}
		return t
	}
	out := []target{
		withdraw("REST withdrawals, Idempotency-Key", r.keyed),
		withdraw("REST withdrawals, no key", r.keyless),
	}
	get := target{name: "GET /transactions/{ref}", ran: r.get.ran, want: fmt.Sprintf(">= %.2f of select-only, no errors", getMinRatio)}
	if r.get.ran {
		get.got = fmt.Sprintf("%.2f (%.0f/s, select-only %.0f tps), %d errors", r.get.ratio(), r.get.Throughput, r.get.yardTPS, r.get.Errors)
		get.met = r.get.OK > 0 && r.get.ratio() >= getMinRatio && r.get.Errors == 0
	}
	out = append(out, get)
	gql := target{name: "GraphQL withdrawals", want: fmt.Sprintf(">= %.2f of REST, no errors", graphqlMinRatio), met: true}
	var got []string
	for _, pair := range []struct {
		label     string
		gql, rest measured
	}{{"keyed", r.gqlKeyed, r.keyed}, {"no key", r.gqlKeyless, r.keyless}} {
		if !pair.gql.ran || !pair.rest.ran {
			continue
		}
		gql.ran = true
		ratio := 0.0
		if pair.rest.Throughput > 0 {
			ratio = pair.gql.Throughput / pair.rest.Throughput
		}
		got = append(got, fmt.Sprintf("%s %.2f (%.0f/s vs %.0f/s), %d errors", pair.label, ratio, pair.gql.Throughput, pair.rest.Throughput, pair.gql.Errors))
		gql.met = gql.met && pair.gql.OK > 0 && ratio >= graphqlMinRatio && pair.gql.Errors == 0
	}
	gql.got = strings.Join(got, "; ")
	gql.met = gql.met && gql.ran
	return append(out, gql)
}

// printTargets prints the table of the targets, met or not.
func printTargets(o options, r httpResults) {
	fmt.Printf("\ntargets (%d clients, one run; pgbench -i -s %d, then -M prepared -c %d -j %d, each ratio against the mean of its runs just before and after the phase):\n",
		o.clients, o.pgbenchScale, o.clients, min(2, o.clients))
	for _, t := range judge(r) {
		fmt.Printf("  %-34s  %-50s  %-8s  %s\n", t.name, t.want, t.verdict(), t.got)
	}
}
