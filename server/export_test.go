package server

// IntrospectionRuns is how many introspection-only operations have been
// executed rather than answered from the cache.
func IntrospectionRuns() int64 { return introspectionRuns.Load() }
