package gqlws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"merchantpay/internal/ready"
)

// message is one protocol message, both ways.
type message struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

var errBadMessage = errors.New("invalid message")

// read reads one message.
func (c *conn) read() (message, error) {
	var m message
	_, r, err := c.ws.NextReader()
	if err != nil {
		return m, err
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r); err != nil {
		return m, err
	}
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil || m.Type == "" {
		return m, fmt.Errorf("%w: not a JSON message with a type", errBadMessage)
	}
	return m, nil
}

// subscribePayload reports whether p is what graphql-transport-ws's
// subscribe message must carry: an object whose query is a string and whose
// operationName, variables and extensions, when present and not null, are a
// string and objects.
func subscribePayload(p json.RawMessage) bool {
	var v struct {
		Query         *string         `json:"query"`
		OperationName json.RawMessage `json:"operationName"`
		Variables     json.RawMessage `json:"variables"`
		Extensions    json.RawMessage `json:"extensions"`
	}
	p = bytes.TrimSpace(p)
	if len(p) == 0 || p[0] != '{' || json.Unmarshal(p, &v) != nil || v.Query == nil {
		return false
	}
	is := func(raw json.RawMessage, first byte) bool {
		raw = bytes.TrimSpace(raw)
		return len(raw) == 0 || string(raw) == "null" || raw[0] == first
	}
	return is(v.OperationName, '"') && is(v.Variables, '{') && is(v.Extensions, '{')
}

// handle acts on one message; a non-zero code closes the connection.
func (c *conn) handle(m message) (int, string) {
	switch {
	case m.Type == "connection_init":
		return c.init(m.Payload)
	case m.Type == "subscribe" && !c.legacy, m.Type == "start" && c.legacy:
		if !c.isAcked() {
			return CodeUnauthorized, "Unauthorized"
		}
		if m.ID == "" {
			return CodeBadRequest, "Invalid message received: no id"
		}
		if !c.legacy && !subscribePayload(m.Payload) {
			// graphql-transport-ws: a message of a format the protocol does
			// not specify closes the socket (the legacy protocol answers
			// an error for the operation instead, below).
			return CodeBadRequest, "Invalid message received: subscribe needs a payload object with a query string"
		}
		// Refused before the key's check, which costs a database query:
		// only this goroutine starts operations, so the count cannot rise
		// before subscribe registers this one.
		if c.atCapacity(m.ID) {
			c.write(message{ID: m.ID, Type: "error", Payload: c.tooManyOperations()})
			return 0, ""
		}
		if c.s.Authorize != nil {
			c.mu.Lock()
			ctx := c.ctx
			c.mu.Unlock()
			if err := c.s.Authorize(ctx); err != nil {
				ce := &CloseError{Code: CodeUnauthorized, Reason: err.Error()}
				errors.As(err, &ce)
				if c.legacy {
					c.write(message{Type: "connection_error", Payload: errorPayload(ce.Reason)})
				}
				return ce.Code, ce.Reason
			}
		}
		return c.subscribe(m)
	case m.Type == "complete" && !c.legacy, m.Type == "stop" && c.legacy:
		c.stop(m.ID)
	case m.Type == "ping" && !c.legacy:
		c.write(message{Type: "pong", Payload: m.Payload})
	case m.Type == "pong" && !c.legacy:
	case m.Type == "connection_terminate" && c.legacy:
		return websocket.CloseNormalClosure, "terminated"
	default:
		if c.legacy {
			c.write(message{Type: "connection_error", Payload: errorPayload("unexpected message " + m.Type)})
		}
		return CodeBadRequest, "Invalid message received: unexpected " + m.Type
	}
	return 0, ""
}

// init answers connection_init.
func (c *conn) init(payload json.RawMessage) (int, string) {
	if c.isAcked() {
		return CodeTooManyInits, "Too many initialisation requests"
	}
	var p map[string]any
	if len(payload) > 0 && string(payload) != "null" {
		if err := json.Unmarshal(payload, &p); err != nil {
			return CodeBadRequest, "Invalid message received: connection_init payload is not an object"
		}
	}
	ctx := c.ctx
	var err error
	if c.s.Init != nil {
		ctx, err = c.s.Init(c.ctx, p)
	}
	if err == nil {
		err = c.admit(ctx)
	}
	if err != nil {
		ce := &CloseError{Code: CodeForbidden, Reason: err.Error()}
		errors.As(err, &ce)
		if c.legacy {
			c.write(message{Type: "connection_error", Payload: errorPayload(ce.Reason)})
		}
		return ce.Code, ce.Reason
	}
	_ = c.ws.SetReadDeadline(time.Time{})
	c.mu.Lock()
	c.ctx, c.acked = ctx, true
	c.mu.Unlock()
	c.write(message{Type: "connection_ack"})
	if c.legacy {
		c.keepAlive()
	}
	return 0, ""
}

// keepAlive sends "ka" now and every KeepAlive after.
func (c *conn) keepAlive() {
	if !c.write(message{Type: "ka"}) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.ka = time.AfterFunc(c.s.KeepAlive, c.keepAlive)
	}
}

// subscribe starts an operation.
func (c *conn) subscribe(m message) (int, string) {
	start := graphql.Now()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, ""
	}
	if _, dup := c.ops[m.ID]; dup {
		c.mu.Unlock()
		if !c.legacy {
			return CodeSubscriberExists, "Subscriber for " + m.ID + " already exists"
		}
		c.write(message{ID: m.ID, Type: "error", Payload: errorsPayload(&gqlerror.Error{Message: "an operation with id " + m.ID + " is running"})})
		return 0, ""
	}
	ctx, cancel := context.WithCancel(c.ctx)
	o := &op{id: m.ID, cancel: cancel}
	c.ops[m.ID] = o
	c.mu.Unlock()

	if c.s.Mutation != nil {
		if run, ok := c.s.Mutation(ctx, m.Payload); ok {
			o.ctx = ctx
			go func() {
				var resp json.RawMessage
				var refused bool
				if c.guard(o, func() { resp, refused = run() }) != nil {
					return
				}
				if refused {
					var answer struct {
						Errors json.RawMessage `json:"errors"`
					}
					_ = json.Unmarshal(resp, &answer)
					c.failed(o, answer.Errors)
					return
				}
				c.write(message{ID: o.id, Type: c.nextType(), Payload: resp})
				c.finish(o)
			}()
			return 0, ""
		}
	}

	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(m.Payload))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil {
		c.failed(o, errorsPayload(&gqlerror.Error{Message: "invalid json"}))
		return 0, ""
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	ctx = graphql.StartOperationTrace(ctx)
	rc, err := c.exec.CreateOperationContext(ctx, params)
	if err != nil {
		// The kind is read before DispatchError: its error presenter may
		// rewrite the errors' codes (the service's own replace gqlgen's).
		kind := errcode.GetErrorKind(err)
		resp := c.exec.DispatchError(graphql.WithOperationContext(ctx, rc), err)
		if kind == errcode.KindProtocol {
			// A document that does not parse or validate, or an
			// operation refused by its limits: an error message for the
			// operation, which never ran.
			c.failed(o, errorsPayload(resp.Errors...))
		} else {
			c.next(o, resp)
			c.finish(o)
		}
		return 0, ""
	}
	ctx, hook := ready.With(graphql.WithOperationContext(ctx, rc), func() { c.notify(o) })
	var responses graphql.ResponseHandler
	if err := c.guard(o, func() { responses, ctx = c.exec.DispatchOperation(ctx, rc) }); err != nil {
		return 0, ""
	}
	o.ctx = ctx
	if !hook.Taken() {
		// Not a stream that tells when it has something: read it from a
		// goroutine of its own until it ends.
		go c.drive(o, responses)
		return 0, ""
	}
	c.mu.Lock()
	o.responses = responses
	c.scheduleLocked(o)
	c.mu.Unlock()
	return 0, ""
}

func errorPayload(msg string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"message": msg})
	return b
}

func errorsPayload(errs ...*gqlerror.Error) json.RawMessage {
	b, _ := json.Marshal(errs)
	return b
}
