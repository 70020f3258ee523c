# The README's two commands: `make run` and `make test`.
GO ?= go
TEST_FLAGS ?= -race -count=1 -timeout 20m

.PHONY: run build test generate bench vet

run: build
	WEBHOOK_ALLOW_PRIVATE=true ./bin/server serve --demo

build:
	$(GO) build -o bin/server .

vet:
	$(GO) vet ./...

test: vet
	$(GO) test $(TEST_FLAGS) ./...

# Regenerates ent and gqlgen code; CI fails when this leaves a diff.
generate:
	cd ent && $(GO) run -mod=mod entc.go
	$(GO) tool gqlgen generate

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
