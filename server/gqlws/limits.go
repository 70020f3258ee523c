package gqlws

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"merchantpay/internal/apperr"
)

// CodeTooManyRequests closes a connection whose authentication the
// service refuses for load: the key's rate limit is spent, or the key has
// as many connections open as it may. graphql-transport-ws names 4429 for
// a second connection_init; its reference client, like for that, does not
// reconnect on its own.
const CodeTooManyRequests = 4429

// The two caps below bound what one client holds on an instance: the
// counters are a map entry per key with an open connection and a length
// check, so an idle subscriber costs nothing more.

// claim counts one more connection under key, unless MaxSocketsPerKey are
// open under it already; an empty key is not counted.
func (s *Server) claim(key string) bool {
	if key == "" {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.MaxSocketsPerKey > 0 && s.perKey[key] >= s.MaxSocketsPerKey {
		return false
	}
	s.perKey[key]++
	return true
}

// release gives back the slot claim took under key.
func (s *Server) release(key string) {
	if key == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(key)
}

func (s *Server) releaseLocked(key string) {
	if key == "" {
		return
	}
	if n := s.perKey[key]; n > 1 {
		s.perKey[key] = n - 1
	} else {
		delete(s.perKey, key)
	}
}

// Sockets is the number of open connections counted under key.
func (s *Server) Sockets(key string) int {
	s.setup()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perKey[key]
}

// keyOf is what MaxSocketsPerKey counts a connection with context ctx
// under ("" when nothing is counted).
func (s *Server) keyOf(ctx context.Context) string {
	if s.SocketKey == nil {
		return ""
	}
	return s.SocketKey(ctx)
}

// tooManySockets is the refusal of one connection more than
// MaxSocketsPerKey.
func (s *Server) tooManySockets() *apperr.Error {
	return apperr.New(apperr.RateLimited, "this key has %d WebSocket connections open, as many as it may; close one first", s.MaxSocketsPerKey)
}

// refuse answers an upgrade request refused before the upgrade.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err *apperr.Error) {
	if s.Refuse != nil {
		s.Refuse(w, r, err)
		return
	}
	http.Error(w, err.Message, err.Kind.Status())
}

// admit counts c, authenticated with context ctx, under its key; a
// connection authenticated by its upgrade headers was counted before the
// upgrade, and is not counted again.
func (c *conn) admit(ctx context.Context) error {
	key := c.s.keyOf(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	// Under c.mu, so that close, which gives the slot back, either sees
	// c.key or happened before and left nothing to count.
	if key == "" || c.key != "" || c.closed {
		return nil
	}
	if !c.s.claim(key) {
		return &CloseError{Code: CodeTooManyRequests, Reason: "Too many requests: " + c.s.tooManySockets().Message}
	}
	c.key = key
	return nil
}

// atCapacity reports whether c runs MaxSubscriptions operations already, id
// not among them: the operation id is then refused.
func (c *conn) atCapacity(id string) bool {
	max := c.s.MaxSubscriptions
	if max <= 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, running := c.ops[id]
	return !running && len(c.ops) >= max
}

// tooManyOperations is the error message's payload for an operation over
// MaxSubscriptions.
func (c *conn) tooManyOperations() json.RawMessage {
	return errorsPayload(&gqlerror.Error{
		Message:    fmt.Sprintf("this connection runs %d operations already, as many as it may; complete one first", c.s.MaxSubscriptions),
		Extensions: map[string]any{"code": string(apperr.RateLimited)},
	})
}
