package server_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"merchantpay/server/servertest"
)

const deliveryListGQL = `query($ep: ID) { webhookDeliveries(endpointId: $ep, first: 10) { edges { cursor node {
	id eventId endpointId event status attemptCount createdAt attempts { number statusCode success latencyMs } } } pageInfo { hasNextPage } } }`

func deliveryNodes(t *testing.T, e *servertest.Env, key string, endpointID any) []map[string]any {
	t.Helper()
	var out []map[string]any
	conn := e.GQL(key, deliveryListGQL, map[string]any{"ep": endpointID}).GQLData()["webhookDeliveries"].(map[string]any)
	for _, edge := range conn["edges"].([]any) {
		out = append(out, edge.(map[string]any)["node"].(map[string]any))
	}
	return out
}

// A test webhook is a signed ping delivered through the dispatcher, its
// attempt recorded; it is not among the merchant's events. A delivery is
// resent on the same delivery with the same webhook-id; a disabled
// endpoint gets no ping.
func TestSendTestWebhook(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m, other := e.Merchant("Ping Co"), e.Merchant("Other")
		rcv := newReceiver(t, always(200))
		id, secret := endpoint(t, e, m.TestSecret, rcv.srv.URL+"/hook")
		sent := e.GQL(m.TestSecret, `mutation($id: ID!) { sendTestWebhook(endpointId: $id) { id eventId event status endpointId } }`,
			map[string]any{"id": id}).GQLData()["sendTestWebhook"].(map[string]any)
		if sent["event"] != "ping" || sent["endpointId"] != id || sent["status"] != "pending" {
			t.Fatalf("sendTestWebhook: %v", sent)
		}
		h := rcv.waitHits(t, 1)[0]
		verify(t, e, secret, h)
		var body struct {
			ID    string            `json:"id"`
			Event string            `json:"event"`
			Data  map[string]string `json:"data"`
		}
		if err := json.Unmarshal(h.body, &body); err != nil || body.Event != "ping" || body.Data["endpoint_id"] != id ||
			body.ID != sent["eventId"] || h.header.Get("webhook-id") != sent["eventId"] {
			t.Fatalf("ping body %s, headers %v", h.body, h.header)
		}
		var got []map[string]any
		servertest.Eventually(t, 10*time.Second, "the ping's attempt recorded", func() bool {
			got = deliveryNodes(t, e, m.TestSecret, id)
			return len(got) == 1 && got[0]["status"] == "succeeded"
		})
		atts := got[0]["attempts"].([]any)
		if len(atts) != 1 || atts[0].(map[string]any)["success"] != true {
			t.Errorf("attempts: %v", atts)
		}
		// Not an event: not listed, not in Query.events.
		if evs := e.GQL(m.TestSecret, `{ events(first: 10) { edges { node { id event } } } }`, nil).GQLData()["events"].(map[string]any)["edges"].([]any); len(evs) != 0 {
			t.Errorf("the ping is among the events: %v", evs)
		}
		if r := e.REST("GET", "/webhooks", m.TestSecret, nil).Expect(200); len(r.List()) != 1 {
			t.Errorf("endpoints: %s", r.Body)
		}
		// Another merchant sees none of it.
		if ds := deliveryNodes(t, e, other.TestSecret, nil); len(ds) != 0 {
			t.Errorf("another merchant sees %v", ds)
		}
		if r := e.GQL(other.TestSecret, `mutation($id: ID!) { sendTestWebhook(endpointId: $id) { id } }`, map[string]any{"id": id}); r.Code() != "NOT_FOUND" {
			t.Errorf("ping to another merchant's endpoint: %s", r.Body)
		}

		// Resend: a second attempt on the same delivery, same webhook-id.
		re := e.GQL(m.TestSecret, `mutation($id: ID!) { resendWebhookDelivery(id: $id) { id status } }`,
			map[string]any{"id": got[0]["id"]}).GQLData()["resendWebhookDelivery"].(map[string]any)
		if re["id"] != got[0]["id"] || re["status"] != "pending" {
			t.Errorf("resend: %v", re)
		}
		hits := rcv.waitHits(t, 2)
		if hits[1].header.Get("webhook-id") != sent["eventId"] {
			t.Errorf("resent with webhook-id %q, want %v", hits[1].header.Get("webhook-id"), sent["eventId"])
		}
		servertest.Eventually(t, 10*time.Second, "the resend's attempt recorded", func() bool {
			got = deliveryNodes(t, e, m.TestSecret, nil)
			return len(got) == 1 && len(got[0]["attempts"].([]any)) == 2 && got[0]["status"] == "succeeded"
		})

		// Disabled: no ping, no resend; enabled again: both work.
		off := e.GQL(m.TestSecret, `mutation($id: ID!) { updateWebhookEndpoint(id: $id, enabled: false) { id enabled } }`,
			map[string]any{"id": id}).GQLData()["updateWebhookEndpoint"].(map[string]any)
		if off["enabled"] != false {
			t.Errorf("disable: %v", off)
		}
		if r := e.GQL(m.TestSecret, `mutation($id: ID!) { sendTestWebhook(endpointId: $id) { id } }`, map[string]any{"id": id}); r.Code() != "VALIDATION_ERROR" || !slices.Contains(gqlFields(r), "endpointId") {
			t.Errorf("ping to a disabled endpoint: %s", r.Body)
		}
		if r := e.GQL(m.TestSecret, `mutation($id: ID!) { resendWebhookDelivery(id: $id) { id } }`, map[string]any{"id": got[0]["id"]}); r.Code() != "VALIDATION_ERROR" {
			t.Errorf("resend to a disabled endpoint: %s", r.Body)
		}
		on := e.GQL(m.TestSecret, `mutation($id: ID!) { updateWebhookEndpoint(id: $id, enabled: true) { enabled } }`,
			map[string]any{"id": id}).GQLData()["updateWebhookEndpoint"].(map[string]any)
		if on["enabled"] != true {
			t.Errorf("enable: %v", on)
		}
		e.Clock.Advance(time.Millisecond) // lists are newest first
		e.GQL(m.TestSecret, `mutation($id: ID!) { sendTestWebhook(endpointId: $id) { id } }`, map[string]any{"id": id}).GQLData()
		rcv.waitHits(t, 3)
		// A second endpoint's ping is listed under it, not under the first.
		id2, _ := endpoint(t, e, m.TestSecret, rcv.srv.URL+"/other")
		e.Clock.Advance(time.Millisecond)
		e.GQL(m.TestSecret, `mutation($id: ID!) { sendTestWebhook(endpointId: $id) { id } }`, map[string]any{"id": id2}).GQLData()
		if ds := deliveryNodes(t, e, m.TestSecret, id); len(ds) != 2 || ds[0]["eventId"] == ds[1]["eventId"] {
			t.Errorf("two pings, newest first, each its own webhook-id: %v", ds)
		}
		if ds := deliveryNodes(t, e, m.TestSecret, id2); len(ds) != 1 || ds[0]["endpointId"] != id2 {
			t.Errorf("the second endpoint's deliveries: %v", ds)
		}
		if ds := deliveryNodes(t, e, m.TestSecret, nil); len(ds) != 3 || ds[0]["endpointId"] != id2 {
			t.Errorf("every delivery, newest first: %v", ds)
		}
		if r := e.GQL(m.TestSecret, `mutation { updateWebhookEndpoint(id: "we_nope", enabled: true) { id } }`, nil); r.Code() != "NOT_FOUND" {
			t.Errorf("unknown endpoint: %s", r.Body)
		}
	}, fast...)
}
