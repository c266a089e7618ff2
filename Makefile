# logbook — the two set-up commands of the README are `make run` and `make test`.
GO ?= go

.PHONY: run test vet fmt-check fuzz-smoke bench

# run builds the logbook binary into bin/ and runs the guided tour
# (`logbook demo`): a scripted agent session through real plugin
# subprocesses, a crash, a resume, a compaction and a fork.
run:
	$(GO) build -o bin/logbook ./cmd/logbook
	./bin/logbook demo

# test runs every test with the race detector.
test:
	$(GO) test -race -count=1 ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# fuzz-smoke runs every fuzz target for FUZZTIME executions (a count, see
# .ci/fuzz-smoke).
FUZZTIME ?= 100000x
fuzz-smoke:
	@.ci/fuzz-smoke $(FUZZTIME)

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...
