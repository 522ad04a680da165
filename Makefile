# The commands the README and CI use. Run from the repository root.
GO      ?= go
NPM     ?= npm
PKGS    ?= ./...

.PHONY: all build test e2e-deps demo bench bench-short vet clean

all: build

## build: compile the watcher into bin/watcher (and check everything compiles)
build:
	$(GO) build ./...
	$(GO) build -o bin/watcher ./cmd/watcher

## e2e-deps: install the pinned third-party MCP servers the tests run against
e2e-deps:
	cd e2e && $(NPM) ci --no-audit --no-fund

## test: every test, race detector on, including e2e against real peers
test: e2e-deps
	$(GO) test -race -timeout 12m $(PKGS)

## demo: the README's first run (embedded NATS + the demo MCP server over stdio)
demo:
	$(GO) run ./cmd/watcher run -c examples/demo/watcher.yaml

## bench: the full benchmark suite (a few minutes; table for docs/benchmarks.md), then the testing.B hot-path benchmarks
bench:
	$(GO) run ./e2e/bench/cmd/watcher-bench
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## bench-short: the CI-sized suite (seconds; also runs in go test ./... as TestBenchShort)
bench-short:
	$(GO) run ./e2e/bench/cmd/watcher-bench -short

vet:
	$(GO) vet $(PKGS)

clean:
	rm -rf bin data
