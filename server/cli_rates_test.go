package server_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"merchantpay/internal/testdb"
	"merchantpay/server"
)

// runCLI runs the command line as the operator would, one process (one App)
// per call, so each call is also a restart.
func runCLI(t *testing.T, args ...string) (code int, out []byte, errOut string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code = server.Main(args, &stdout, &stderr)
	return code, stdout.Bytes(), stderr.String()
}

func TestPairsCLI(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		t.Setenv("DATABASE_URL", url)
		t.Setenv("PRICE_SOURCE", "static")
		t.Setenv("LOG_LEVEL", "error")
		t.Setenv("PAIRS_CONFIG", "")

		code, out, stderr := runCLI(t, "merchant", "create", "--name", "CLI Pairs", "--email", "cli@example.com")
		if code != 0 {
			t.Fatalf("merchant create: %d %s", code, stderr)
		}
		var mc struct {
			MerchantID string `json:"merchant_id"`
		}
		if err := json.Unmarshal(out, &mc); err != nil || mc.MerchantID == "" {
			t.Fatalf("merchant create printed %s", out)
		}

		list := func() map[string]map[string]any {
			t.Helper()
			code, out, stderr := runCLI(t, "pairs", "list")
			if code != 0 {
				t.Fatalf("pairs list: %d %s", code, stderr)
			}
			dec := json.NewDecoder(bytes.NewReader(out))
			dec.UseNumber()
			var rows []map[string]any
			if err := dec.Decode(&rows); err != nil {
				t.Fatalf("pairs list printed %s", out)
			}
			byID := map[string]map[string]any{}
			for _, r := range rows {
				byID[r["pair"].(string)] = r
			}
			return byID
		}
		pairs := list()
		if len(pairs) != 10 || pairs["USDT/NGN"]["mid"] != json.Number("1600") || pairs["USDT/NGN"]["market_mid"] != json.Number("1600") {
			t.Fatalf("pairs list: %v", pairs["USDT/NGN"])
		}
		if fees, _ := pairs["BTC/GHS"]["fees"].(map[string]any); len(fees) != 3 {
			t.Errorf("fees: %v", pairs["BTC/GHS"]["fees"])
		}

		code, out, stderr = runCLI(t, "pairs", "set-mid", "--pair", "USDT/NGN", "--mid", "1650.5")
		if code != 0 || !strings.Contains(string(out), `"mid": 1650.5`) {
			t.Fatalf("set-mid: %d %s %s", code, out, stderr)
		}
		// A restart with the same file keeps the CLI's mid.
		if got := list()["USDT/NGN"]["mid"]; got != json.Number("1650.5") {
			t.Fatalf("mid after restart: %v", got)
		}

		for _, c := range []struct {
			sub  string
			want bool
		}{{"disable", false}, {"enable", true}} {
			code, out, stderr = runCLI(t, "pairs", c.sub, "--merchant", mc.MerchantID, "--pair", "BTC/NGN")
			var st struct {
				MerchantID string `json:"merchant_id"`
				Pair       string `json:"pair"`
				Enabled    bool   `json:"enabled"`
			}
			if code != 0 || json.Unmarshal(out, &st) != nil || st.MerchantID != mc.MerchantID || st.Pair != "BTC/NGN" || st.Enabled != c.want {
				t.Errorf("%s: %d %s %s", c.sub, code, out, stderr)
			}
		}

		for _, args := range [][]string{
			{"pairs", "set-mid", "--pair", "XYZ/NGN", "--mid", "1"},
			{"pairs", "set-mid", "--pair", "USDT/NGN", "--mid", "abc"},
			{"pairs", "set-mid", "--pair", "USDT/GHS", "--mid", "-1"},
			{"pairs", "disable", "--merchant", "nobody", "--pair", "BTC/NGN"},
			{"pairs", "enable", "--merchant", mc.MerchantID, "--pair", "USDC/USD"},
		} {
			if code, _, stderr := runCLI(t, args...); code != 1 || !strings.Contains(stderr, "error:") {
				t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
			}
		}
		if code, _, _ := runCLI(t, "pairs", "frobnicate"); code != 2 {
			t.Errorf("unknown subcommand: exit %d", code)
		}

		// Editing the pair's entry in the file wins over the CLI's mid.
		def, err := os.ReadFile("../internal/rates/pairs.json")
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(string(def), `"mid": "1600"`, `"mid": "1700"`, 1)
		path := filepath.Join(t.TempDir(), "pairs.json")
		if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PAIRS_CONFIG", path)
		pairs = list()
		if pairs["USDT/NGN"]["mid"] != json.Number("1700") || pairs["BTC/NGN"]["mid"] != json.Number("150000000") {
			t.Fatalf("after editing the file: USDT/NGN %v, BTC/NGN %v", pairs["USDT/NGN"]["mid"], pairs["BTC/NGN"]["mid"])
		}
		t.Setenv("PAIRS_CONFIG", filepath.Join(t.TempDir(), "missing.json"))
		if code, _, _ := runCLI(t, "pairs", "list"); code != 1 {
			t.Errorf("missing PAIRS_CONFIG: exit %d", code)
		}
	})
}

// merchant create checks the e-mail as the API checks every other one: an
// address without a dotted domain, or longer than 254 characters, is
// refused with nothing created and nothing on stdout.
func TestMerchantCreateEmail(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		t.Setenv("DATABASE_URL", url)
		t.Setenv("LOG_LEVEL", "error")
		for _, email := range []string{"a@b", strings.Repeat("a", 250) + "@b.example", "not-an-email"} {
			code, out, stderr := runCLI(t, "merchant", "create", "--name", "Bad Mail", "--email", email)
			if code == 0 || len(out) != 0 || !strings.Contains(stderr, "email") {
				t.Errorf("%q: exit %d, stdout %q, stderr %q", email, code, out, stderr)
			}
		}
		if code, _, stderr := runCLI(t, "merchant", "create", "--name", "Good Mail", "--email", "ops@good.example"); code != 0 {
			t.Fatalf("a good address: %d %s", code, stderr)
		}
	})
}

// A stray word on the command line is refused before anything runs, instead
// of being ignored.
func TestCLIRefusesStrayArguments(t *testing.T) {
	t.Setenv("DATABASE_URL", "sqlite:"+filepath.Join(t.TempDir(), "svc.db"))
	t.Setenv("LOG_LEVEL", "error")
	for _, args := range [][]string{
		{"merchant", "create", "--name", "Stray Co", "--email", "ops@stray.example", "extra"},
		{"merchant", "roll-keys", "--merchant", "m", "--mode", "test", "now"},
		{"pairs", "list", "all"},
		{"serve", "--demo", "please"},
	} {
		code, out, stderr := runCLI(t, args...)
		if code != 2 || len(out) != 0 || !strings.Contains(stderr, "unexpected argument") || !strings.Contains(stderr, "usage:") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
	if code, out, stderr := runCLI(t, "merchant", "create", "--name", "Stray Co", "--email", "ops@stray.example"); code != 0 || len(out) == 0 {
		t.Fatalf("merchant create after the refused one: %d %s", code, stderr)
	}
}
