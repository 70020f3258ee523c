// Package ready lets a stream's producer tell its consumer that an item is
// waiting, so the consumer needs no goroutine parked on the stream while it
// is idle.
//
// A transport that serves many mostly idle streams (the GraphQL WebSocket
// transport) puts a callback into the context of each operation with With.
// A producer that supports it (the event broker) takes the callback with
// Take when the stream is opened and calls it once after every item it
// puts into the stream's channel and once after closing the channel, never
// blocking. The consumer then receives exactly once per call, so its
// receive never waits. A consumer whose callback was not taken reads the
// channel the ordinary way, from a goroutine of its own.
package ready

import (
	"context"
	"sync/atomic"
)

type key struct{}

type hook struct {
	fn    func()
	taken atomic.Bool
}

// Hook is what With returns to the consumer: Taken reports whether a
// producer took the callback.
type Hook struct{ h *hook }

// With returns ctx carrying fn for the producer of the stream opened with
// it. fn must not block.
func With(ctx context.Context, fn func()) (context.Context, Hook) {
	h := &hook{fn: fn}
	return context.WithValue(ctx, key{}, h), Hook{h}
}

// Taken reports whether a producer took the callback: it then calls it for
// every item and for the close.
func (h Hook) Taken() bool { return h.h != nil && h.h.taken.Load() }

// Take returns ctx's callback, or nil when ctx has none or it was taken
// already (one stream per callback).
func Take(ctx context.Context) func() {
	h, _ := ctx.Value(key{}).(*hook)
	if h == nil || !h.taken.CompareAndSwap(false, true) {
		return nil
	}
	return h.fn
}
