// Package webhook holds the pure logic of webhook delivery (CONTRACT 6):
// Standard Webhooks signing and verification, the SSRF guard for endpoint
// URLs and for the connections of deliveries (Dialer), the classes a failed
// delivery is reported by, the retry schedule and the table of event names.
//
// The dispatcher, the database and HTTP sending live elsewhere and build on
// this package. Nothing here keeps state between calls.
package webhook
