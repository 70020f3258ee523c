package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"merchantpay/internal/apperr"
	"merchantpay/internal/idem"
	"merchantpay/internal/merchants"
	"merchantpay/internal/obs"
	"merchantpay/pipeline"
	"merchantpay/server/gqlws"
)

// wsInit authenticates a WebSocket connection by its connection_init payload
// unless the upgrade request's headers already did. Either way spends one
// of the key's rate-limit tokens, or a client could authenticate sockets
// without end where it may not send requests.
func (h *gqlHandler) wsInit(ctx context.Context, payload map[string]any) (context.Context, error) {
	if _, ok := merchants.PrincipalFrom(ctx); ok {
		return ctx, nil
	}
	hdr := http.Header{}
	for k, v := range payload {
		if s, ok := v.(string); ok {
			hdr.Set(k, s)
		}
	}
	p, err := h.pipe.Authenticate(ctx, hdr)
	if err == nil {
		err = pipeline.CheckKind(p, &gqlSocket)
	}
	if err != nil {
		return ctx, &gqlws.CloseError{Code: gqlws.CodeForbidden, Reason: "Forbidden: " + apperr.As(err).Message}
	}
	if err := h.pipe.Allow(p); err != nil {
		return ctx, &gqlws.CloseError{Code: gqlws.CodeTooManyRequests, Reason: "Too many requests: " + apperr.As(err).Message}
	}
	return pipeline.WithPrincipal(ctx, p), nil
}

// keyRolled closes a WebSocket connection whose API key no longer
// authenticates (rolled): a rolled key is void at once, open connections
// included.
var keyRolled = &gqlws.CloseError{Code: gqlws.CodeUnauthorized, Reason: "Unauthorized: the API key was rolled or revoked"}

// wsAuthorize checks, before each operation of a WebSocket connection,
// that the key it was opened with still authenticates. A failed check
// lets the operation run: its own statements meet the same database.
func (h *gqlHandler) wsAuthorize(ctx context.Context) error {
	p, ok := merchants.PrincipalFrom(ctx)
	if !ok || p.KeyHash == "" {
		return nil
	}
	live, err := h.app.Merchants.KeysLive(ctx, []string{p.KeyHash})
	if err != nil {
		obs.Log(ctx).Warn("checking a WebSocket connection's key failed", "err", err)
		return nil
	}
	if !live[p.KeyHash] {
		return keyRolled
	}
	return nil
}

// wsMutation is the WebSocket transport's Mutation hook: a mutation sent
// over a connection runs as POST /graphql runs one, through the same
// pipeline steps (rate limit, idempotency: one database transaction,
// keyed by its input's idempotencyKey, there being no per-message
// headers), and its answer, replays included, is the body POST /graphql
// would send. It asks for application/graphql-response+json, whose answer
// to an operation refused before it ran has no data entry: such a
// mutation (it did not validate, or its limits refused it) is answered
// with an error message, as a refused query is, and so is one over the
// rate limit. Queries and subscriptions stay with the executor.
func (h *gqlHandler) wsMutation(ctx context.Context, payload json.RawMessage) (func() (json.RawMessage, bool), bool) {
	params, perr := decodeParams(payload)
	if perr != nil {
		return nil, false // the executor answers malformed requests itself
	}
	g := &gqlCall{params: params}
	mutation, err := g.inspect("")
	if !mutation {
		return nil, false
	}
	run := func() ([]byte, error) {
		if err != nil {
			return nil, err
		}
		p, ok := merchants.PrincipalFrom(ctx)
		if !ok {
			return nil, apperr.New(apperr.Unauthorized, "the connection is not authenticated")
		}
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/graphql", nil)
		if err != nil {
			return nil, err
		}
		r.Header.Set("Accept", mediaGraphQLResponse)
		if err := h.wsMutate(&pipeline.Call{R: r, Route: &h.socketRoute, Principal: p, Body: payload, Input: g}); err != nil {
			return nil, err
		}
		return g.answer, nil
	}
	return func() (json.RawMessage, bool) {
		body, err := run()
		if err != nil {
			// The rate limit refuses the operation before it runs; the
			// idempotency step's refusals (a key reused, or in use) are
			// answers to the request, as over HTTP.
			body, _ = json.Marshal(failure(ctx, err))
			return body, apperr.As(err).Kind == apperr.RateLimited
		}
		return body, !ranIn(body)
	}, true
}

// ranIn reports whether answer, in application/graphql-response+json, is
// that of an operation that ran: it has a data entry, null included.
func ranIn(answer []byte) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(answer, &fields) != nil {
		return true // not an answer to read: sent as it is
	}
	_, ok := fields["data"]
	return ok
}

// socketKey is the WebSocket transport's key extractor: wsMutation has
// found the mutation and its input's idempotencyKey (inspect).
func socketKey(c *pipeline.Call) (string, bool, error) { return c.Input.(*gqlCall).key, true, nil }

// keepAnswer keeps a WebSocket mutation's answer for its next message.
func keepAnswer(c *pipeline.Call, resp idem.Response, _ bool) { c.Input.(*gqlCall).answer = resp.Body }

// notMutation ends the WebSocket mutations' chain; it is never reached,
// socketKey calling every request a write.
func notMutation(*pipeline.Call) error {
	return apperr.New(apperr.Internal, "a WebSocket mutation went past the idempotency step")
}

func originChecker(allowed []string) func(r *http.Request) bool {
	return func(r *http.Request) bool {
		if len(allowed) == 0 {
			return true
		}
		origin := r.Header.Get("Origin")
		if origin == "" {
			return true // not a browser
		}
		for _, a := range allowed {
			if a == "*" || strings.EqualFold(a, origin) {
				return true
			}
		}
		return false
	}
}
