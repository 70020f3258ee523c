package server

import "context"

// IntrospectionRuns is how many introspection-only operations have been
// executed rather than answered from the cache.
func IntrospectionRuns() int64 { return introspectionRuns.Load() }

// RunLedgerCheck runs the ledger check worker's one pass and counts it.
func RunLedgerCheck(a *App, ctx context.Context) string {
	r := a.runLedgerCheck(ctx)
	a.Metrics.LedgerChecked(r)
	return r
}
