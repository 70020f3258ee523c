package testdb_test

import (
	"testing"
	"merchantpay/internal/testdb"
)

func TestOpen(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) { testdb.Open(t, u) })
}
