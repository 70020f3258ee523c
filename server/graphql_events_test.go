package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"merchantpay/internal/nodetest"
	"merchantpay/server/servertest"
)

type gqlWS struct {
	t     *testing.T
	c     *websocket.Conn
	proto string
}

func subscribeWS(t *testing.T, e *servertest.Env, proto, key, query string, vars map[string]any) *gqlWS {
	t.Helper()
	c := dialWS(t, e, proto, nil)
	if err := c.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"X-API-KEY": key}}); err != nil {
		t.Fatal(err)
	}
	if typ, err := readType(t, c); err != nil || typ != "connection_ack" {
		t.Fatalf("ack: %q %v", typ, err)
	}
	start := "subscribe"
	if proto == "graphql-ws" {
		start = "start"
	}
	if err := c.WriteJSON(map[string]any{"id": "1", "type": start, "payload": map[string]any{"query": query, "variables": vars}}); err != nil {
		t.Fatal(err)
	}
	return &gqlWS{t: t, c: c, proto: proto}
}

// next reads the next event payload (skipping keep-alives).
func (g *gqlWS) next() map[string]any {
	g.t.Helper()
	_ = g.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		var msg struct {
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := g.c.ReadJSON(&msg); err != nil {
			g.t.Fatalf("read: %v", err)
		}
		switch msg.Type {
		case "ka", "ping", "pong":
			continue
		case "next", "data":
			var p struct {
				Data   map[string]any `json:"data"`
				Errors any            `json:"errors"`
			}
			_ = json.Unmarshal(msg.Payload, &p)
			if p.Errors != nil {
				g.t.Fatalf("subscription errors: %s", msg.Payload)
			}
			return p.Data["events"].(map[string]any)
		default:
			g.t.Fatalf("unexpected %s: %s", msg.Type, msg.Payload)
		}
	}
}

func depositTo(t *testing.T, e *servertest.Env, key, number, amount string) string {
	t.Helper()
	r := e.REST("POST", "/sandbox/deposits/bank-transfer", key, fmt.Sprintf(`{"account_number":%q,"amount":%s}`, number, amount)).Expect(200)
	return r.Data()["reference"].(string)
}

func TestEventsSubscriptionAndWebhooksGraphQL(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		other := e.Merchant("Other")
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
		otherAcc := e.REST("POST", "/accounts", other.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)

		// A receiver for webhooks, managed through GraphQL.
		var mu sync.Mutex
		hits := map[string]int{}
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hits[r.Header.Get("webhook-id")]++
			mu.Unlock()
		}))
		defer recv.Close()
		cw := e.GQL(m.TestSecret, `mutation($u: String!) { createWebhookEndpoint(input: {url: $u, events: ["deposit.success"]}) { secret endpoint { id url events enabled } } }`,
			map[string]any{"u": recv.URL}).GQLData()["createWebhookEndpoint"].(map[string]any)
		if !strings.HasPrefix(cw["secret"].(string), "whsec_") {
			t.Fatalf("secret: %v", cw)
		}
		epID := cw["endpoint"].(map[string]any)["id"].(string)
		eps := e.GQL(m.TestSecret, `{ webhookEndpoints { id events } }`, nil).GQLData()["webhookEndpoints"].([]any)
		if len(eps) != 1 || eps[0].(map[string]any)["id"] != epID {
			t.Errorf("endpoints: %v", eps)
		}

		first := depositTo(t, e, m.TestSecret, acc, "100")
		evs := e.GQL(m.TestSecret, `{ events(first: 10) { edges { node { id event transaction { reference status } } } } }`, nil).GQLData()
		edges := evs["events"].(map[string]any)["edges"].([]any)
		if len(edges) != 1 {
			t.Fatalf("events: %v", evs)
		}
		firstEvent := edges[0].(map[string]any)["node"].(map[string]any)
		if firstEvent["event"] != "deposit.success" || firstEvent["transaction"].(map[string]any)["reference"] != first {
			t.Errorf("event: %v", firstEvent)
		}
		servertest.Eventually(t, 10*time.Second, "webhook delivery", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return hits[firstEvent["id"].(string)] == 1
		})
		// The receiver answered; the attempt is recorded just after.
		var ds []any
		servertest.Eventually(t, 10*time.Second, "the delivery recorded as succeeded", func() bool {
			dl := e.GQL(m.TestSecret, `query { events(first: 1) { edges { node { deliveries { status endpointId attempts { statusCode success } } } } } }`, nil).GQLData()
			node := dl["events"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)
			ds = node["deliveries"].([]any)
			return len(ds) == 1 && ds[0].(map[string]any)["status"] == "succeeded"
		})
		if att := ds[0].(map[string]any)["attempts"].([]any); len(att) != 1 || att[0].(map[string]any)["success"] != true {
			t.Errorf("attempts: %v", att)
		}
		red := e.GQL(m.TestSecret, `mutation($id: ID!) { redeliverEvent(id: $id) { status } }`, map[string]any{"id": firstEvent["id"]}).GQLData()
		if len(red["redeliverEvent"].([]any)) != 1 {
			t.Errorf("redeliver: %v", red)
		}
		servertest.Eventually(t, 10*time.Second, "redelivery", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return hits[firstEvent["id"].(string)] == 2
		})

		afterID := firstEvent["id"]
		for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
			// Replay after the first event, then live; another merchant's events never show.
			sub := subscribeWS(t, e, proto, m.TestSecret,
				`subscription($after: ID) { events(after: $after, types: [DEPOSIT_SUCCESS]) { id event transaction { reference amount } } }`,
				map[string]any{"after": afterID})
			second := depositTo(t, e, m.TestSecret, acc, "200")
			depositTo(t, e, other.TestSecret, otherAcc, "300")
			third := depositTo(t, e, m.TestSecret, acc, "400")
			seen := []string{}
			for len(seen) < 2 {
				ev := sub.next()
				seen = append(seen, ev["transaction"].(map[string]any)["reference"].(string))
				afterID = ev["id"]
			}
			if seen[0] != second || seen[1] != third {
				t.Errorf("%s: got %v, want [%s %s]", proto, seen, second, third)
			}
			_ = sub.c.Close()
		}
		rolled := e.GQL(m.TestSecret, `mutation($id: ID!) { rollWebhookSecret(id: $id) { id secret } }`, map[string]any{"id": epID}).GQLData()["rollWebhookSecret"].(map[string]any)
		if rolled["secret"] == cw["secret"] {
			t.Error("secret not rolled")
		}
		del := e.GQL(m.TestSecret, `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { id deleted } }`, map[string]any{"id": epID}).GQLData()["deleteWebhookEndpoint"].(map[string]any)
		if del["deleted"] != true {
			t.Errorf("delete: %v", del)
		}
		if r := e.GQL(other.TestSecret, `mutation($id: ID!) { rollWebhookSecret(id: $id) { id } }`, map[string]any{"id": epID}); r.Code() != "NOT_FOUND" {
			t.Errorf("other merchant's endpoint: %s", r.Body)
		}
	})
}

// The reference graphql-ws client (npm graphql-ws 6.4.2 with ws 8 and
// graphql 16) receives an event.
func TestGraphQLWSReferenceClient(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		nodetest.Dir(t)
		m := e.Merchant("Acme Pay")
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
		depositTo(t, e, m.TestSecret, acc, "100")
		after := e.GQL(m.TestSecret, `{ events(first: 1) { edges { node { id } } } }`, nil).GQLData()["events"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)["id"].(string)
		done := make(chan []byte, 1)
		go func() {
			done <- nodetest.Run(t, 30*time.Second, nil, "subscribe.mjs", "ws"+strings.TrimPrefix(e.URL, "http")+"/graphql", m.TestSecret, "1", after)
		}()
		// The client replays from after, so the event made now arrives
		// whether or not its subscription was already live.
		ref := depositTo(t, e, m.TestSecret, acc, "250")
		var out []byte
		select {
		case out = <-done:
		case <-time.After(40 * time.Second):
			t.Fatal("graphql-ws client timed out")
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &ev); err != nil {
			t.Fatalf("client output %q: %v", out, err)
		}
		if ev["event"] != "deposit.success" || ev["transaction"].(map[string]any)["reference"] != ref {
			t.Errorf("reference client got %v, want %s", ev, ref)
		}
	})
}
