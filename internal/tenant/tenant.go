// Package tenant carries the (merchant, mode) a request acts for. Every
// tenant-owned table is filtered by it in ent's interceptors, so a query
// cannot forget the scope: a context with neither a tenant nor the explicit
// system marker is refused.
package tenant

import (
	"context"
	"errors"
)

// Modes of a merchant.
const (
	Test = "test"
	Live = "live"
)

// Tenant is one merchant in one mode.
type Tenant struct {
	MerchantID string
	Mode       string
}

type ctxKey struct{}
type systemKey struct{}

// With returns ctx acting for t.
func With(ctx context.Context, t Tenant) context.Context {
	return context.WithValue(ctx, ctxKey{}, t)
}

// From returns the tenant of ctx.
func From(ctx context.Context) (Tenant, bool) {
	t, ok := ctx.Value(ctxKey{}).(Tenant)
	return t, ok
}

// System marks ctx as the service itself (workers, CLI, authentication),
// allowed to see every tenant's rows. Use it only where no tenant applies.
func System(ctx context.Context) context.Context {
	return context.WithValue(ctx, systemKey{}, true)
}

// IsSystem reports whether ctx was marked by System and carries no tenant.
func IsSystem(ctx context.Context) bool {
	if _, ok := From(ctx); ok {
		return false
	}
	v, _ := ctx.Value(systemKey{}).(bool)
	return v
}

// ErrNoTenant is returned by a query made with neither a tenant nor System.
var ErrNoTenant = errors.New("tenant: query without tenant scope")

// Scope is the rule every read and write of a tenant's rows follows: ctx
// acts for a tenant (t, scoped true), or is the system, which may touch
// every tenant's rows (scoped false), or is neither (ErrNoTenant). The
// tenant tables' ent interceptor and hook apply it, and so does code that
// writes those tables with statements of its own.
func Scope(ctx context.Context) (t Tenant, scoped bool, err error) {
	if t, ok := From(ctx); ok {
		return t, true, nil
	}
	if IsSystem(ctx) {
		return Tenant{}, false, nil
	}
	return Tenant{}, false, ErrNoTenant
}
