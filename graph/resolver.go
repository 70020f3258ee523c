// Package graph holds the GraphQL resolvers: each converts its input, calls
// one operation in internal/, and maps the result.
package graph

import "merchantpay/internal/ops"

//go:generate go tool gqlgen generate

// Resolver is the root resolver.
type Resolver struct {
	// Svc are the operations, the one struct REST's handlers take too.
	Svc ops.Services
}
