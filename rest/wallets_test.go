package rest_test

import (
	"net/url"
	"reflect"
	"testing"
	"time"

	"merchantpay/server/servertest"
)

// TestWalletReadsShowFirstAccount checks that GET /wallets/{ref} and GET
// /wallets show as `account` what POST /wallets answered as data.account:
// the wallet's first account, oldest by creation; null for a wallet with
// none.
func TestWalletReadsShowFirstAccount(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		other := e.Merchant("Bola Foods")
		static := func(ref string) map[string]any {
			return map[string]any{"account_type": "static", "currency": "NGN", "account_reference": ref}
		}

		// Each wallet's first account has a reference that sorts between
		// its others', so no order by reference, first or last, finds it.
		// inline: created with a dynamic account, then given two more.
		posted := acctCreated(t, e.REST("POST", "/wallets", m.TestSecret, acctWallet("inline", map[string]any{
			"account": map[string]any{"account_type": "dynamic", "currency": "NGN", "amount": 750.25,
				"expires_at": 15, "reject_amount_criteria": "NONE", "account_reference": "m-inline"}})))["account"]
		if _, ok := posted.(map[string]any); !ok {
			t.Fatalf("POST data.account: %v", posted)
		}
		e.Clock.Advance(time.Minute)
		acctCreated(t, e.REST("POST", "/wallets/inline", m.TestSecret, static("a-later")))
		acctCreated(t, e.REST("POST", "/wallets/inline", m.TestSecret, static("z-later")))
		// later: created without one, then given three accounts.
		e.Clock.Advance(time.Minute)
		acctCreated(t, e.REST("POST", "/wallets", m.TestSecret, acctWallet("later", nil)))
		e.Clock.Advance(time.Minute)
		older := acctCreated(t, e.REST("POST", "/wallets/later", m.TestSecret, static("m-older")))
		e.Clock.Advance(time.Minute)
		acctCreated(t, e.REST("POST", "/wallets/later", m.TestSecret, static("z-newer")))
		acctCreated(t, e.REST("POST", "/wallets/later", m.TestSecret, static("a-newer")))
		// none: no account.
		e.Clock.Advance(time.Minute)
		acctCreated(t, e.REST("POST", "/wallets", m.TestSecret, acctWallet("none", map[string]any{"account": nil})))
		// Another merchant's wallet of the same reference, with an account.
		acctCreated(t, e.REST("POST", "/wallets", other.TestSecret, acctWallet("none", map[string]any{"account": static("other-1")})))

		want := map[string]any{"inline": posted, "later": older, "none": nil}
		for ref, acc := range want {
			w := e.REST("GET", "/wallets/"+ref, m.TestSecret, nil).Expect(200).Data()
			if got, ok := w["account"]; !ok || !reflect.DeepEqual(got, acc) {
				t.Errorf("GET /wallets/%s: account %v, want %v", ref, got, acc)
			}
			// accounts stays the full list, oldest first.
			accs, _ := w["accounts"].([]any)
			if acc == nil && len(accs) != 0 || acc != nil && (len(accs) != 3 || !reflect.DeepEqual(accs[0], acc)) {
				t.Errorf("GET /wallets/%s: accounts %v", ref, accs)
			}
		}

		// The list, a page of two at a time, shows the same.
		listed := map[string]any{}
		cursor := ""
		for pages := 0; pages < 5; pages++ {
			path := "/wallets?limit=2"
			if cursor != "" {
				path += "&cursor=" + url.QueryEscape(cursor)
			}
			r := e.REST("GET", path, m.TestSecret, nil).Expect(200)
			for _, item := range r.List() {
				w := item.(map[string]any)
				acc, ok := w["account"]
				if !ok {
					t.Errorf("listed wallet %v has no account field", w["wallet_reference"])
				}
				listed[w["wallet_reference"].(string)] = acc
			}
			meta, _ := r.JSON["meta"].(map[string]any)
			next, _ := meta["next_cursor"].(string)
			if more, _ := meta["has_more"].(bool); !more || next == "" {
				break
			}
			cursor = next
		}
		if !reflect.DeepEqual(listed, want) {
			t.Errorf("GET /wallets accounts:\n got %v\nwant %v", listed, want)
		}
	})
}
