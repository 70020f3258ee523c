package server_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/internal/tenant"
	"merchantpay/internal/webhooks"
	"merchantpay/server/servertest"
)

// An attempt whose instance died before recording it (killed while the
// receiver was answering) shows where a merchant reads the attempts, once
// the lease it left ran out and another instance took the delivery on: an
// attempt of its own, numbered between the one before and the one after,
// without an answer, its error the word "interrupted".
func TestWebhookInterruptedAttemptShown(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		tn := testTenant(m)
		rcv := newReceiver(t, func(n int) int {
			if n == 1 {
				return 503
			}
			return 200
		})
		endpoint(t, e, m.TestSecret, rcv.srv.URL)
		ev, _ := emit(t, e, tn, "deposit.success")
		d := waitDelivery(t, e, tn, ev.EventID, "a first attempt", func(d webhooks.Delivery) bool {
			return len(d.Attempts) == 1 && d.NextAttemptAt != nil
		})

		// Another instance claimed the retry when it fell due, and died
		// during its attempt: what it left is its lease and the mark of
		// the attempt its claim wrote, never its outcome.
		crashed := d.NextAttemptAt.Truncate(time.Millisecond) // as the answer shows times
		err := e.App.DB.Within(tenant.System(context.Background()), nil, func(ctx context.Context, tx *ent.Tx) error {
			return tx.Client().WebhookDelivery.UpdateOneID(d.ID).
				SetLeaseOwner("dsp_crashed").SetLeaseUntil(crashed.Add(time.Second)).
				SetInflightAttempt(2).SetInflightStartedAt(crashed).Exec(ctx)
		})
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Set(crashed.Add(1500 * time.Millisecond)) // the lease ran out
		waitDelivery(t, e, tn, ev.EventID, "succeeded", func(d webhooks.Delivery) bool { return d.Status == webhooks.StatusSucceeded })

		data := e.GQL(m.TestSecret, `{ events(first: 1) { edges { node { deliveries {
			status attemptCount lastStatusCode attempts { number startedAt statusCode error responseBody success } } } } } }`, nil).GQLData()
		dl := data["events"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)["deliveries"].([]any)[0].(map[string]any)
		if dl["status"] != "succeeded" || dl["attemptCount"] != json.Number("3") || dl["lastStatusCode"] != json.Number("200") {
			t.Fatalf("delivery: %v", dl)
		}
		atts := dl["attempts"].([]any)
		if len(atts) != 3 {
			t.Fatalf("attempts: %v", atts)
		}
		second := atts[1].(map[string]any)
		started, err := time.Parse(time.RFC3339Nano, second["startedAt"].(string))
		if err != nil || !started.Equal(crashed) {
			t.Fatalf("the interrupted attempt began at %v (%v), want %v", second["startedAt"], err, crashed)
		}
		delete(second, "startedAt")
		want := map[string]any{"number": json.Number("2"), "statusCode": nil, "error": "interrupted", "responseBody": "", "success": false}
		if !reflect.DeepEqual(second, want) {
			t.Fatalf("the interrupted attempt: %v, want %v", second, want)
		}
		first, third := atts[0].(map[string]any), atts[2].(map[string]any)
		if first["number"] != json.Number("1") || first["statusCode"] != json.Number("503") ||
			third["number"] != json.Number("3") || third["statusCode"] != json.Number("200") || third["success"] != true {
			t.Fatalf("the attempts around it: %v, %v", first, third)
		}
		if hits := rcv.got(); len(hits) != 2 {
			t.Fatalf("the receiver got %d requests, want 2", len(hits))
		}
	}, fast...)
}
