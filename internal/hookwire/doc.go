// Package hookwire holds what a webhook is on the wire, without state:
// Standard Webhooks signing and verification, the guard that keeps endpoint
// URLs and the connections of deliveries (Dialer) off non-public addresses,
// the classes a failed delivery is reported by, the retry schedule and the
// table of event names.
//
// The endpoints, the deliveries and the dispatcher that sends them live in
// internal/webhooks and build on this package. Nothing here keeps state
// between calls.
package hookwire
