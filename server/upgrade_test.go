package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

// lastAutoMigratingRelease is the last commit whose service created and
// updated the schema with ent's auto-migration instead of versioned
// migrations.
const lastAutoMigratingRelease = "9d2602e"

// buildRelease builds the service at commit rev from this repository's
// history into dir. It skips when the history lacks the commit (a shallow
// clone), except under CI=true.
func buildRelease(t *testing.T, rev, dir string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("short: skips building an earlier release")
	}
	git := func(args ...string) ([]byte, error) { return exec.Command("git", args...).Output() }
	root, err := git("rev-parse", "--show-toplevel")
	if err == nil {
		_, err = git("-C", strings.TrimSpace(string(root)), "cat-file", "-e", rev+"^{commit}")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("commit %s is not in this repository's history (%v); CI needs the full history", rev, err)
		}
		t.Skipf("commit %s is not in this repository's history (a shallow clone?): %v", rev, err)
	}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", strings.TrimSpace(string(root)), rev, src)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("extracting %s: %v\n%s", rev, err, out)
	}
	bin := filepath.Join(dir, "server-"+rev)
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", rev, err, out)
	}
	return bin
}

// A database made and filled by the last release that migrated
// automatically is adopted by this one without losing or changing
// anything: every answer the old service gave, read again from the new one,
// has the same fields with the same values (new fields allowed), balances
// included, and the old keys and webhook endpoint still work.
func TestUpgradeFromAutoMigratedRelease(t *testing.T) {
	old := buildRelease(t, lastAutoMigratingRelease, t.TempDir())
	testdb.Each(t, func(t *testing.T, dbURL string) {
		hooks := newReceiver(t, func(int) int { return 200 })
		addr := freePort(t)
		base := "http://" + addr
		env := append(os.Environ(), "DATABASE_URL="+dbURL, "LISTEN_ADDR="+addr, "PUBLIC_BASE_URL="+base,
			"WEBHOOK_ALLOW_PRIVATE=true", "SANDBOX_PAYOUT_DELAY=300ms", "JOBS_POLL_INTERVAL=100ms",
			"EVENTS_POLL_INTERVAL=100ms", "RATE_LIMIT=0", "PRICE_SOURCE=static", "LOG_LEVEL=warn")

		var created map[string]string
		cmd := exec.Command(old, "merchant", "create", "--name", "Old Co", "--email", "ops@old.example")
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("old merchant create: %v", err)
		}
		if err := json.Unmarshal(out, &created); err != nil || created["test_secret_key"] == "" {
			t.Fatalf("old merchant create printed %q: %v", out, err)
		}
		key, pub := created["test_secret_key"], created["test_public_key"]

		srv := exec.Command(old, "serve")
		srv.Env = env
		var logs bytes.Buffer
		srv.Stderr = &logs
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		defer srv.Process.Kill() //nolint:errcheck
		servertest.Eventually(t, 30*time.Second, "the old service to listen", func() bool {
			res, err := http.Get(base + "/healthz")
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == 200
		})
		// The helpers of servertest only need a URL to talk to a service.
		o := &servertest.Env{T: t, URL: base}

		hook := o.REST("POST", "/webhooks", key, map[string]any{"url": hooks.srv.URL + "/hooks"}).Expect(201).Data()
		for _, ref := range []string{"up-1", "up-2"} {
			o.REST("POST", "/wallets", key, sampleWallet(ref)).Expect(201)
		}
		static := o.REST("POST", "/wallets/up-1", key, map[string]any{"account_type": "static", "currency": "NGN"}).Expect(201).Data()
		o.REST("POST", "/wallets/up-2", key, map[string]any{"account_type": "dynamic", "currency": "NGN", "amount": 1500, "expires_at": 60}).Expect(201)
		global := o.REST("POST", "/accounts", key, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()
		o.REST("POST", "/sandbox/balances/fund", key, map[string]any{"currency": "NGN", "amount": 5000}).Expect(200)
		o.REST("POST", "/sandbox/balances/fund", key, map[string]any{"currency": "USDT", "amount": 12.5}).Expect(200)
		for _, acc := range []map[string]any{static, global} {
			o.REST("POST", "/sandbox/deposits/bank-transfer", key, map[string]any{"account_number": acc["account_number"], "amount": 2500}).Expect(200)
		}
		wd := o.REST("POST", "/transactions/withdraw", key, map[string]any{"amount": 1000, "currency": "NGN", "reference": "up-payout",
			"beneficiary": map[string]any{"email": "ada@example.com", "bank": "058", "account_name": "Ada Obi", "account_number": "0123456789"}}).Data()
		wdRef, _ := wd["reference"].(string)
		servertest.Eventually(t, 60*time.Second, "the withdrawal to settle", func() bool {
			r := o.REST("GET", "/transactions/"+wdRef, key, nil)
			return r.Status == 200 && r.Data()["status"] == "success"
		})
		const eventsQuery = `{ events(first: 10) { edges { cursor node { id event createdAt
			transaction { reference merchantReference type status amount currency fee settledAt walletReference accountReference createdAt }
			deliveries { id eventId endpointId url status attemptCount lastStatusCode createdAt completedAt } } } } }`
		servertest.Eventually(t, 60*time.Second, "every webhook delivered", func() bool {
			edges, _ := o.GQL(key, eventsQuery, nil).GQLData()["events"].(map[string]any)["edges"].([]any)
			if len(edges) < 4 { // two deposits, the payout's pending and success
				return false
			}
			for _, e := range edges {
				for _, d := range e.(map[string]any)["node"].(map[string]any)["deliveries"].([]any) {
					if d.(map[string]any)["status"] != "succeeded" {
						return false
					}
				}
			}
			return true
		})

		reads := []string{"/wallets", "/wallets/up-1", "/wallets/up-2", "/transactions", "/transactions/" + wdRef,
			"/transactions/up-payout", "/balances", "/webhooks"}
		for _, e := range o.REST("GET", "/transactions?limit=100", key, nil).Expect(200).List() {
			reads = append(reads, "/transactions/"+e.(map[string]any)["reference"].(string))
		}
		before := map[string]any{}
		for _, path := range reads {
			before[path] = o.REST("GET", path, key, nil).Expect(200).JSON
		}
		before["graphql events"] = o.GQL(key, eventsQuery, nil).Expect(200).JSON
		before["graphql me"] = o.GQL(key, `{ me { id name email } balances { currency available } }`, nil).Expect(200).JSON
		hitsBefore := hooks.count()

		if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := srv.Wait(); err != nil {
			t.Fatalf("old service after SIGTERM: %v\n%s", err, logs.String())
		}

		// The new code on the same database.
		n := servertest.New(t, dbURL, servertest.With("PUBLIC_BASE_URL", base), servertest.With("EVENTS_POLL_INTERVAL", "50ms"))
		if err := n.App.DB.RequireMigrated(context.Background()); err != nil {
			t.Errorf("after adoption: %v", err)
		}
		after := map[string]any{}
		for _, path := range reads {
			after[path] = n.REST("GET", path, key, nil).Expect(200).JSON
		}
		after["graphql events"] = n.GQL(key, eventsQuery, nil).Expect(200).JSON
		after["graphql me"] = n.GQL(key, `{ me { id name email } balances { currency available } }`, nil).Expect(200).JSON
		for what, was := range before {
			for _, d := range differences(was, after[what], what) {
				if intended(d, after) {
					continue
				}
				t.Error(d)
			}
		}

		// The keys, the accounts and the webhook endpoint still work.
		n.REST("GET", "/misc/banks?country=NG", pub, nil).Expect(200)
		n.REST("POST", "/wallets", key, sampleWallet("up-3")).Expect(201)
		n.REST("POST", "/sandbox/deposits/bank-transfer", key, map[string]any{"account_number": static["account_number"], "amount": 100}).Expect(200)
		servertest.Eventually(t, 30*time.Second, "a webhook to the endpoint made by the old release", func() bool {
			return hooks.count() > hitsBefore
		})
		if id, _ := hook["id"].(string); id == "" {
			t.Errorf("webhook endpoint: %v", hook)
		}
	})
}

// intended says whether difference d (as differences writes it) is one
// this code makes on purpose against the old release: a wallet read, one
// or in the list, now shows as account the wallet's first fiat account,
// the first of its accounts as its own GET lists them, where the old
// release answered null.
func intended(d string, after map[string]any) bool {
	path, _, ok := strings.Cut(d, ": was <nil>, now ")
	if !ok || !strings.HasSuffix(path, ".account") {
		return false
	}
	var shown any
	var ref string
	if r, one := strings.CutPrefix(strings.TrimSuffix(path, ".data.account"), "/wallets/"); one {
		ref = r
		shown = field(after["/wallets/"+ref], "data", "account")
	} else {
		var i int
		if _, err := fmt.Sscanf(path, "/wallets.data[%d].account", &i); err != nil {
			return false
		}
		list, _ := field(after["/wallets"], "data").([]any)
		if i >= len(list) {
			return false
		}
		ref, _ = field(list[i], "wallet_reference").(string)
		shown = field(list[i], "account")
	}
	accounts, _ := field(after["/wallets/"+ref], "data", "accounts").([]any)
	return len(accounts) > 0 && reflect.DeepEqual(shown, accounts[0])
}

// field walks v's objects by keys; nil where one is missing.
func field(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// count is how many requests the receiver got.
func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.hits)
}

// differences lists where now lost or changed something of was: every
// field of was must be in now with an equal value (now may have more
// fields); lists must match item for item.
func differences(was, now any, at string) []string {
	switch w := was.(type) {
	case map[string]any:
		n, ok := now.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: was an object, now %v", at, now)}
		}
		var out []string
		for k, v := range w {
			nv, ok := n[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: lost (was %v)", at, k, v))
				continue
			}
			out = append(out, differences(v, nv, at+"."+k)...)
		}
		return out
	case []any:
		n, ok := now.([]any)
		if !ok || len(n) != len(w) {
			return []string{fmt.Sprintf("%s: was %d items, now %v", at, len(w), now)}
		}
		var out []string
		for i := range w {
			out = append(out, differences(w[i], n[i], fmt.Sprintf("%s[%d]", at, i))...)
		}
		return out
	default:
		if !reflect.DeepEqual(was, now) {
			return []string{fmt.Sprintf("%s: was %v, now %v", at, was, now)}
		}
		return nil
	}
}
