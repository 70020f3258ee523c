// Command server runs the merchant payments service (see README.md).
package main

import (
	"os"

	"merchantpay/server"
)

func main() {
	os.Exit(server.Main(os.Args[1:], os.Stdout, os.Stderr))
}
