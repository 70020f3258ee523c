package transactions

import "testing"

// ServiceReference recognises the three prefixes and a UUID in any case,
// and gives the form the service writes; nothing else is of that form.
func TestServiceReference(t *testing.T) {
	const id = "0190b5a4-7c1e-7a00-8000-00000000abcd"
	for in, want := range map[string]string{
		"WTH-" + id: "WTH-" + id,
		"wth-0190B5A4-7C1E-7A00-8000-00000000ABCD": "WTH-" + id,
		"Dep-" + id: "DEP-" + id,
		"sWp-0190b5a4-7C1E-7a00-8000-00000000AbCd": "SWP-" + id,
	} {
		if got, ok := ServiceReference(in); !ok || got != want {
			t.Errorf("%s: %s %v, want %s", in, got, ok, want)
		}
		if CheckMerchantReference(in) == "" {
			t.Errorf("%s taken as a merchant reference", in)
		}
	}
	for _, in := range []string{"", "WTH-", "WTH-" + id[:35], "WTH-" + id + "0", "WTX-" + id, "WTH_" + id, "WTH-" + id[:8] + "x" + id[9:], "order-1"} {
		if got, ok := ServiceReference(in); ok || got != in {
			t.Errorf("%s: %s %v", in, got, ok)
		}
	}
	if CheckMerchantReference("order-1") != "" || CheckMerchantReference("-x") == "" {
		t.Error("ordinary references judged wrongly")
	}
}

// A reference already in the service's form, which every look-up by a
// service reference sends, is returned as it is, without allocating.
func TestServiceReferenceCanonicalAllocatesNothing(t *testing.T) {
	ref := DepositPrefix + "0190b5a4-7c1e-7a00-8000-00000000abcd"
	var got string
	if n := testing.AllocsPerRun(100, func() { got, _ = ServiceReference(ref) }); n != 0 {
		t.Errorf("ServiceReference(%s) allocated %v times per run, want 0", ref, n)
	}
	if got != ref {
		t.Errorf("ServiceReference(%s) = %s", ref, got)
	}
}
