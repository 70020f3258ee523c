package txview

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/shopspring/decimal"

	"merchantpay/present/jsonx"
)

// tricky are strings encoding/json escapes or passes through in its own way.
var tricky = []string{"", "plain", `quote " here`, `back\slash`, "tab\tnew\nline\r", "\x00\x01\x1f\x7f",
	"<b>&amp;</b>", "naïve café ₦", "line\u2028sep\u2029", "bad \xff utf-8 \xc3", "emoji 🙂", `{"json":[1,2]}`}

func randString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return tricky[r.IntN(len(tricky))] + tricky[r.IntN(len(tricky))]
	}
	b := make([]byte, r.IntN(12))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return string(b)
}

func randNum(r *rand.Rand) jsonx.Num {
	return jsonx.Num(decimal.New(r.Int64N(1<<40)-(1<<39), -int32(r.IntN(19))))
}

// randTransaction gives each field of a Transaction a random value or nil.
func randTransaction(r *rand.Rand) Transaction {
	var t Transaction
	v := reflect.ValueOf(&t).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Interface().(type) {
		case string:
			f.SetString(randString(r))
		case *string:
			if r.IntN(3) > 0 {
				s := randString(r)
				f.Set(reflect.ValueOf(&s))
			}
		case jsonx.Num:
			f.Set(reflect.ValueOf(randNum(r)))
		case *jsonx.Num:
			if r.IntN(3) > 0 {
				n := randNum(r)
				f.Set(reflect.ValueOf(&n))
			}
		case WalletRef:
			ref := WalletRef{Present: r.IntN(3) > 0}
			if r.IntN(2) > 0 {
				s := randString(r)
				ref.Value = &s
			}
			f.Set(reflect.ValueOf(ref))
		default:
			panic("randTransaction: no generator for field " + v.Type().Field(i).Name)
		}
	}
	return t
}

func TestAppendJSONMatchesEncoding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		tx := randTransaction(r)
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(tx); err != nil {
			t.Fatal(err)
		}
		got := tx.AppendJSON([]byte("prefix:"))
		if !bytes.Equal(got, append([]byte("prefix:"), bytes.TrimSuffix(want.Bytes(), []byte("\n"))...)) {
			t.Fatalf("case %d differs:\n got %s\nwant %s", i, got, want.Bytes())
		}
		// A stored payload reads back as the same view (GraphQL's
		// Event.transaction decodes it).
		var back Transaction
		if err := json.Unmarshal(got[len("prefix:"):], &back); err != nil {
			t.Fatalf("case %d does not read back: %v\n%s", i, err, got)
		}
		// Invalid UTF-8 reads back as U+FFFD, which is then written as is
		// rather than escaped: compare the JSON values, not the bytes.
		if again := back.AppendJSON(nil); !reflect.DeepEqual(decodeJSON(t, again), decodeJSON(t, got[len("prefix:"):])) {
			t.Fatalf("case %d reads back differently:\n got %s\nwant %s", i, again, got)
		}
	}
}

// decodeJSON decodes b with exact numbers.
func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// A deposit to an account shows wallet_reference, null when the account
// belongs to no wallet; a transaction of no account shows neither key.
func TestWalletReferenceShown(t *testing.T) {
	acc := "ACC-1"
	for _, c := range []struct {
		ref  WalletRef
		acct *string
		want string
	}{
		{WalletRef{Present: true}, &acc, `"wallet_reference":null,"account_reference":"ACC-1"`},
		{WalletRef{}, nil, `"payment_proof":null,"created_at"`},
	} {
		tx := Transaction{WalletReference: c.ref, AccountReference: c.acct}
		if got := string(tx.AppendJSON(nil)); !bytes.Contains([]byte(got), []byte(c.want)) {
			t.Errorf("%+v: %s, want %s", c.ref, got, c.want)
		}
		b, err := json.Marshal(tx)
		if err != nil || !bytes.Contains(b, []byte(c.want)) {
			t.Errorf("encoding/json: %s %v, want %s", b, err, c.want)
		}
	}
}
