package hookwire

import (
	"context"
	"errors"
	"net"
	"testing"

	"merchantpay/internal/hookwire/fakedns"
)

// fakeResolver answers A and AAAA queries from records, in process, so the
// tests never touch real DNS. Names not in records get NXDOMAIN.
func fakeResolver(t *testing.T, records map[string][]string) *net.Resolver {
	t.Helper()
	return fakedns.New(records).Resolver()
}

// blockingResolver never answers; lookups end only with their context.
func blockingResolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
}

// failingResolver fails the test if it is ever asked anything.
func failingResolver(t *testing.T) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			t.Errorf("unexpected DNS lookup (dial %s %s)", network, address)
			return nil, &net.DNSError{Err: "unexpected lookup", IsNotFound: true}
		},
	}
}

func TestFakeResolver(t *testing.T) {
	table := fakedns.New(map[string][]string{"both.test": {"93.184.216.34", "2606:2800:220:1::1"}})
	r := table.Resolver()
	got, err := r.LookupNetIP(context.Background(), "ip", "both.test")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %v, want two addresses", got)
	}
	_, err = r.LookupNetIP(context.Background(), "ip", "missing.test")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("missing name: got %v, want a not-found DNSError", err)
	}
	table.Set("both.test", "127.0.0.1")
	got, err = r.LookupNetIP(context.Background(), "ip4", "both.test")
	if err != nil || len(got) != 1 || got[0].String() != "127.0.0.1" {
		t.Fatalf("after Set: %v, %v", got, err)
	}
}
