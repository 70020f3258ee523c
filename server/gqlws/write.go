package gqlws

import (
	"encoding/json"
	"time"

	"github.com/gorilla/websocket"
)

// nextType is the type of a result message in c's protocol.
func (c *conn) nextType() string {
	if c.legacy {
		return "data"
	}
	return "next"
}

// write sends m; a failed write closes the connection (its reader then
// ends and cleans up).
func (c *conn) write(m message) bool {
	c.wmu.Lock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(c.s.WriteTimeout))
	err := c.ws.WriteMessage(websocket.TextMessage, m.encode())
	c.wmu.Unlock()
	if err != nil {
		_ = c.ws.Close()
		return false
	}
	return true
}

// encode is m as JSON, the payload copied as it is: every payload is JSON
// already (encoded here, or a client's, parsed on the way in), and
// encoding/json would scan it again for every subscriber of an event.
func (m message) encode() []byte {
	b := make([]byte, 0, len(m.ID)+len(m.Type)+len(m.Payload)+40)
	b = append(b, '{')
	if m.ID != "" {
		id, _ := json.Marshal(m.ID)
		b = append(append(append(b, `"id":`...), id...), ',')
	}
	typ, _ := json.Marshal(m.Type)
	b = append(append(b, `"type":`...), typ...)
	if len(m.Payload) > 0 {
		b = append(append(b, `,"payload":`...), m.Payload...)
	}
	return append(b, '}')
}
