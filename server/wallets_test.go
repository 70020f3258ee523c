package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"merchantpay/server/servertest"
)

// sampleWallet is the spec's sample wallet request.
func sampleWallet(ref string) map[string]any {
	return map[string]any{
		"compliance": map[string]any{
			"phone":     "+2348012345678",
			"firstname": "Chinedu",
			"lastname":  "Okafor",
			"email":     "chinedu.okafor@example.com",
			"documents": []any{map[string]any{
				"document_type":      "INTERNATIONAL_PASSPORT",
				"document_file":      "https://files.example.com/passport.png",
				"document_file_type": "url",
				"document_no":        "A01234567",
			}},
		},
		"wallet_reference": ref,
		"account":          nil,
	}
}

func TestCreateWalletSample(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		r := e.REST("POST", "/wallets", m.TestSecret, sampleWallet("cust-001")).Expect(201)
		if r.JSON["status"] != true || r.JSON["statusCode"] != json.Number("201") {
			t.Fatalf("envelope: %s", r.Body)
		}
		if msg, _ := r.JSON["message"].(string); !strings.Contains(strings.ToLower(msg), "created") {
			t.Errorf("message %q does not say created", msg)
		}
		d := r.Data()
		if d["full_name"] != "Chinedu Okafor" || d["wallet_reference"] != "cust-001" {
			t.Errorf("data: %v", d)
		}
		c := d["compliance"].(map[string]any)
		for k, want := range map[string]string{"phone": "+2348012345678", "firstname": "Chinedu", "lastname": "Okafor", "email": "chinedu.okafor@example.com"} {
			if c[k] != want {
				t.Errorf("compliance.%s = %v, want %s", k, c[k], want)
			}
		}
		docs := c["documents"].([]any)
		doc := docs[0].(map[string]any)
		if len(docs) != 1 || doc["document_type"] != "INTERNATIONAL_PASSPORT" || doc["document_no"] != "A01234567" ||
			doc["document_file"] != "https://files.example.com/passport.png" || doc["document_file_type"] != "url" {
			t.Errorf("documents: %v", docs)
		}
		if r.Header.Get("X-Request-Id") == "" {
			t.Error("no X-Request-Id")
		}

		// The reference is optional and generated; document_number is accepted too.
		body := sampleWallet("")
		delete(body, "wallet_reference")
		d0 := body["compliance"].(map[string]any)["documents"].([]any)[0].(map[string]any)
		delete(d0, "document_no")
		d0["document_number"] = "B999"
		r = e.REST("POST", "/wallets", m.TestSecret, body).Expect(201)
		if ref, _ := r.Data()["wallet_reference"].(string); len(ref) != 36 {
			t.Errorf("generated reference %q is not a UUID", ref)
		}
		if got := r.Data()["compliance"].(map[string]any)["documents"].([]any)[0].(map[string]any)["document_no"]; got != "B999" {
			t.Errorf("document_no = %v", got)
		}
	})
}

func TestCreateWalletErrors(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		e.REST("POST", "/wallets", m.TestSecret, sampleWallet("dup")).Expect(201)
		r := e.REST("POST", "/wallets", m.TestSecret, sampleWallet("dup")).Expect(409)
		if r.Code() != "DUPLICATE_REFERENCE" {
			t.Errorf("code %s", r.Code())
		}

		bad := sampleWallet("three-bad")
		c := bad["compliance"].(map[string]any)
		c["email"] = "not-an-email"
		c["phone"] = 12345
		c["documents"].([]any)[0].(map[string]any)["document_type"] = "LIBRARY_CARD"
		r = e.REST("POST", "/wallets", m.TestSecret, bad).Expect(400)
		fields := r.Fields()
		sort.Strings(fields)
		want := []string{"compliance.documents[0].document_type", "compliance.email", "compliance.phone"}
		if r.Code() != "VALIDATION_ERROR" || fmt.Sprint(fields) != fmt.Sprint(want) {
			t.Errorf("code %s fields %v, want %v", r.Code(), fields, want)
		}
		if r.JSON["status"] != false || r.JSON["data"] != nil {
			t.Errorf("error envelope: %s", r.Body)
		}
		// Nothing was written: the reference is still free.
		e.REST("POST", "/wallets", m.TestSecret, sampleWallet("three-bad")).Expect(201)

		for name, body := range map[string]string{
			"malformed": `{"compliance": {`,
			"array":     `[1,2]`,
			"string":    `"wallet"`,
			"empty":     ``,
			"two":       `{} {}`,
		} {
			r := e.REST("POST", "/wallets", m.TestSecret, body)
			if r.Status != 400 || r.Code() != "BAD_REQUEST" {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}
		r = e.REST("POST", "/wallets", m.TestSecret, `{}`).Expect(400)
		if r.Code() != "VALIDATION_ERROR" || fmt.Sprint(r.Fields()) != "[compliance]" {
			t.Errorf("empty object: %s", r.Body)
		}
		r = e.REST("POST", "/wallets", m.TestSecret, `{"compliance":{"documents":[]}}`).Expect(400)
		if len(r.Fields()) != 5 {
			t.Errorf("every missing field at once: %v", r.Fields())
		}
		r = e.REST("POST", "/wallets", m.TestSecret, "{}", "Content-Type", "text/plain").Expect(415)
		if r.Code() != "UNSUPPORTED_MEDIA_TYPE" {
			t.Errorf("code %s", r.Code())
		}
		big := `{"x":"` + strings.Repeat("a", 1<<20) + `"}`
		if r := e.REST("POST", "/wallets", m.TestSecret, big).Expect(413); r.Code() != "PAYLOAD_TOO_LARGE" {
			t.Errorf("code %s", r.Code())
		}
	})
}

// keyCase is a key a route is called with, and the answer it gets.
type keyCase struct {
	name, key string
	status    int
	code      string
}

// badKeys are the keys every secret-key route of m's refuses.
func badKeys(m servertest.Merchant) []keyCase {
	return []keyCase{
		{"no key", "", 401, "UNAUTHORIZED"},
		{"unknown key", "SECK_TEST_00000000-0000-0000-0000-000000000000", 401, "UNAUTHORIZED"},
		{"garbage", "hello", 401, "UNAUTHORIZED"},
		{"public key", m.TestPublic, 403, "FORBIDDEN"},
	}
}

func TestAuthAndScoping(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		a, b := e.Merchant("Alpha"), e.Merchant("Beta")
		body := sampleWallet("shared-ref")
		for _, c := range badKeys(a) {
			r := e.REST("POST", "/wallets", c.key, body)
			if r.Status != c.status || r.Code() != c.code {
				t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
			}
		}
		e.REST("POST", "/wallets", a.TestSecret, body, "X-API-KEY", "", "Authorization", "Bearer "+a.TestSecret).Expect(201)
		e.REST("GET", "/wallets/shared-ref", a.TestSecret, nil).Expect(200)
		// Another merchant and the other mode see nothing: 404, never 403.
		for name, key := range map[string]string{"other merchant": b.TestSecret, "other mode": a.LiveSecret} {
			if r := e.REST("GET", "/wallets/shared-ref", key, nil); r.Status != 404 || r.Code() != "NOT_FOUND" {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}
		// The same reference is free in another tenant.
		e.REST("POST", "/wallets", b.TestSecret, body).Expect(201)
		e.REST("POST", "/wallets", a.LiveSecret, body).Expect(201)
		if n := len(e.REST("GET", "/wallets", a.TestSecret, nil).Expect(200).List()); n != 1 {
			t.Errorf("merchant a test sees %d wallets", n)
		}
		// Unknown paths are 404 with or without a key; known paths with a wrong method 405.
		if r := e.REST("GET", "/nothing-here", "", nil); r.Status != 404 || r.Code() != "NOT_FOUND" {
			t.Errorf("unknown path: %d %s", r.Status, r.Body)
		}
		if r := e.REST("PUT", "/wallets", a.TestSecret, "{}"); r.Status != 405 || r.Code() != "METHOD_NOT_ALLOWED" {
			t.Errorf("wrong method: %d %s", r.Status, r.Body)
		}
		// Rolling voids the old key at once.
		rolled, err := e.App.Merchants.RollKeys(t.Context(), a.ID, "test")
		if err != nil {
			t.Fatal(err)
		}
		if r := e.REST("GET", "/wallets/shared-ref", a.TestSecret, nil); r.Status != 401 {
			t.Errorf("rolled key: %d", r.Status)
		}
		e.REST("GET", "/wallets/shared-ref", rolled.SecretKey, nil).Expect(200)
		// GraphQL needs a secret key too.
		if r := e.GQL(rolled.PublicKey, `{ me { id } }`, nil); r.Status != 403 || r.Code() != "FORBIDDEN" {
			t.Errorf("graphql public key: %d %s", r.Status, r.Body)
		}
		if r := e.GQL("", `{ me { id } }`, nil); r.Status != 401 || r.Code() != "UNAUTHORIZED" {
			t.Errorf("graphql no key: %d %s", r.Status, r.Body)
		}
	})
}

func TestIdempotency(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		first := e.REST("POST", "/wallets", m.TestSecret, sampleWallet("idem-1"), "Idempotency-Key", "key-1").Expect(201)
		again := e.REST("POST", "/wallets", m.TestSecret, sampleWallet("idem-1"), "Idempotency-Key", "key-1").Expect(201)
		if string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay differs or unmarked:\n%s\n%s", first.Body, again.Body)
		}
		if first.Header.Get("Idempotent-Replayed") != "" {
			t.Error("first answer marked as replayed")
		}
		r := e.REST("POST", "/wallets", m.TestSecret, sampleWallet("idem-2"), "Idempotency-Key", "key-1").Expect(409)
		if r.Code() != "IDEMPOTENCY_KEY_REUSED" {
			t.Errorf("code %s", r.Code())
		}
		// Error answers below 500 are stored and replayed too.
		bad := e.REST("POST", "/wallets", m.TestSecret, `{}`, "Idempotency-Key", "key-bad").Expect(400)
		badAgain := e.REST("POST", "/wallets", m.TestSecret, `{}`, "Idempotency-Key", "key-bad").Expect(400)
		if string(bad.Body) != string(badAgain.Body) || badAgain.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("error replay: %s", badAgain.Body)
		}
		if r := e.REST("POST", "/wallets", m.TestSecret, sampleWallet("idem-3"), "Idempotency-Key", strings.Repeat("k", 256)); r.Status != 400 || r.Code() != "VALIDATION_ERROR" {
			t.Errorf("long key: %d %s", r.Status, r.Body)
		}
		// The bound counts characters, not bytes: 255 two-byte characters
		// are a key, stored and replayed; 256 are too many.
		wide := strings.Repeat("é", 255)
		e.REST("POST", "/wallets", m.TestSecret, sampleWallet("idem-wide"), "Idempotency-Key", wide).Expect(201)
		if r := e.REST("POST", "/wallets", m.TestSecret, sampleWallet("idem-wide"), "Idempotency-Key", wide).Expect(201); r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("a key of 255 two-byte characters is not replayed: %s", r.Body)
		}
		if r := e.REST("POST", "/wallets", m.TestSecret, sampleWallet("idem-wider"), "Idempotency-Key", wide+"é"); r.Status != 400 || r.Code() != "VALIDATION_ERROR" {
			t.Errorf("a key of 256 characters: %d %s", r.Status, r.Body)
		}
		// Keys are per merchant: another merchant's identical key is independent.
		other := e.Merchant("Other")
		e.REST("POST", "/wallets", other.TestSecret, sampleWallet("idem-1"), "Idempotency-Key", "key-1").Expect(201)

		// Concurrent duplicates under one key create one wallet.
		const n = 20
		var wg sync.WaitGroup
		statuses := make([]int, n)
		bodies := make([]string, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r := e.REST("POST", "/wallets", m.TestSecret, sampleWallet("race"), "Idempotency-Key", "race-key")
				statuses[i], bodies[i] = r.Status, string(r.Body)
			}(i)
		}
		wg.Wait()
		created := ""
		for i, s := range statuses {
			switch s {
			case 201:
				if created != "" && bodies[i] != created {
					t.Errorf("two different 201 bodies:\n%s\n%s", created, bodies[i])
				}
				created = bodies[i]
			case 409:
				if !strings.Contains(bodies[i], "IDEMPOTENCY_KEY_IN_USE") {
					t.Errorf("409 that is not IN_USE: %s", bodies[i])
				}
			default:
				t.Errorf("status %d: %s", s, bodies[i])
			}
		}
		list := e.REST("GET", "/wallets?limit=100", m.TestSecret, nil).Expect(200).List()
		count := 0
		for _, w := range list {
			if w.(map[string]any)["wallet_reference"] == "race" {
				count++
			}
		}
		if count != 1 {
			t.Errorf("%d wallets for one idempotency key", count)
		}
	})
}

func TestWalletPagination(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		for i := 0; i < 5; i++ {
			e.REST("POST", "/wallets", m.TestSecret, sampleWallet(fmt.Sprintf("p-%d", i))).Expect(201)
			e.Clock.Advance(1000000) // 1 ms apart
		}
		var got []string
		cursor := ""
		for page := 0; page < 5; page++ {
			path := "/wallets?limit=2"
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			r := e.REST("GET", path, m.TestSecret, nil).Expect(200)
			for _, w := range r.List() {
				got = append(got, w.(map[string]any)["wallet_reference"].(string))
			}
			meta := r.JSON["meta"].(map[string]any)
			if meta["has_more"] != true {
				if meta["next_cursor"] != nil {
					t.Errorf("next_cursor on the last page: %v", meta)
				}
				break
			}
			cursor = meta["next_cursor"].(string)
		}
		if fmt.Sprint(got) != "[p-4 p-3 p-2 p-1 p-0]" {
			t.Errorf("pages: %v", got)
		}
		for _, q := range []string{"limit=0", "limit=101", "limit=x", "cursor=!!"} {
			if r := e.REST("GET", "/wallets?"+q, m.TestSecret, nil); r.Status != 400 || r.Code() != "VALIDATION_ERROR" {
				t.Errorf("%s: %d %s", q, r.Status, r.Body)
			}
		}
	})
}

func TestWalletGraphQLParity(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		rest := e.REST("POST", "/wallets", m.TestSecret, sampleWallet("par-1")).Expect(201).Data()
		q := `query($ref: String!) { wallet(reference: $ref) { walletReference fullName createdAt
			compliance { phone firstname lastname email documents { documentType documentFile documentFileType documentNo } } } }`
		g := e.GQL(m.TestSecret, q, map[string]any{"ref": "par-1"}).Expect(200).GQLData()["wallet"].(map[string]any)
		gc := g["compliance"].(map[string]any)
		rc := rest["compliance"].(map[string]any)
		if g["walletReference"] != rest["wallet_reference"] || g["fullName"] != rest["full_name"] ||
			g["createdAt"] != rest["created_at"] || gc["email"] != rc["email"] || gc["phone"] != rc["phone"] {
			t.Errorf("REST %v\nGraphQL %v", rest, g)
		}
		gd := gc["documents"].([]any)[0].(map[string]any)
		rd := rc["documents"].([]any)[0].(map[string]any)
		if gd["documentNo"] != rd["document_no"] || gd["documentType"] != rd["document_type"] {
			t.Errorf("documents differ: %v %v", gd, rd)
		}

		// createWallet through GraphQL is visible over REST, and honours
		// idempotency through the input field.
		mut := `mutation($in: CreateWalletInput!) { createWallet(input: $in) { walletReference fullName } }`
		in := map[string]any{"walletReference": "gql-1", "idempotencyKey": "g-key", "compliance": map[string]any{
			"phone": "08012345678", "firstname": "Ama", "lastname": "Mensah", "email": "ama@example.com",
			"documents": []any{map[string]any{"documentType": "NATIONAL_ID", "documentFile": "https://x.example/id.png", "documentFileType": "link", "documentNo": "GHA-1"}},
		}}
		one := e.GQL(m.TestSecret, mut, map[string]any{"in": in}).Expect(200)
		two := e.GQL(m.TestSecret, mut, map[string]any{"in": in}).Expect(200)
		if one.GQLData()["createWallet"].(map[string]any)["fullName"] != "Ama Mensah" || string(one.Body) != string(two.Body) ||
			two.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("graphql idempotency: %s / %s", one.Body, two.Body)
		}
		e.REST("GET", "/wallets/gql-1", m.TestSecret, nil).Expect(200)
		dup := e.GQL(m.TestSecret, mut, map[string]any{"in": map[string]any{"walletReference": "gql-1", "compliance": in["compliance"]}})
		if dup.Code() != "DUPLICATE_REFERENCE" {
			t.Errorf("graphql duplicate: %s", dup.Body)
		}
		bad := e.GQL(m.TestSecret, mut, map[string]any{"in": map[string]any{"compliance": map[string]any{
			"phone": "x", "firstname": "A", "lastname": "B", "email": "nope", "documents": []any{}}}})
		if bad.Code() != "VALIDATION_ERROR" {
			t.Errorf("graphql validation: %s", bad.Body)
		}
		me := e.GQL(m.TestSecret, `{ me { id name mode } }`, nil).GQLData()["me"].(map[string]any)
		if me["id"] != m.ID || me["mode"] != "TEST" {
			t.Errorf("me: %v", me)
		}
		conn := e.GQL(m.TestSecret, `{ wallets(first: 1) { edges { cursor node { walletReference } } pageInfo { hasNextPage endCursor } } }`, nil).GQLData()
		pi := conn["wallets"].(map[string]any)["pageInfo"].(map[string]any)
		if pi["hasNextPage"] != true {
			t.Errorf("pageInfo: %v", pi)
		}
		if r := e.GQL(m.TestSecret, `{ wallets(first: 101) { edges { cursor } } }`, nil); r.Code() != "VALIDATION_ERROR" {
			t.Errorf("first over 100: %s", r.Body)
		}
		if r := e.Do(http.MethodDelete, "/graphql", m.TestSecret, nil); r.Status != 405 {
			t.Errorf("DELETE /graphql: %d", r.Status)
		}
	})
}
