package server

import (
	"bytes"
	"context"
	"net/http"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"

	"merchantpay/ent"
	"merchantpay/graph"
	"merchantpay/internal/apperr"
	"merchantpay/internal/idem"
	"merchantpay/pipeline"
)

// execute is the idempotency step's Operation for GraphQL: it runs the
// mutation request c (its body: c.Body) in ctx, inside the transaction
// idem.Store.Do holds with its idempotency record, exactly as a REST POST
// runs, and keeps the answer for storing. tx reaches the resolvers in the
// context (graph.WithRequestTx), which hand it on as an argument. A
// mutation with errors rolls back.
func (h *gqlHandler) execute(ctx context.Context, tx *ent.Tx, c *pipeline.Call) (idem.Response, bool) {
	out := &outcome{}
	rec := newBuffer()
	ctx = graph.WithRequestTx(context.WithValue(ctx, outcomeKey{}, out), tx)
	h.srv.ServeHTTP(rec, requestWith(c.R, ctx, c.Body))
	status := rec.status
	if s := out.worst(); s > status {
		status = s
	}
	ok := rec.status == http.StatusOK && !out.failed()
	return idem.Response{Status: status, Body: rec.buf.Bytes(), ContentType: rec.Header().Get("Content-Type")}, ok
}

func requestWith(r *http.Request, ctx context.Context, body []byte) *http.Request {
	r2 := r.WithContext(ctx)
	r2.Body = ioNopCloser{bytes.NewReader(body)}
	r2.ContentLength = int64(len(body))
	r2.Header.Set("Content-Type", "application/json")
	return r2
}

type ioNopCloser struct{ *bytes.Reader }

func (ioNopCloser) Close() error { return nil }

// inspect reads g's request (g.params), once, for the idempotency step:
// whether it is a mutation and, for one, its idempotency key (the header,
// else the mutation's input.idempotencyKey), kept in g.key, and whether it
// selects a mutation that calls a live provider (providerMutations), kept
// in g.provider for the route's Outside.
func (g *gqlCall) inspect(header string) (mutation bool, err error) {
	req := g.params
	doc, op := operationOf(req)
	if op == nil || op.Operation != ast.Mutation {
		return false, nil
	}
	key := header
	provider := false
	fields := 0
	// The operation's top-level fields, those of its fragments included.
	var walk func(ast.SelectionSet, int)
	walk = func(set ast.SelectionSet, depth int) {
		if depth > 10 {
			fields += 2 // fragments nested this deep: refused with a key
			return
		}
		for _, sel := range set {
			switch sel := sel.(type) {
			case *ast.Field:
				fields++
				provider = provider || providerMutations[sel.Name]
				if key == "" {
					key = inputKey(sel, req.Variables)
				}
			case *ast.InlineFragment:
				walk(sel.SelectionSet, depth+1)
			case *ast.FragmentSpread:
				if f := doc.Fragments.ForName(sel.Name); f != nil {
					walk(f.SelectionSet, depth+1)
				}
			}
		}
	}
	walk(op.SelectionSet, 0)
	if key != "" && fields > 1 {
		return true, apperr.New(apperr.Validation, "an idempotent request holds exactly one mutation")
	}
	g.key, g.provider = key, provider
	return true, nil
}

func inputKey(f *ast.Field, vars map[string]any) string {
	arg := f.Arguments.ForName("input")
	if arg == nil || arg.Value == nil {
		return ""
	}
	v := arg.Value
	if v.Kind == ast.Variable {
		m, _ := vars[v.Raw].(map[string]any)
		s, _ := m["idempotencyKey"].(string)
		return s
	}
	for _, child := range v.Children {
		if child.Name != "idempotencyKey" || child.Value == nil {
			continue
		}
		if child.Value.Kind == ast.Variable {
			s, _ := vars[child.Value.Raw].(string)
			return s
		}
		if child.Value.Kind == ast.StringValue || child.Value.Kind == ast.BlockValue {
			return child.Value.Raw
		}
	}
	return ""
}

// outcome records the errors of one GraphQL execution, so a mutation with
// errors rolls back.
type outcome struct {
	mu     sync.Mutex
	status int
}

type outcomeKey struct{}

func (o *outcome) add(status int) {
	o.mu.Lock()
	if status > o.status {
		o.status = status
	}
	o.mu.Unlock()
}

func (o *outcome) worst() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.status
}

func (o *outcome) failed() bool { return o.worst() > 0 }

// buffer captures gqlgen's answer so it can be stored for replay.
type buffer struct {
	header http.Header
	status int
	buf    bytes.Buffer
}

func newBuffer() *buffer { return &buffer{header: http.Header{}} }

func (b *buffer) Header() http.Header { return b.header }

func (b *buffer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.buf.Write(p)
}

func (b *buffer) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
