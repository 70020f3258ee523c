package accounts

import (
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/internal/testdb"
)

// TestFirstOfWallets checks that each wallet's first account is its oldest
// by creation: by created_at first, even against the id order, and by id
// between accounts of one instant. A wallet without accounts, and another
// merchant's wallet, have no entry.
func TestFirstOfWallets(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		f := setup(t, url)
		start := f.clock.Now()
		wallet := func(ref string, acc *CreateInput) *ent.Wallet {
			t.Helper()
			w, _, err := f.svc.CreateWallet(f.a, nil, walletInput(ref), acc)
			if err != nil {
				t.Fatal(err)
			}
			return w
		}
		account := func(walletRef, ref string) *ent.FiatAccount {
			t.Helper()
			a, err := f.svc.Create(f.a, nil, walletRef, CreateInput{AccountType: str(Static), Currency: str("NGN"), Reference: str(ref)}, "")
			if err != nil {
				t.Fatal(err)
			}
			return a
		}

		// Each wallet's first account has a reference that sorts between
		// its others', so no order by reference, first or last, finds it.
		// inline: created with its account, then two more, later.
		inline := wallet("inline", &CreateInput{AccountType: str(Static), Currency: str("NGN"), Reference: str("m-inline")})
		f.clock.Advance(time.Minute)
		account("inline", "a-later")
		account("inline", "z-later")
		// backdated: its third account is stamped an hour before the
		// others, so the oldest by creation is neither the first nor the
		// last by id.
		backdated := wallet("backdated", nil)
		account("backdated", "a-newer")
		account("backdated", "z-newer")
		f.clock.Set(start.Add(-time.Hour))
		account("backdated", "m-older")
		f.clock.Set(start.Add(2 * time.Minute))
		account("backdated", "b-newest")
		// instant: three accounts of one instant, told apart by id.
		instant := wallet("instant", nil)
		account("instant", "m-tied")
		account("instant", "z-tied")
		account("instant", "a-tied")
		empty := wallet("empty", nil)
		// Another merchant's wallet with an account.
		other, _, err := f.svc.CreateWallet(f.b, nil, walletInput("other"),
			&CreateInput{AccountType: str(Static), Currency: str("NGN"), Reference: str("other-1")})
		if err != nil {
			t.Fatal(err)
		}

		first, err := f.svc.FirstOfWallets(f.a, nil, []*ent.Wallet{inline, backdated, instant, empty, other})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for id, a := range first {
			got[id] = a.Reference
		}
		if len(got) != 3 || got[inline.ID] != "m-inline" || got[backdated.ID] != "m-older" || got[instant.ID] != "m-tied" {
			t.Errorf("first accounts %v; want inline m-inline, backdated m-older, instant m-tied, none for empty and other", got)
		}
		// The same as ForWallet's first, which GET /wallets/{ref} shows.
		for _, w := range []*ent.Wallet{inline, backdated, instant} {
			all, err := f.svc.ForWallet(f.a, nil, w)
			if err != nil {
				t.Fatal(err)
			}
			if len(all) == 0 || all[0].ID != first[w.ID].ID {
				t.Errorf("wallet %s: ForWallet's first is not FirstOfWallets'", w.Reference)
			}
		}
		if none, err := f.svc.FirstOfWallets(f.a, nil, nil); err != nil || len(none) != 0 {
			t.Errorf("no wallets: %v %v", none, err)
		}
	})
}
