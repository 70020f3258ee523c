package server

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// gorillaWS serves gqlgen's WebSocket transport (graphql-transport-ws and
// graphql-ws) through gorilla/websocket.
type gorillaWS struct {
	upgrader websocket.Upgrader
}

func (g gorillaWS) Accept(w http.ResponseWriter, r *http.Request, opt transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	up := g.upgrader
	up.Subprotocols = append(append([]string(nil), up.Subprotocols...), opt.Subprotocols...)
	conn, err := up.Upgrade(w, r, opt.ResponseHeader)
	if err != nil {
		return nil, err
	}
	return &gorillaConn{conn: conn}, nil
}

type gorillaConn struct {
	conn *websocket.Conn
	// gorilla allows one concurrent writer.
	mu sync.Mutex
}

func (c *gorillaConn) Close() error { return c.conn.Close() }

func (c *gorillaConn) NextReader() (int, io.Reader, error) {
	t, r, err := c.conn.NextReader()
	if err != nil {
		var ce *websocket.CloseError
		if errors.As(err, &ce) && (ce.Code == websocket.CloseNormalClosure || ce.Code == websocket.CloseNoStatusReceived) {
			return t, nil, transport.ErrWebsocketClosed
		}
		return t, nil, err
	}
	return t, r, nil
}

func (c *gorillaConn) WriteJSON(v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.conn.WriteJSON(v)
}

func (c *gorillaConn) WriteClose(code int, message string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, message), time.Now().Add(time.Second))
}

func (c *gorillaConn) Subprotocol() string { return c.conn.Subprotocol() }

func (c *gorillaConn) SetReadLimit(limit int64) { c.conn.SetReadLimit(limit) }

func (c *gorillaConn) SetReadDeadline(t time.Time) error { return c.conn.SetReadDeadline(t) }
