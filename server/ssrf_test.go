package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/emailnotification"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/hookwire/fakedns"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

// A webhook must not become a way for a merchant to make the service send
// requests to, and read answers from, the network it runs in: not with a
// live key, and not with the test key every merchant has.

const createEndpointGQL = `mutation($u: String!) { createWebhookEndpoint(input: {url: $u}) { endpoint { id url } } }`

// gqlFields lists the fields named by the first GraphQL error.
func gqlFields(r *servertest.Resp) []string {
	var out []string
	errs, _ := r.JSON["errors"].([]any)
	if len(errs) == 0 {
		return nil
	}
	ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
	list, _ := ext["errors"].([]any)
	for _, x := range list {
		if f, ok := x.(map[string]any)["field"].(string); ok {
			out = append(out, f)
		}
	}
	return out
}

// internalURLs are the forms of an internal address the guard refuses, on
// port (of a service on 127.0.0.1 where it matters).
func internalURLs(port string) []string {
	return []string{
		"http://127.0.0.1:" + port + "/x",
		"http://localhost:" + port + "/x",
		"http://app.localhost:" + port + "/x",
		"http://[::1]:" + port + "/x",
		"http://[::ffff:127.0.0.1]:" + port + "/x",
		"http://0.0.0.0:" + port + "/x",
		"http://10.1.2.3/x",
		"http://172.16.5.4/x",
		"http://192.168.1.1/x",
		"http://100.64.0.1/x",
		"http://169.254.169.254/latest/meta-data/",
		"http://[fe80::1]/x",
		"http://[fd00::1]/x",
		"http://192.88.99.1/x",
		"http://[2001::1]/x",
		"http://vm/x",
		"http://vm:" + port + "/x",
		"http://api.internal/x",
		"http://printer.local/x",
		"http://nas.home.arpa/x",
		// A public-looking name that resolves to a private address.
		"https://intranet-hooks.test/x",
	}
}

// ssrfDNS is the fake DNS of these tests.
func ssrfDNS() *fakedns.Table {
	return fakedns.New(map[string][]string{
		"intranet-hooks.test": {"10.20.30.40"},
		"hooks.test":          {"93.184.216.34"},
	})
}

// Registration refuses every internal form in both modes, over REST and
// GraphQL, with a VALIDATION_ERROR naming url, never telling what a name
// resolves to, and saving nothing.
func TestWebhookRegistrationRefusesInternalAddresses(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		for _, key := range []string{m.TestSecret, m.LiveSecret} {
			mode := key[:9]
			for _, u := range internalURLs("5432") {
				r := e.REST("POST", "/webhooks", key, map[string]any{"url": u}).Expect(400)
				if r.Code() != "VALIDATION_ERROR" || fmt.Sprint(r.Fields()) != "[url]" ||
					!strings.Contains(string(r.Body), "URL must point to a public internet address") {
					t.Errorf("%s REST %s: %s", mode, u, r.Body)
				}
				g := e.GQL(key, createEndpointGQL, map[string]any{"u": u})
				if g.Code() != "VALIDATION_ERROR" || fmt.Sprint(gqlFields(g)) != "[url]" || g.JSON["data"] != nil {
					t.Errorf("%s GraphQL %s: %s", mode, u, g.Body)
				}
				for _, body := range [][]byte{r.Body, g.Body} {
					if strings.Contains(string(body), "10.20.30.40") {
						t.Errorf("%s %s: the answer tells what the name resolves to: %s", mode, u, body)
					}
				}
			}
			if n := len(e.REST("GET", "/webhooks", key, nil).Expect(200).List()); n != 0 {
				t.Errorf("%s: %d endpoints saved", mode, n)
			}
			// A public name is taken.
			e.REST("POST", "/webhooks", key, map[string]any{"url": "https://hooks.test/in"}).Expect(201)
			e.GQL(key, createEndpointGQL, map[string]any{"u": "https://hooks.test/in2"}).GQLData()
		}
	}, servertest.WithWebhookGuard(), servertest.WithWebhookResolver(ssrfDNS().Resolver()))
}

// With WEBHOOK_ALLOW_PRIVATE=true (local development) the same URLs are
// taken in both modes.
func TestWebhookRegistrationAllowPrivate(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		for _, key := range []string{m.TestSecret, m.LiveSecret} {
			for _, u := range internalURLs("5432") {
				e.REST("POST", "/webhooks", key, map[string]any{"url": u}).Expect(201)
			}
			e.GQL(key, createEndpointGQL, map[string]any{"u": "http://127.0.0.1:5432/x"}).GQLData()
		}
	}, servertest.With("WEBHOOK_ALLOW_PRIVATE", "true"), servertest.WithWebhookResolver(ssrfDNS().Resolver()))
}

// secretService is an internal service on 127.0.0.1 whose every answer is
// a secret; it counts the requests that reach it.
type secretService struct {
	srv  *httptest.Server
	port string
	hits atomic.Int32
}

const internalSecret = "SECRET-xyz"

func newSecretService(t *testing.T) *secretService {
	s := &secretService{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		fmt.Fprint(w, internalSecret)
	}))
	t.Cleanup(s.srv.Close)
	_, s.port, _ = net.SplitHostPort(strings.TrimPrefix(s.srv.URL, "http://"))
	return s
}

const deliveriesGQL = `{ events(first: 4) { edges { node { event deliveries {
	url status attemptCount lastStatusCode lastError attempts { statusCode error responseBody success } } } } } }`

// attemptedDeliveries polls key's events until every delivery of every
// deposit.success event has been attempted, expecting n of them, and
// returns them with the raw answer.
func attemptedDeliveries(t *testing.T, e *servertest.Env, key string, n int) ([]map[string]any, string) {
	t.Helper()
	var ds []map[string]any
	var raw string
	servertest.Eventually(t, 15*time.Second, fmt.Sprintf("%d attempted deliveries", n), func() bool {
		r := e.GQL(key, deliveriesGQL, nil)
		raw = string(r.Body)
		ds = nil
		for _, edge := range r.GQLData()["events"].(map[string]any)["edges"].([]any) {
			node := edge.(map[string]any)["node"].(map[string]any)
			if node["event"] != "deposit.success" {
				continue
			}
			for _, d := range node["deliveries"].([]any) {
				d := d.(map[string]any)
				// The delivery is read before its attempts: once it counts
				// one, its record (attempt and delivery) is all there.
				if fmt.Sprint(d["attemptCount"]) == "0" {
					return false
				}
				ds = append(ds, d)
			}
		}
		return len(ds) == n
	})
	return ds, raw
}

// deposit makes a sandbox bank transfer into a new account of key's mode.
func deposit(t *testing.T, e *servertest.Env, key string) {
	t.Helper()
	acc := e.REST("POST", "/accounts", key, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
	depositTo(t, e, key, acc, "100")
}

// The attack, with the guard on: a name that was public when the endpoint
// was saved points at the internal service when the deposit is delivered
// (DNS rebinding), in test and live mode; a test-mode endpoint saved before
// the guard covered test mode points at it directly. Every attempt is
// refused at connect time and reads refused_address; the service is never
// reached, and nothing a merchant can read holds its answer or its address.
func TestWebhookSSRFRefusedAtDelivery(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, dbURL string) {
		dns := ssrfDNS()
		inner := newSecretService(t)
		e := servertest.New(t, dbURL, append(fast, servertest.WithWebhookGuard(), servertest.WithWebhookResolver(dns.Resolver()))...)
		m := e.Merchant("Acme Pay")
		for _, key := range []string{m.TestSecret, m.LiveSecret} {
			e.REST("POST", "/webhooks", key, map[string]any{"url": "http://hooks.test:" + inner.port + "/x"}).Expect(201)
		}
		// Saved when test mode was not guarded.
		test := tenant.Tenant{MerchantID: m.ID, Mode: tenant.Test}
		now := e.Clock.Now()
		if err := e.App.DB.Within(tenant.With(context.Background(), test), nil, func(ctx context.Context, tx *ent.Tx) error {
			return tx.Client().WebhookEndpoint.Create().SetID("we_old").SetURL(inner.srv.URL + "/readyz").
				SetSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").SetEvents([]string{}).
				SetCreatedAt(now).SetUpdatedAt(now).Exec(ctx)
		}); err != nil {
			t.Fatal(err)
		}
		dns.Set("hooks.test", "127.0.0.1")

		for _, tc := range []struct {
			key        string
			deliveries int
		}{{m.TestSecret, 2}, {m.LiveSecret, 1}} {
			deposit(t, e, tc.key)
			ds, raw := attemptedDeliveries(t, e, tc.key, tc.deliveries)
			for _, d := range ds {
				a := d["attempts"].([]any)[0].(map[string]any)
				if a["error"] != "refused_address" || a["statusCode"] != nil || a["responseBody"] != "" || a["success"] != false {
					t.Errorf("%s attempt: %v", tc.key[:9], a)
				}
				if d["lastError"] != "refused_address" || d["lastStatusCode"] != nil {
					t.Errorf("%s delivery: %v", tc.key[:9], d)
				}
			}
			// The old endpoint's own URL names the address; nothing else may.
			rest := strings.ReplaceAll(raw, inner.srv.URL+"/readyz", "")
			for _, leak := range []string{internalSecret, "127.0.0.1", "loopback", "dial"} {
				if strings.Contains(rest, leak) {
					t.Errorf("%s: the deliveries show %q: %s", tc.key[:9], leak, raw)
				}
			}
			list := string(e.REST("GET", "/webhooks", tc.key, nil).Expect(200).Body)
			if strings.Contains(list, internalSecret) {
				t.Errorf("the endpoint list shows the secret: %s", list)
			}
		}
		if n := inner.hits.Load(); n != 0 {
			t.Fatalf("the internal service got %d requests", n)
		}
		// Neither do the e-mails about the deposits.
		mails, err := e.App.DB.Reader().EmailNotification.Query().Where(emailnotification.EventType("deposit.success")).All(sys)
		if err != nil || len(mails) != 2 {
			t.Fatalf("%d e-mails, %v", len(mails), err)
		}
		for _, ml := range mails {
			if text := ml.Subject + ml.Body; strings.Contains(text, internalSecret) || strings.Contains(text, "127.0.0.1") {
				t.Errorf("e-mail: %s", text)
			}
		}
	})
}

// The same set-up with WEBHOOK_ALLOW_PRIVATE=true (the operator's local
// development) does reach the internal service and shows its answer: the
// refusals above are the guard's doing, not the set-up's.
func TestWebhookSSRFAllowPrivateReaches(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, dbURL string) {
		dns := ssrfDNS()
		inner := newSecretService(t)
		e := servertest.New(t, dbURL, append(fast, servertest.With("WEBHOOK_ALLOW_PRIVATE", "true"), servertest.WithWebhookResolver(dns.Resolver()))...)
		m := e.Merchant("Acme Pay")
		for _, key := range []string{m.TestSecret, m.LiveSecret} {
			e.REST("POST", "/webhooks", key, map[string]any{"url": "http://hooks.test:" + inner.port + "/x"}).Expect(201)
		}
		dns.Set("hooks.test", "127.0.0.1")
		for _, key := range []string{m.TestSecret, m.LiveSecret} {
			deposit(t, e, key)
			ds, _ := attemptedDeliveries(t, e, key, 1)
			a := ds[0]["attempts"].([]any)[0].(map[string]any)
			if a["responseBody"] != internalSecret || a["success"] != true {
				t.Errorf("%s attempt: %v", key[:9], a)
			}
		}
		if n := inner.hits.Load(); n != 2 {
			t.Fatalf("the internal service got %d requests, want 2", n)
		}
	})
}

// A receiver that cannot be reached reads as a classified word, without
// the address, port, resolver or dialer text behind it.
func TestWebhookDeliveryErrorsClassified(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := ln.Addr().String()
		ln.Close()
		_, port, _ := net.SplitHostPort(closed)

		m := e.Merchant("Acme Pay")
		for _, u := range []string{"http://" + closed + "/x", "http://missing.test:" + port + "/x"} {
			e.REST("POST", "/webhooks", m.TestSecret, map[string]any{"url": u}).Expect(201)
		}
		deposit(t, e, m.TestSecret)
		ds, raw := attemptedDeliveries(t, e, m.TestSecret, 2)
		want := map[string]string{"http://" + closed + "/x": "connection_refused", "http://missing.test:" + port + "/x": "dns_error"}
		for _, d := range ds {
			a := d["attempts"].([]any)[0].(map[string]any)
			if w := want[d["url"].(string)]; a["error"] != w || d["lastError"] != w || a["statusCode"] != nil {
				t.Errorf("%s: attempt %v, delivery lastError %v; want %s", d["url"], a, d["lastError"], w)
			}
		}
		// The URLs themselves name the address and port; nothing else may.
		rest := strings.NewReplacer("http://"+closed+"/x", "", "http://missing.test:"+port+"/x", "").Replace(raw)
		for _, leak := range []string{"127.0.0.1", port, ":53", "dial", "connect:", "lookup", "no such host"} {
			if strings.Contains(rest, leak) {
				t.Errorf("the deliveries show %q: %s", leak, raw)
			}
		}
	}, append(fast, servertest.WithWebhookResolver(ssrfDNS().Resolver()))...)
}

// A host name that resolves to nothing when the endpoint is saved (no such
// name, or name servers that fail or never answer) is taken, over REST and
// GraphQL, quickly; the guard then judges it at each delivery: once it
// resolves to an internal address it is refused there, and while it
// resolves to nothing the delivery reads dns_error and is retried.
func TestWebhookUnresolvedHostCheckedAtDelivery(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, dbURL string) {
		dns := ssrfDNS()
		inner := newSecretService(t)
		e := servertest.New(t, dbURL, append(fast, servertest.WithWebhookGuard(), servertest.WithWebhookResolver(dns.Resolver()))...)
		m := e.Merchant("Acme Pay")
		later, missing := "http://later.test:"+inner.port+"/x", "http://missing.test:"+inner.port+"/x"
		e.REST("POST", "/webhooks", m.TestSecret, map[string]any{"url": later}).Expect(201)
		e.GQL(m.TestSecret, createEndpointGQL, map[string]any{"u": missing}).GQLData()
		dns.Set("later.test", "127.0.0.1")

		deposit(t, e, m.TestSecret)
		want := map[string]string{later: "refused_address", missing: "dns_error"}
		ds, _ := attemptedDeliveries(t, e, m.TestSecret, 2)
		for _, d := range ds {
			a := d["attempts"].([]any)[0].(map[string]any)
			if w := want[d["url"].(string)]; a["error"] != w || d["lastError"] != w || a["statusCode"] != nil {
				t.Errorf("%s: attempt %v, delivery lastError %v; want %s", d["url"], a, d["lastError"], w)
			}
		}
		// The unresolved host's delivery is tried again on the schedule.
		e.Clock.Advance(1200 * time.Millisecond) // 1s ± 10% jitter
		servertest.Eventually(t, 15*time.Second, "a second attempt at the unresolved host", func() bool {
			r := e.GQL(m.TestSecret, deliveriesGQL, nil)
			for _, edge := range r.GQLData()["events"].(map[string]any)["edges"].([]any) {
				for _, d := range edge.(map[string]any)["node"].(map[string]any)["deliveries"].([]any) {
					d := d.(map[string]any)
					if d["url"] == missing && fmt.Sprint(d["attemptCount"]) == "2" {
						return d["lastError"] == "dns_error"
					}
				}
			}
			return false
		})
		if n := inner.hits.Load(); n != 0 {
			t.Fatalf("the internal service got %d requests", n)
		}
	})
}

// Name servers that never answer do not hold registration up past the
// lookup's bound (here 50ms, far below the production default), nor refuse
// the URL.
func TestWebhookRegistrationWithHangingDNS(t *testing.T) {
	hanging := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		start := time.Now()
		e.REST("POST", "/webhooks", m.LiveSecret, map[string]any{"url": "https://example.com/x"}).Expect(201)
		if d := time.Since(start); d >= hookwire.DefaultLookupTimeout {
			t.Errorf("registration took %v: the 50ms lookup bound was not used", d)
		}
	}, servertest.WithWebhookGuard(), servertest.WithWebhookResolver(hanging),
		servertest.WithWebhookLookupTimeout(50*time.Millisecond))
}
