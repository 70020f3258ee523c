package banks

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

func mustLoad(t testing.TB) *Directory {
	t.Helper()
	d, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return d
}

func TestLoadCounts(t *testing.T) {
	d := mustLoad(t)
	ng, gh := d.Nigeria(), d.Ghana()
	if len(ng) != 98 {
		t.Errorf("Nigeria: %d entries, want 98", len(ng))
	}
	if len(gh) != 23 {
		t.Errorf("Ghana: %d banks, want 23", len(gh))
	}
	branches, nip, typed := 0, 0, 0
	for _, b := range gh {
		if len(b.Branches) < 8 || len(b.Branches) > 191 {
			t.Errorf("%s: %d branches, want 8..191", b.Code, len(b.Branches))
		}
		branches += len(b.Branches)
	}
	for _, b := range ng {
		if b.NIPCode != "" {
			nip++
		}
		if b.Type != "" {
			typed++
		}
	}
	if branches != 1203 {
		t.Errorf("Ghana: %d branches, want 1203", branches)
	}
	if nip != 76 || typed != 94 {
		t.Errorf("nip_code on %d (want 76), type on %d (want 94)", nip, typed)
	}
}

func TestOrder(t *testing.T) {
	d := mustLoad(t)
	ng := d.Nigeria()
	if !sort.SliceIsSorted(ng, func(i, j int) bool {
		return strings.ToLower(ng[i].Name) < strings.ToLower(ng[j].Name)
	}) {
		t.Error("Nigeria is not sorted by name ignoring case")
	}
	if ng[0].Name != "9mobile 9Payment Service Bank" || ng[len(ng)-1].Name != "Zenith Bank" {
		t.Errorf("first/last = %q/%q", ng[0].Name, ng[len(ng)-1].Name)
	}
	gh := d.Ghana()
	if !sort.SliceIsSorted(gh, func(i, j int) bool { return gh[i].Name < gh[j].Name }) {
		t.Error("Ghana is not sorted by name")
	}
	pub := d.NigeriaPublic()
	for i := range ng {
		if pub[i] != ng[i].Public() {
			t.Fatalf("NigeriaPublic[%d] = %+v, want %+v", i, pub[i], ng[i].Public())
		}
	}
}

// The parsed lists marshal back to exactly the embedded files' content (no key
// lost, none added, empty optional keys omitted).
func TestRoundTrip(t *testing.T) {
	d := mustLoad(t)
	for _, c := range []struct {
		name string
		raw  []byte
		v    any
	}{
		{"ng", ngJSON, d.Nigeria()},
		{"gh", ghJSON, d.Ghana()},
	} {
		out, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		var want, got any
		if err := json.Unmarshal(c.raw, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: re-marshalled list differs from the embedded file", c.name)
		}
	}
}

func keysOf(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestRESTShapes(t *testing.T) {
	d := mustLoad(t)
	wema, _ := d.NGByCode("035")
	if got, want := keysOf(t, wema.Public()), []string{"code", "country", "name", "slug"}; !slices.Equal(got, want) {
		t.Errorf("NG public keys = %v, want %v", got, want)
	}
	b, _ := json.Marshal(wema.Public())
	if string(b) != `{"name":"Wema Bank","slug":"wema-bank","code":"035","country":"NG"}` {
		t.Errorf("NG public JSON = %s", b)
	}
	if got, want := keysOf(t, wema), []string{"code", "country", "name", "nip_code", "slug", "type"}; !slices.Equal(got, want) {
		t.Errorf("NG full keys = %v, want %v", got, want)
	}
	stanbic, _ := d.GHByCode("GH190100")
	if got, want := keysOf(t, stanbic), []string{"branches", "code", "id", "name"}; !slices.Equal(got, want) {
		t.Errorf("GH keys = %v, want %v", got, want)
	}
	if got, want := keysOf(t, stanbic.Branches[0]), []string{"bank_id", "bic", "branch_code", "branch_name", "id", "swift_code"}; !slices.Equal(got, want) {
		t.Errorf("GH branch keys = %v, want %v", got, want)
	}
	b, _ = json.Marshal(stanbic.Branches[0])
	if string(b) != `{"id":992,"branch_code":"GH190101","branch_name":"STANBIC BANK GHANA LTD-ACCRA MAIN","swift_code":"SBICGHAC","bic":"SBICGHACXXX","bank_id":280}` {
		t.Errorf("GH branch JSON = %s", b)
	}
}

func TestNGByCode(t *testing.T) {
	d := mustLoad(t)
	for _, c := range []struct{ code, name, nip, typ string }{
		{"035", "Wema Bank", "000017", TypeCommercial},
		{"044", "Access Bank", "000014", TypeCommercial},
		{"058", "Guaranty Trust Bank", "000013", TypeCommercial},
		{"011", "First Bank of Nigeria", "000016", TypeCommercial},
		{"50211", "Kuda Bank", "090267", TypeMicrofinance},
		{"999992", "OPay Digital Services Limited (OPay)", "100004", TypeMobileMoney},
		{"035A", "ALAT by WEMA", "", TypeCommercial},
	} {
		b, ok := d.NGByCode(c.code)
		if !ok || b.Name != c.name || b.NIPCode != c.nip || b.Type != c.typ || b.Code != c.code || b.Country != "NG" {
			t.Errorf("NGByCode(%q) = %+v, %v", c.code, b, ok)
		}
	}
	for _, code := range []string{"", "35", "0035", " 035", "035 ", "035a", "wema-bank", "Wema Bank", "000017", "GH190100"} {
		if b, ok := d.NGByCode(code); ok {
			t.Errorf("NGByCode(%q) = %+v, want not found", code, b)
		}
	}
	// Every listed entry is found by its own code.
	for _, b := range d.Nigeria() {
		if got, ok := d.NGByCode(b.Code); !ok || got != b {
			t.Errorf("NGByCode(%q) = %+v, %v; want %+v", b.Code, got, ok, b)
		}
	}
}

func TestGHLookups(t *testing.T) {
	d := mustLoad(t)
	stanbic, ok := d.GHByCode("GH190100")
	if !ok || stanbic.ID != 280 || stanbic.Name != "STANBIC BANK GHANA LTD" || len(stanbic.Branches) != 43 {
		t.Fatalf("GHByCode(GH190100) = %d %q %d branches, %v", stanbic.ID, stanbic.Name, len(stanbic.Branches), ok)
	}
	for _, code := range []string{"", "gh190100", "GH19", "GH190101", "GH270100", "035"} {
		if _, ok := d.GHByCode(code); ok {
			t.Errorf("GHByCode(%q) found, want not found", code)
		}
	}

	br, ok := d.GHBranch("GH190100", "GH190118")
	if !ok || br.ID != 1016 || br.BankID != 280 || br.BranchName != "STANBIC BANK - MADINA BRANCH" {
		t.Errorf("GHBranch(GH190100, GH190118) = %+v, %v", br, ok)
	}
	br, ok = d.GHBranch("GH040100", "GH040001")
	if !ok || br.ID != 1040001 || br.BankID != 904 || br.SwiftCode != "GHCBGHAC" {
		t.Errorf("GHBranch(GH040100, GH040001) = %+v, %v", br, ok)
	}
	for _, c := range []struct{ bank, branch string }{
		{"GH040100", "GH190118"}, // real branch, other bank
		{"GH190100", "GH040001"},
		{"GH190100", "gh190118"},
		{"gh190100", "GH190118"},
		{"GH190100", "GH199999"},
		{"GH270100", "GH270101"}, // BSIC: not listed
		{"", ""},
		{"GH190100", ""},
	} {
		if br, ok := d.GHBranch(c.bank, c.branch); ok {
			t.Errorf("GHBranch(%q, %q) = %+v, want not found", c.bank, c.branch, br)
		}
		if d.BranchBelongsTo(c.bank, c.branch) {
			t.Errorf("BranchBelongsTo(%q, %q) = true", c.bank, c.branch)
		}
	}

	// Every branch belongs to its own bank and to no other.
	gh := d.Ghana()
	ids := map[int]bool{}
	for _, b := range gh {
		if ids[b.ID] {
			t.Errorf("bank id %d repeated", b.ID)
		}
		ids[b.ID] = true
		for _, br := range b.Branches {
			if ids[br.ID] {
				t.Errorf("id %d repeated", br.ID)
			}
			ids[br.ID] = true
			if br.BankID != b.ID || br.BranchCode[:4] != b.Code[:4] {
				t.Errorf("branch %+v does not match bank %s", br, b.Code)
			}
			got, ok := d.GHBranch(b.Code, br.BranchCode)
			if !ok || got != br || !d.BranchBelongsTo(b.Code, br.BranchCode) {
				t.Errorf("GHBranch(%s, %s) = %+v, %v", b.Code, br.BranchCode, got, ok)
			}
		}
		other := gh[0].Code
		if other == b.Code {
			other = gh[1].Code
		}
		if d.BranchBelongsTo(other, b.Branches[0].BranchCode) {
			t.Errorf("branch %s belongs to %s too", b.Branches[0].BranchCode, other)
		}
	}
}

// Returned slices are copies: changing them does not change the Directory.
func TestCopies(t *testing.T) {
	d := mustLoad(t)
	ng := d.Nigeria()
	ng[0].Name = "changed"
	gh := d.Ghana()
	gh[0].Name = "changed"
	gh[0].Branches[0].BranchName = "changed"
	b, _ := d.GHByCode(gh[0].Code)
	b.Branches[1].BranchName = "changed"
	if d.Nigeria()[0].Name == "changed" || d.Ghana()[0].Name == "changed" ||
		d.Ghana()[0].Branches[0].BranchName == "changed" || d.Ghana()[0].Branches[1].BranchName == "changed" {
		t.Error("a returned value aliases the Directory")
	}
}

func TestConcurrentReads(t *testing.T) {
	d := mustLoad(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_ = d.Nigeria()
				_ = d.Ghana()
				d.NGByCode("035")
				d.GHBranch("GH190100", "GH190118")
			}
		}()
	}
	wg.Wait()
}

func TestEverySandboxBankCanIssueNUBAN(t *testing.T) {
	d := mustLoad(t)
	n := 0
	for _, b := range d.Nigeria() {
		if !isDigits(b.Code, 3) {
			continue
		}
		n++
		acct, err := MakeNUBAN(b.Code, 123)
		if err != nil || !ValidNUBAN(b.Code, acct) {
			t.Errorf("MakeNUBAN(%s) = %q, %v", b.Code, acct, err)
		}
	}
	if n != 41 {
		t.Errorf("%d entries with a 3-digit code, want 41", n)
	}
}

const (
	okNG = `[{"name":"A Bank","slug":"a-bank","code":"001","country":"NG","nip_code":"000001","type":"commercial"},
	         {"name":"B Bank","slug":"b-bank","code":"50002","country":"NG"}]`
	okGH = `[{"id":901,"code":"GH010100","name":"ONE","branches":[
	           {"id":1010101,"branch_code":"GH010101","branch_name":"ONE - MAIN","swift_code":"","bic":"","bank_id":901}]},
	         {"id":902,"code":"GH020100","name":"TWO","branches":[
	           {"id":1020101,"branch_code":"GH020101","branch_name":"TWO - MAIN","swift_code":"X","bic":"Y","bank_id":902}]}]`
)

func TestParseValid(t *testing.T) {
	d, err := parse([]byte(okNG), []byte(okGH))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Nigeria()) != 2 || len(d.Ghana()) != 2 || !d.BranchBelongsTo("GH020100", "GH020101") {
		t.Fatal("minimal lists not indexed")
	}
	// A bank with no branches gets [] (never null) in JSON.
	d, err = parse([]byte(okNG), []byte(`[{"id":1,"code":"GH010100","name":"X","branches":null}]`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d.Ghana())
	if !strings.Contains(string(b), `"branches":[]`) {
		t.Errorf("JSON = %s", b)
	}
}

func TestParseRejects(t *testing.T) {
	r := strings.NewReplacer
	for _, c := range []struct {
		want   string // in the error
		name   string
		ng, gh string
	}{
		{`unexpected EOF`, "ng not json", `[{`, okGH},
		{`empty list`, "ng empty", `[]`, okGH},
		{`cannot unmarshal`, "ng not an array", `{}`, okGH},
		{`trailing data`, "ng trailing data", okNG + `[]`, okGH},
		{`unknown field "logo"`, "ng unknown key", r(`"country":"NG"}`, `"country":"NG","logo":"x"}`).Replace(okNG), okGH},
		{`duplicate code`, "ng duplicate code", r(`"50002"`, `"001"`).Replace(okNG), okGH},
		{`duplicate slug`, "ng duplicate slug", r(`"b-bank"`, `"a-bank"`).Replace(okNG), okGH},
		{`duplicate name`, "ng duplicate name", r(`"B Bank"`, `"A Bank"`).Replace(okNG), okGH},
		{`empty name`, "ng empty name", r(`"B Bank"`, `""`).Replace(okNG), okGH},
		{`bad code ""`, "ng empty code", r(`"50002"`, `""`).Replace(okNG), okGH},
		{`bad code "500 2"`, "ng code with space", r(`"50002"`, `"500 2"`).Replace(okNG), okGH},
		{`bad slug "B Bank"`, "ng bad slug", r(`"b-bank"`, `"B Bank"`).Replace(okNG), okGH},
		{`bad slug "b--bank"`, "ng slug double hyphen", r(`"b-bank"`, `"b--bank"`).Replace(okNG), okGH},
		{`want NG`, "ng bad country", r(`"code":"50002","country":"NG"`, `"code":"50002","country":"GH"`).Replace(okNG), okGH},
		{`bad nip_code`, "ng bad nip", r(`"000001"`, `"00001"`).Replace(okNG), okGH},
		{`unknown type`, "ng bad type", r(`"commercial"`, `"bank"`).Replace(okNG), okGH},
		{`duplicate nip_code`, "ng duplicate nip", r(`"country":"NG"}`, `"country":"NG","nip_code":"000001"}`).Replace(okNG), okGH},
		{`invalid character`, "gh not json", okNG, `nope`},
		{`empty list`, "gh empty", okNG, `[]`},
		{`unknown field "x"`, "gh unknown key", okNG, r(`"bank_id":901}`, `"bank_id":901,"x":1}`).Replace(okGH)},
		{`duplicate bank code`, "gh duplicate bank code", okNG, r(`"GH020100"`, `"GH010100"`, `GH020101`, `GH010102`).Replace(okGH)},
		{`duplicate bank id`, "gh duplicate bank id", okNG, r(`902`, `901`).Replace(okGH)},
		{`want GHnn0100`, "gh bad bank code", okNG, r(`"GH020100"`, `"GH020101"`).Replace(okGH)},
		{`want GHnn0100`, "gh bank code lower", okNG, r(`"GH020100"`, `"gh020100"`).Replace(okGH)},
		{`bad id 0`, "gh bad bank id", okNG, r(`902`, `0`).Replace(okGH)},
		{`empty name`, "gh empty bank name", okNG, r(`"TWO"`, `""`).Replace(okGH)},
		{`bank_id 901, want 902`, "gh branch bank_id", okNG, r(`"bank_id":902`, `"bank_id":901`).Replace(okGH)},
		{`prefix differs`, "gh branch prefix", okNG, r(`"GH020101"`, `"GH030101"`).Replace(okGH)},
		{`bad branch code`, "gh branch code short", okNG, r(`"GH020101"`, `"GH02010"`).Replace(okGH)},
		{`duplicate branch code`, "gh duplicate branch code", okNG, `[{"id":1,"code":"GH010100","name":"X","branches":[
			{"id":2,"branch_code":"GH010101","branch_name":"A","swift_code":"","bic":"","bank_id":1},
			{"id":3,"branch_code":"GH010101","branch_name":"B","swift_code":"","bic":"","bank_id":1}]}]`},
		{`duplicate branch id`, "gh duplicate branch id", okNG, r(`1020101`, `1010101`).Replace(okGH)},
		{`empty name`, "gh empty branch name", okNG, r(`"TWO - MAIN"`, `""`).Replace(okGH)},
		{`bad id -1`, "gh bad branch id", okNG, r(`1020101`, `-1`).Replace(okGH)},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse([]byte(c.ng), []byte(c.gh))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("parse error = %v, want one containing %q", err, c.want)
			}
		})
	}
}
