package gqlws

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gorilla/websocket"

	"merchantpay/internal/obs"
)

// conn is one WebSocket connection.
type conn struct {
	s      *Server
	ws     *websocket.Conn
	exec   graphql.GraphExecutor
	legacy bool
	// ctx is the connection's; after connection_init it carries what Init
	// returned.
	ctx    context.Context
	cancel context.CancelFunc

	// wmu serialises writes (gorilla allows one writer at a time).
	wmu sync.Mutex

	mu       sync.Mutex
	acked    bool
	closed   bool
	ops      map[string]*op
	runq     []*op
	draining bool
	ka       *time.Timer
	// key is what the connection counts under for MaxSocketsPerKey, once
	// counted.
	key string
}

func (c *conn) log() *slog.Logger { return obs.Log(c.ctx) }

// run reads the client's messages until the connection ends.
func (c *conn) run() {
	code, reason := websocket.CloseNormalClosure, ""
	defer func() { c.close(code, reason) }()
	_ = c.ws.SetReadDeadline(time.Now().Add(c.s.InitTimeout))
	for {
		m, err := c.read()
		if err != nil {
			var ne interface{ Timeout() bool }
			switch {
			case errors.As(err, &ne) && ne.Timeout() && !c.isAcked():
				code, reason = CodeInitTimeout, "Connection initialisation timeout"
			case errors.Is(err, errBadMessage):
				code, reason = CodeBadRequest, "Invalid message received"
				if c.legacy {
					c.write(message{Type: "connection_error", Payload: errorPayload(err.Error())})
				}
			default:
				code = -1 // the connection is gone: nothing to send
			}
			return
		}
		if code, reason = c.handle(m); code != 0 {
			return
		}
	}
}

func (c *conn) isAcked() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.acked
}

// close ends the connection once: a close frame with code and reason
// (none when code < 0), every operation cancelled.
func (c *conn) close(code int, reason string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	if c.ka != nil {
		c.ka.Stop()
	}
	c.runq = nil
	key := c.key
	c.mu.Unlock()
	if code >= 0 {
		c.wmu.Lock()
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
		c.wmu.Unlock()
	}
	_ = c.ws.Close()
	c.cancel()
	c.s.remove(c, key)
}
