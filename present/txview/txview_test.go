package txview

import (
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
)

// fill gives every exported field of t a distinct non-zero value.
func fill(t *ent.Transaction) {
	v := reflect.ValueOf(t).Elem()
	base := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() || v.Type().Field(i).Anonymous {
			continue
		}
		n := int64(i + 1)
		var val reflect.Value
		switch ft := f.Type(); {
		case ft == reflect.TypeOf(""):
			val = reflect.ValueOf("v" + decimal.NewFromInt(n).String())
		case ft == reflect.TypeOf((*string)(nil)):
			s := "p" + decimal.NewFromInt(n).String()
			val = reflect.ValueOf(&s)
		case ft.Kind() == reflect.Int64 || ft.Kind() == reflect.Int:
			val = reflect.ValueOf(n * 101).Convert(ft)
		case ft == reflect.TypeOf((*int64)(nil)):
			x := n * 103
			val = reflect.ValueOf(&x)
		case ft == reflect.TypeOf(time.Time{}):
			val = reflect.ValueOf(base.Add(time.Duration(n) * time.Hour))
		case ft == reflect.TypeOf((*time.Time)(nil)):
			x := base.Add(time.Duration(n) * time.Minute)
			val = reflect.ValueOf(&x)
		case ft == reflect.TypeOf((*decimal.Decimal)(nil)):
			x := decimal.New(n*7, -2)
			val = reflect.ValueOf(&x)
		case ft.Kind() == reflect.Map:
			val = reflect.ValueOf(map[string]any{"k": n})
		default:
			continue
		}
		f.Set(val)
	}
}

// TestColumnsCoverView: a transaction carrying only the fields of Columns
// renders exactly as the full entity does, so a look-up selecting Columns
// loses nothing of the shape.
func TestColumnsCoverView(t *testing.T) {
	var full, part ent.Transaction
	fill(&full)
	for _, c := range columns {
		to, from := reflect.ValueOf(c.field(&part)), reflect.ValueOf(c.field(&full))
		if n, ok := c.field(&part).(nullAsEmpty); ok {
			to, from = reflect.ValueOf(n.s), reflect.ValueOf(c.field(&full).(nullAsEmpty).s)
		}
		to.Elem().Set(from.Elem())
	}
	if got, want := View(&part), View(&full); !reflect.DeepEqual(got, want) {
		t.Fatalf("View of Columns only:\n%+v\nwant\n%+v", got, want)
	}
	seen := map[string]bool{}
	for _, name := range Columns() {
		if seen[name] {
			t.Fatalf("column %s listed twice", name)
		}
		seen[name] = true
	}
}
