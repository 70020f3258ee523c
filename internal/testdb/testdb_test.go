package testdb_test

import (
	"merchantpay/internal/testdb"
	"testing"
)

func TestOpen(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) { testdb.Open(t, u) })
}
