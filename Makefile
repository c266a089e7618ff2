# logbook — the two set-up commands of the README are `make run` and `make test`.
GO ?= go

.PHONY: run test test-clients test-viewer vet fmt-check fuzz-smoke bench chaos

# run builds the logbook binary into bin/ and runs the guided tour
# (`logbook demo`): a scripted agent session through real plugin
# subprocesses, a crash, a resume, a compaction and a fork.
run:
	$(GO) build -o bin/logbook ./cmd/logbook
	./bin/logbook demo

# test runs every test: the Go tests with the race detector, then the
# clients' (test-clients) and the web viewer's in a browser (test-viewer).
test:
	$(GO) test -race -count=1 ./...
	$(MAKE) test-clients
	$(MAKE) test-viewer

# test-clients runs the TypeScript client's tests (npm ci from its
# lockfile, tsc, node --test) and the Python client's (unittest), both
# against real `logbook serve` processes of one binary built into a
# temporary directory, removed afterwards. Needs Node.js 20+, npm and
# Python 3.11+.
test-clients:
	@bin=$$(mktemp -d) && trap 'rm -rf "$$bin"' EXIT && \
	$(GO) build -o "$$bin/logbook" ./cmd/logbook && \
	(cd clients/typescript && npm ci --no-audit --no-fund && LOGBOOK_TEST_BIN="$$bin/logbook" npm test) && \
	(cd clients/python && LOGBOOK_TEST_BIN="$$bin/logbook" python3 -m unittest discover -v)

# test-viewer runs the web viewer's tests in a real browser: npm ci from
# viewer/package-lock.json, then node --test driving Chromium
# (CHROMIUM, default Debian's /usr/bin/chromium) through playwright-core
# against real `logbook serve` processes of one binary built into a
# temporary directory. The first run also writes a 100,000-message store
# under the temporary directory (logbook-viewer-big-v1), which later runs
# reuse. Screenshots go to viewer/test-artifacts/.
CHROMIUM ?= /usr/bin/chromium
test-viewer:
	@test -x "$(CHROMIUM)" || { echo "test-viewer needs Chromium at $(CHROMIUM): apt-get install chromium" >&2; exit 1; }
	@bin=$$(mktemp -d) && trap 'rm -rf "$$bin"' EXIT && \
	$(GO) build -o "$$bin/logbook" ./cmd/logbook && \
	(cd viewer && npm ci --no-audit --no-fund && LOGBOOK_TEST_BIN="$$bin/logbook" LOGBOOK_CHROMIUM="$(CHROMIUM)" npm test)

# chaos runs the long fault suite (test/chaos): CHAOS_FAULTS faults per
# backend against a real serve, then the summary table; `make test` runs a
# short one. Run it as root with strace installed, or the disk-full and
# fsync kinds are skipped.
CHAOS_FAULTS ?= 200
chaos:
	$(GO) test -count=1 -v -timeout 0 ./test/chaos -chaos.faults=$(CHAOS_FAULTS)

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
