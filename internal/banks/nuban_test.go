package banks

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// Worked examples. Each sum is written out: weights 3,7,3,3,7,3,3,7,3,3,7,3
// over bank code + serial; check = (10 − sum mod 10) mod 10.
var nubanExamples = []struct {
	bank, serial string
	check        byte
	account      string
}{
	// CBN NUBAN proposal (2010), example 1: First Bank 011, serial 000001457.
	// 0·3+1·7+1·3+0·3+0·7+0·3+0·3+0·7+1·3+4·3+5·7+7·3 = 81 → 10−1 = 9.
	{"011", "000001457", 9, "0000014579"},
	// CBN example 2: First Bank, serial 000000022.
	// 7+3+2·7+2·3 = 30 → 10−0 = 10 → 0.
	{"011", "000000022", 0, "0000000220"},
	// GTBank 058, serial 001656322 (widely quoted worked example).
	// 5·7+8·3+1·3+6·3+5·7+6·3+3·3+2·7+2·3 = 162 → 10−2 = 8.
	{"058", "001656322", 8, "0016563228"},
	// Wema 035 (the sandbox's issuing bank), serial 000000001.
	// 3·7+5·3+1·3 = 39 → 10−9 = 1.
	{"035", "000000001", 1, "0000000011"},
	// Access 044, serial 123456789.
	// 4·7+4·3+1·3+2·7+3·3+4·3+5·7+6·3+7·3+8·7+9·3 = 235 → 10−5 = 5.
	{"044", "123456789", 5, "1234567895"},
	// Bank 000, serial 000000000: sum 0 → 10 → 0.
	{"000", "000000000", 0, "0000000000"},
	// Bank 999, serial 999999999: 9·(3·8+7·4) = 9·52 = 468 → 10−8 = 2.
	{"999", "999999999", 2, "9999999992"},
	// Zenith 057, serial 000000000: 5·7+7·3 = 56 → 10−6 = 4.
	{"057", "000000000", 4, "0000000004"},
}

func TestNUBANExamples(t *testing.T) {
	for _, e := range nubanExamples {
		got, err := NUBANCheckDigit(e.bank, e.serial)
		if err != nil || got != e.check {
			t.Errorf("NUBANCheckDigit(%s, %s) = %d, %v; want %d", e.bank, e.serial, got, err, e.check)
		}
		serial, err := strconv.ParseUint(e.serial, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		acct, err := MakeNUBAN(e.bank, serial)
		if err != nil || acct != e.account {
			t.Errorf("MakeNUBAN(%s, %d) = %q, %v; want %q", e.bank, serial, acct, err, e.account)
		}
		if !ValidNUBAN(e.bank, e.account) {
			t.Errorf("ValidNUBAN(%s, %s) = false", e.bank, e.account)
		}
	}
	// The same serial at another bank usually has another check digit; the
	// CBN example is not valid at GTBank.
	if ValidNUBAN("058", "0000014579") {
		t.Error("ValidNUBAN(058, 0000014579) = true")
	}
}

func TestNUBANErrors(t *testing.T) {
	for _, c := range []struct {
		bank, serial string
		want         error
	}{
		{"", "000001457", ErrBankCode},
		{"11", "000001457", ErrBankCode},
		{"0011", "000001457", ErrBankCode},
		{"035A", "000001457", ErrBankCode},
		{"03a", "000001457", ErrBankCode},
		{" 11", "000001457", ErrBankCode},
		{"٠١١", "000001457", ErrBankCode}, // Arabic-Indic digits
		{"011", "", ErrSerial},
		{"011", "00001457", ErrSerial},
		{"011", "0000014579", ErrSerial},
		{"011", "00000145a", ErrSerial},
		{"011", "-00001457", ErrSerial},
		{"011", "00000145\x00", ErrSerial},
	} {
		if _, err := NUBANCheckDigit(c.bank, c.serial); !errors.Is(err, c.want) {
			t.Errorf("NUBANCheckDigit(%q, %q) error = %v, want %v", c.bank, c.serial, err, c.want)
		}
	}
	for _, bank := range []string{"", "35", "0350", "035A", "x35"} {
		if _, err := MakeNUBAN(bank, 1); !errors.Is(err, ErrBankCode) {
			t.Errorf("MakeNUBAN(%q, 1) error = %v", bank, err)
		}
	}
	for _, serial := range []uint64{1_000_000_000, 9_999_999_999, 1<<64 - 1} {
		if _, err := MakeNUBAN("035", serial); !errors.Is(err, ErrSerial) {
			t.Errorf("MakeNUBAN(035, %d) error = %v", serial, err)
		}
	}
	if got, err := MakeNUBAN("035", 999_999_999); err != nil || got[:9] != "999999999" || !ValidNUBAN("035", got) {
		t.Errorf("MakeNUBAN(035, 999999999) = %q, %v", got, err)
	}
}

func TestValidNUBANRejectsMalformed(t *testing.T) {
	for _, c := range []struct{ bank, acct string }{
		{"011", ""},
		{"011", "000001457"},   // 9 digits
		{"011", "00000145790"}, // 11 digits
		{"011", "000001457 "},
		{"011", " 000001457"},
		{"011", "000001457a"},
		{"011", "00000-4579"},
		{"011", "+000014579"},
		{"011", "０000014579"}, // full-width zero
		{"11", "0000014579"},
		{"0110", "0000014579"},
		{"", "0000014579"},
		{"01a", "0000014579"},
		{"011", "0000014578"}, // wrong check digit
		{"011", "0000014570"},
	} {
		if ValidNUBAN(c.bank, c.acct) {
			t.Errorf("ValidNUBAN(%q, %q) = true", c.bank, c.acct)
		}
	}
}

// Exactly one check digit in ten validates, for every bank code.
func TestNUBANExactlyOneCheckDigit(t *testing.T) {
	for b := range 1000 {
		bank := fmt.Sprintf("%03d", b)
		for _, serial := range []string{"000000000", "123456789", "987654320"} {
			n := 0
			for d := byte('0'); d <= '9'; d++ {
				if ValidNUBAN(bank, serial+string(d)) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("bank %s serial %s: %d valid check digits", bank, serial, n)
			}
		}
	}
}

// Property: MakeNUBAN always validates, agrees with NUBANCheckDigit, and every
// change of a single digit (any position, any other digit) breaks validation.
// This holds because the weights 3 and 7 are coprime with 10.
func TestNUBANProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 5000
	if testing.Short() {
		n = 500
	}
	for range n {
		bank := fmt.Sprintf("%03d", rng.IntN(1000))
		serial := rng.Uint64N(1_000_000_000)
		acct, err := MakeNUBAN(bank, serial)
		if err != nil {
			t.Fatal(err)
		}
		if len(acct) != 10 || acct[:9] != fmt.Sprintf("%09d", serial) {
			t.Fatalf("MakeNUBAN(%s, %d) = %q", bank, serial, acct)
		}
		if !ValidNUBAN(bank, acct) {
			t.Fatalf("ValidNUBAN(%s, %s) = false for MakeNUBAN's output", bank, acct)
		}
		cd, err := NUBANCheckDigit(bank, acct[:9])
		if err != nil || cd != acct[9]-'0' {
			t.Fatalf("NUBANCheckDigit(%s, %s) = %d, %v; account %s", bank, acct[:9], cd, err, acct)
		}
		b := []byte(acct)
		for i := range b {
			orig := b[i]
			for d := byte('0'); d <= '9'; d++ {
				if d == orig {
					continue
				}
				b[i] = d
				if ValidNUBAN(bank, string(b)) {
					t.Fatalf("bank %s: %s valid after changing digit %d of %s", bank, b, i, acct)
				}
			}
			b[i] = orig
		}
		// Changing one digit of the bank code also breaks it.
		bb := []byte(bank)
		for i := range bb {
			orig := bb[i]
			bb[i] = '0' + (orig-'0'+1+byte(rng.IntN(9)))%10
			if ValidNUBAN(string(bb), acct) {
				t.Fatalf("%s valid at bank %s as well as %s", acct, bb, bank)
			}
			bb[i] = orig
		}
	}
}

func FuzzNUBAN(f *testing.F) {
	for _, e := range nubanExamples {
		f.Add(e.bank, e.account)
	}
	f.Add("035A", "0000000011")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, bank, acct string) {
		if !ValidNUBAN(bank, acct) {
			return
		}
		var serial uint64
		for i := range 9 {
			serial = serial*10 + uint64(acct[i]-'0')
		}
		got, err := MakeNUBAN(bank, serial)
		if err != nil || got != acct {
			t.Fatalf("ValidNUBAN(%q, %q) but MakeNUBAN = %q, %v", bank, acct, got, err)
		}
	})
}

func BenchmarkValidNUBAN(b *testing.B) {
	for b.Loop() {
		ValidNUBAN("058", "0016563228")
	}
}
