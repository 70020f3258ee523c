package narration

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/validate"
)

var cases = []struct {
	name, in string
	ref      string // "" means ok == false
}{
	// Plain and surrounded.
	{"bare", "!!ORD-123!!", "ORD-123"},
	{"surrounded", "Payment for order !!ORD-123!! thanks", "ORD-123"},
	{"glued to text", "TRF/FBN!!inv_2026.11!!REF99/XYZ", "inv_2026.11"},
	{"at start", "!!A1!! rest of narration", "A1"},
	{"at end", "narration then !!A1!!", "A1"},
	{"single char", "!!x!!", "x"},
	{"all allowed bytes", "!!azAZ09_-.:@+!!", "azAZ09_-.:@+"},
	{"plus", "!!a+b!!", "a+b"},
	{"at sign", "!!pay@shop!!", "pay@shop"},
	{"colon", "!!inv:42!!", "inv:42"},
	{"max length", "!!" + strings.Repeat("a", 100) + "!!", strings.Repeat("a", 100)},

	// Case.
	{"mixed case kept as written", "pay !!OrD-aBc!!", "OrD-aBc"},
	{"lower", "!!ord-abc!!", "ord-abc"},

	// No marker.
	{"empty", "", ""},
	{"no marker", "Transfer from JOHN DOE", ""},
	{"single bangs", "!A!", ""},
	{"one bang each side", "x !ORD! y", ""},
	{"one bang before", "!ORD!!", ""},
	{"one bang after", "!!ORD!", ""},
	{"only bangs 1", "!", ""},
	{"only bangs 2", "!!", ""},
	{"only bangs 4", "!!!!", ""},
	{"only bangs 7", "!!!!!!!", ""},

	// Malformed markers.
	{"empty inside", "a !!!! b", ""},
	{"no closing", "!!abc", ""},
	{"no closing, text after", "!!abc and more", ""},
	{"no opening", "abc!!", ""},
	{"spaces inside", "!! abc !!", ""},
	{"leading space", "!! abc!!", ""},
	{"trailing space", "!!abc !!", ""},
	{"space in middle", "!!ab c!!", ""},
	{"tab inside", "!!ab\tc!!", ""},
	{"newline inside", "!!ab\nc!!", ""},
	{"slash", "!!ORD/1!!", ""},
	{"hash", "!!#1!!", ""},
	{"only punctuation", "!!-._!!", ""},
	{"punctuation first", "!!-ref!!", ""},
	{"digit first", "!!9-ref!!", "9-ref"},
	{"accented letter", "!!RÉF!!", ""},
	{"non-ascii digit", "!!٣!!", ""},
	{"fullwidth letters", "!!ＲＥＦ!!", ""},
	{"NUL byte", "!!a\x00b!!", ""},
	{"invalid utf8 inside", "!!a\xffb!!", ""},
	{"too long", "!!" + strings.Repeat("a", 101) + "!!", ""},
	{"fullwidth bangs", "！！REF！！", ""},
	{"mixed bangs", "!！REF!！", ""},
	{"inner single bang", "!!A!B!!", ""},

	// Longer delimiter runs.
	{"three each side", "!!!REF!!!", "REF"},
	{"uneven runs", "!!!!!REF!!", "REF"},
	{"long runs", strings.Repeat("!", 100) + "REF" + strings.Repeat("!", 100), "REF"},

	// Unicode and odd bytes around the marker.
	{"unicode around", "Ọjà ₦5,000 — !!ORD-9!! 🙏", "ORD-9"},
	{"emoji glued", "🙏!!ORD-9!!🙏", "ORD-9"},
	{"invalid utf8 around", "\xff\xfe!!ORD-9!!\xc3", "ORD-9"},
	{"NUL around", "\x00!!ORD-9!!\x00", "ORD-9"},
	{"fullwidth bang glued", "！!!REF!!！", "REF"},

	// Several markers.
	{"same twice", "!!abc!! and again !!abc!!", "abc"},
	{"same twice other case, first wins", "!!abc!! !!ABC!!", "abc"},
	{"same twice other case, first wins 2", "!!ABC!! !!abc!!", "ABC"},
	{"two different", "!!abc!! !!def!!", ""},
	{"two different, adjacent", "!!abc!!!!def!!", ""},
	{"shared delimiter", "!!A!!B!!", ""},
	{"shared delimiter, same", "!!A!!a!!", "A"},
	{"different after many same", "!!x!! !!x!! !!x!! !!y!!", ""},
	{"malformed then good", "!!a b!! !!GOOD!!", "GOOD"},
	{"good then malformed", "!!GOOD!! !!a b!!", "GOOD"},
	{"too long then good", "!!" + strings.Repeat("z", 101) + "!! !!GOOD!!", "GOOD"},
	{"empty then good", "!!!! !!GOOD!!", "GOOD"},
	{"unclosed then good", "!!abc then !!GOOD!!", "GOOD"}, // "abc then " is a malformed piece
	{"unclosed word then good", "!!abc !!GOOD!!", "GOOD"},
}

func TestReference(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref, ok := Reference(c.in)
			if ok != (c.ref != "") || ref != c.ref {
				t.Errorf("Reference(%q) = %q, %v; want %q, %v", c.in, ref, ok, c.ref, c.ref != "")
			}
			checkInvariants(t, c.in)
		})
	}
}

// oracle is an independent, naive statement of the rules, for differential
// testing: split on '!'; a piece k is preceded by a run of ≥2 '!' when piece
// k−1 exists, is empty and is not the very first piece, and followed by one
// when piece k+1 is empty and is not the last piece.
func oracle(s string) (string, bool) {
	p := strings.Split(s, "!")
	var refs []string
	for k := range p {
		if p[k] == "" || len(p[k]) > 100 || k < 2 || p[k-1] != "" || k+2 >= len(p) || p[k+1] != "" {
			continue
		}
		const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		good := p[k][0] < 0x80 && strings.ContainsRune(alnum, rune(p[k][0]))
		for _, r := range []byte(p[k]) {
			if !strings.ContainsRune(alnum+"_-.:@+", rune(r)) || r >= 0x80 {
				good = false
			}
		}
		if good {
			refs = append(refs, p[k])
		}
	}
	if len(refs) == 0 {
		return "", false
	}
	for _, r := range refs {
		if !strings.EqualFold(r, refs[0]) {
			return "", false
		}
	}
	return refs[0], true
}

func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// checkInvariants asserts what must hold for any input.
func checkInvariants(t *testing.T, s string) {
	t.Helper()
	ref, ok := Reference(s)
	if !ok {
		if ref != "" {
			t.Fatalf("Reference(%q) = %q with ok=false", s, ref)
		}
	} else {
		if len(ref) < 1 || len(ref) > MaxLen {
			t.Fatalf("Reference(%q) = %q: length %d", s, ref, len(ref))
		}
		if msg := validate.Reference(ref); msg != "" {
			t.Fatalf("Reference(%q) = %q: %s", s, ref, msg)
		}
		// The reference is a whole piece between runs of at least two '!'.
		if !strings.Contains(s, "!!"+ref+"!!") {
			t.Fatalf("Reference(%q) = %q: not found between !! pairs", s, ref)
		}
		// Repeating the same reference (in another case) changes nothing.
		if r2, ok2 := Reference(s + " !!" + asciiUpper(ref) + "!!"); !ok2 || r2 != ref {
			t.Fatalf("Reference(%q + same marker) = %q, %v; want %q", s, r2, ok2, ref)
		}
	}
	if oref, ook := oracle(s); oref != ref || ook != ok {
		t.Fatalf("Reference(%q) = %q, %v; oracle says %q, %v", s, ref, ok, oref, ook)
	}
	// Spaces at the ends change nothing.
	if r2, ok2 := Reference(" " + s + " "); r2 != ref || ok2 != ok {
		t.Fatalf("Reference(padded %q) = %q, %v; want %q, %v", s, r2, ok2, ref, ok)
	}
	// Changing ASCII case changes only the case of the answer.
	if r2, ok2 := Reference(asciiUpper(s)); ok2 != ok || r2 != asciiUpper(ref) {
		t.Fatalf("Reference(upper %q) = %q, %v; want %q, %v", s, r2, ok2, asciiUpper(ref), ok)
	}
}

// Random narrations over a small alphabet rich in delimiters, compared
// with the oracle and checked against the invariants.
func TestReferenceRandom(t *testing.T) {
	alphabet := []string{"!", "!", "!", "a", "B", "c", "1", "-", ".", "_", " ", "é", "\xff", "！", "\x00", "/"}
	rng := rand.New(rand.NewPCG(7, 11))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		checkInvariants(t, b.String())
	}
}

// Hostile inputs of several MiB finish quickly: a quadratic scan would take
// hours on these, a linear one takes milliseconds even under -race.
func TestReferenceLinear(t *testing.T) {
	const size = 4 << 20
	rep := func(s string) string { return strings.Repeat(s, size/len(s)) }
	for _, c := range []struct {
		name, in, ref string
	}{
		{"all bangs", rep("!"), ""},
		{"no bangs", rep("a"), ""},
		{"single bangs", rep("a!"), ""},
		{"unclosed openings", rep("!!abc "), ""},
		{"shared delimiters, same", rep("!!a"), "a"},
		{"alternating refs", rep("!!a!!b"), ""},
		{"many same markers", rep("!!a!!") + "!!A!!", "a"},
		{"many long same markers", rep("!!" + strings.Repeat("k", 100) + "!!"), strings.Repeat("k", 100)},
		{"too long piece", "!!" + rep("a") + "!!", ""},
		{"runs of three", rep("!!!a"), "a"},
		{"invalid utf8", rep("\xff!!"), ""},
		{"huge then marker", rep("x ") + "!!END!!", "END"},
	} {
		start := time.Now()
		ref, ok := Reference(c.in)
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("%s: %v for %d bytes", c.name, el, len(c.in))
		}
		if ref != c.ref || ok != (c.ref != "") {
			t.Errorf("%s: got %q, %v; want %q", c.name, ref, ok, c.ref)
		}
	}
}

func TestReferenceAllocs(t *testing.T) {
	long := strings.Repeat("x", 1000) + "!!ORD-1!!" + strings.Repeat("y", 1000)
	if n := testing.AllocsPerRun(100, func() { Reference(long) }); n > 1 {
		t.Errorf("%v allocations on a hit, want at most 1", n)
	}
	if n := testing.AllocsPerRun(100, func() { Reference("!!a b!! no marker here") }); n != 0 {
		t.Errorf("%v allocations on a miss, want 0", n)
	}
}

func FuzzReference(f *testing.F) {
	for _, c := range cases {
		f.Add(c.in)
	}
	for _, s := range []string{
		"!!!", "!!a!!!", "!a!!b!!", "!!a!!b", "a!!b!!c!!d", "!!\xff!!", "!!" + strings.Repeat("9", 100) + "!!!", "!!" + strings.Repeat("9", 101) + "!!",
		"!!a.b!!!!A.B!!", "!!-!!", "!!.!!", "!!_!!", "\xf0\x9f!!x!!\x9f\x99",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkInvariants(t, s)
	})
}

func BenchmarkReference(b *testing.B) {
	s := "NIP/TRF FROM JOHN DOE/ACCESS !!ORD-2026-11-21-0001!! payment for goods"
	for b.Loop() {
		Reference(s)
	}
}
