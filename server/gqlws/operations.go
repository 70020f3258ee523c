package gqlws

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// op is one operation (subscribe / start).
type op struct {
	id     string
	ctx    context.Context
	cancel context.CancelFunc
	// Fields below are guarded by conn.mu.
	// responses, once set, is driven by notify: one call per notification.
	responses graphql.ResponseHandler
	pending   int  // notifications not yet consumed
	queued    bool // in conn.runq
	done      bool
	// stopped: the client ended it; graphql-transport-ws then expects no
	// complete from the server.
	stopped bool
}

// guard runs fn, turning a panic into an error message for o.
func (c *conn) guard(o *op, fn func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log().Error("panic in a GraphQL WebSocket operation", "panic", p, "operation", o.id)
			err = fmt.Errorf("internal error")
			c.failed(o, errorsPayload(&gqlerror.Error{Message: "internal error"}))
		}
	}()
	fn()
	return nil
}

// drive sends every response of o until it ends.
func (c *conn) drive(o *op, responses graphql.ResponseHandler) {
	for {
		var resp *graphql.Response
		if c.guard(o, func() { resp = responses(o.ctx) }) != nil {
			return
		}
		if resp == nil {
			c.finish(o)
			return
		}
		c.next(o, resp)
	}
}

// notify is o's ready callback: its stream holds one more item or ended.
// It runs under the broker's lock, so it only queues.
func (c *conn) notify(o *op) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o.done {
		return
	}
	o.pending++
	c.scheduleLocked(o)
}

func (c *conn) scheduleLocked(o *op) {
	if o.responses == nil || o.pending == 0 || o.queued || o.done || c.closed {
		return
	}
	o.queued = true
	c.runq = append(c.runq, o)
	if !c.draining {
		c.draining = true
		go c.drain()
	}
}

// drain writes what the queued operations' streams hold, then ends.
func (c *conn) drain() {
	for {
		c.mu.Lock()
		if len(c.runq) == 0 || c.closed {
			c.runq, c.draining = nil, false
			c.mu.Unlock()
			return
		}
		o := c.runq[0]
		c.runq = c.runq[1:]
		n := o.pending
		o.pending, o.queued = 0, false
		c.mu.Unlock()
		for ; n > 0; n-- {
			// One receive per notification: it does not wait.
			var resp *graphql.Response
			if c.guard(o, func() { resp = o.responses(o.ctx) }) != nil {
				break
			}
			if resp == nil {
				c.finish(o)
				break
			}
			c.next(o, resp)
		}
	}
}

// stop ends o at the client's request.
func (c *conn) stop(id string) {
	c.mu.Lock()
	o := c.ops[id]
	if o != nil {
		o.stopped = true
		delete(c.ops, id)
	}
	c.mu.Unlock()
	if o != nil {
		// Its stream closes, and finish runs from drain or drive.
		o.cancel()
	}
}

// end marks o done once; it reports whether this call did.
func (c *conn) end(o *op) (first, stopped bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o.done {
		return false, o.stopped
	}
	o.done = true
	if c.ops[o.id] == o {
		delete(c.ops, o.id)
	}
	return true, o.stopped
}

// finish ends o normally: complete, unless the client ended it (the legacy
// protocol answers stop with complete).
func (c *conn) finish(o *op) {
	first, stopped := c.end(o)
	if !first {
		return
	}
	o.cancel()
	if !stopped || c.legacy {
		c.write(message{ID: o.id, Type: "complete"})
	}
}

// failed ends o with an error message (no complete follows in
// graphql-transport-ws; the legacy protocol completes it).
func (c *conn) failed(o *op, payload json.RawMessage) {
	first, _ := c.end(o)
	if !first {
		return
	}
	o.cancel()
	c.write(message{ID: o.id, Type: "error", Payload: payload})
	if c.legacy {
		c.write(message{ID: o.id, Type: "complete"})
	}
}

func (c *conn) next(o *op, resp *graphql.Response) {
	b, err := json.Marshal(resp)
	if err != nil {
		c.log().Error("cannot encode a GraphQL response", "err", err, "operation", o.id)
		return
	}
	c.write(message{ID: o.id, Type: c.nextType(), Payload: b})
}
