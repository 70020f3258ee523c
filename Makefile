# The README's two commands: `make run` and `make test`.
GO ?= go
TEST_FLAGS ?= -race -count=1 -timeout 20m

.PHONY: run build test generate migration bench vet

run: build
	WEBHOOK_ALLOW_PRIVATE=true ./bin/server serve --demo

build:
	CGO_ENABLED=0 $(GO) build -o bin/server .

# Unformatted code fails here, before the tests, as it would in review.
vet:
	@unformatted="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:" $$unformatted >&2; exit 1; fi
	$(GO) vet ./...
	cd tools/loadtest && $(GO) vet ./...

# The load harness is a module of its own (tools/loadtest): its unit tests
# run here too, beside the service's.
test: vet
	$(GO) test $(TEST_FLAGS) ./...
	cd tools/loadtest && $(GO) test $(TEST_FLAGS) ./...

# Regenerates ent and gqlgen code, and the bundles of GraphiQL and the
# dashboard (web/graphiql/dist and web/dashboard/dist,
# from their pinned npm packages); CI fails when this leaves a diff.
generate:
	cd ent && $(GO) run -mod=mod entc.go
	$(GO) tool gqlgen generate
	bash web/docs/build.sh
	bash web/graphiql/build.sh
	bash web/dashboard/build.sh

# After changing ent/schema (and make generate): writes the next versioned
# migration of each database into migrations/ (e.g. make migration
# NAME=add_refunds). The PostgreSQL one is worked out on a temporary database
# of the local server (TEST_DATABASE_URL, else
# postgres://postgres@127.0.0.1:5432/postgres). make test fails while the
# schema and the migrations disagree.
migration:
	@if [ -z "$(NAME)" ]; then echo "usage: make migration NAME=what_changed" >&2; exit 2; fi
	$(GO) run ./tools/migrations -name $(NAME)

# Speed (docs/PERFORMANCE.md); never part of `make test`. First the Go
# benchmarks of the hot code, then the load harness (tools/loadtest, a module
# of its own): it starts bin/server on fresh databases of the local
# PostgreSQL (TEST_DATABASE_URL, else
# postgres://postgres@127.0.0.1:5432/postgres) and prints every figure, each
# against pgbench on the same server, and the table of targets.
# LOADTEST_FLAGS passes options, e.g. LOADTEST_FLAGS='-c 16 -d 30s'.
LOADTEST_FLAGS ?=
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...
	cd tools/loadtest && $(GO) run . -server $(CURDIR)/bin/server $(LOADTEST_FLAGS)
