# logbook — the two set-up commands of the README are `make run` and `make test`;
# `make help` lists every target (the `## ` text after each target's name).
GO ?= go

.PHONY: run help test clients test-clients test-viewer vet fmt-check fuzz-smoke bench chaos

# run builds the logbook binary into bin/ and runs the guided tour
# (`logbook demo`): a scripted agent session through real plugin
# subprocesses, a crash, a resume, a compaction and a fork.
run: ## build bin/logbook and run the guided tour (logbook demo)
	$(GO) build -o bin/logbook ./cmd/logbook
	./bin/logbook demo

# help lists the targets with the text after their `## `.
help: ## list the targets
	@awk 'BEGIN { FS = ":.*## " } /^[a-z][a-z-]*:.*## / { printf "  make %-13s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

# BENCH_SMOKE_PKGS are the packages whose benchmarks run once in seconds
# (make test's smoke step, about 30 s of wall time with -p 2, most of it
# linking); BENCH_SMOKE_SKIP leaves out their 100K and 1M fixtures. Left out
# because their fixtures alone take many seconds: plugins/sqlite,
# runtime/internal/engine, runtime/internal/search and test/longsession
# (make bench runs every benchmark).
BENCH_SMOKE_PKGS = ./plugins/jsonl ./plugins/postgres ./plugins/pruner ./provider \
	./runtime/internal/compaction ./runtime/internal/httpapi ./runtime/internal/metrics \
	./runtime/internal/pluginhost ./runtime/internal/server ./runtime/internal/session \
	./runtime/internal/store ./runtime/service ./sdk/jsonv
BENCH_SMOKE_SKIP = 100K|1M

# test runs every test: the Go tests with the race detector, a smoke run of
# the quick benchmarks (BENCH_SMOKE_PKGS), then the clients' (test-clients)
# and the web viewer's in a browser (test-viewer).
# The Go tests get -timeout=30m: cmd/logbook alone runs minutes under -race
# on a loaded 2-core machine, past go test's default of ten on a slow one.
# It builds the logbook binary once, into a temporary directory removed
# afterwards, and hands it to every stage (LOGBOOK_TEST_BIN), so no test
# package links one of its own. While the Go code builds and its tests run,
# the npm ci of clients/typescript and of viewer (network and disk, some
# 800 MB) runs in the background, logging into that directory; the clients'
# and the viewer's stages then use what it installed (NPM_CI=no) instead of
# installing again. go test compiles the race-instrumented packages itself
# (no go build -race first: that only linked the commands a second time and
# held the tests back until every package had compiled). It says what each
# stage does, since the second one is silent for minutes.
test: ## run every test: Go with -race, the clients, the viewer (many minutes)
	@set -e; bin=$$(mktemp -d); trap 'wait; rm -rf "$$bin"' EXIT; \
	echo "make test: [1/5] building the logbook binary the tests run into $$bin; npm ci of clients/typescript and viewer in the background (logs: $$bin/npm-*.log)…"; \
	(cd clients/typescript && npm ci --no-audit --no-fund) >"$$bin/npm-clients.log" 2>&1 & npm_clients=$$!; \
	(cd viewer && npm ci --no-audit --no-fund) >"$$bin/npm-viewer.log" 2>&1 & npm_viewer=$$!; \
	$(GO) build -o "$$bin/logbook" ./cmd/logbook; \
	echo "make test: [2/5] the Go tests with the race detector (first compiling the race-instrumented standard library and packages: several minutes, silent; then a line per package as it finishes)…"; \
	LOGBOOK_TEST_BIN="$$bin/logbook" $(GO) test -race -count=1 -timeout=30m ./...; \
	echo "make test: [3/5] a smoke run of the quick benchmarks, once each, so a benchmark a rule change breaks fails here (about 30 s)…"; \
	LOGBOOK_TEST_BIN="$$bin/logbook" $(GO) test -count=1 -run='^$$' -bench=. -benchtime=1x -skip='$(BENCH_SMOKE_SKIP)' $(BENCH_SMOKE_PKGS); \
	for p in clients:$$npm_clients viewer:$$npm_viewer; do \
		if ! wait "$${p#*:}"; then echo "make test: npm ci for $${p%%:*} failed:" >&2; cat "$$bin/npm-$${p%%:*}.log" >&2; exit 1; fi; \
	done; \
	echo "make test: [4/5] the TypeScript and Python clients against real logbook serve processes…"; \
	LOGBOOK_TEST_BIN="$$bin/logbook" $(MAKE) --no-print-directory test-clients NPM_CI=no; \
	echo "make test: [5/5] the web viewer in Chromium against real logbook serve processes…"; \
	LOGBOOK_TEST_BIN="$$bin/logbook" $(MAKE) --no-print-directory test-viewer NPM_CI=no; \
	echo "make test: all passed"

# NPM_CI=no makes test-clients and test-viewer use the node_modules already
# in clients/typescript and viewer (make test installs them with npm ci
# while the Go tests run) instead of running npm ci first.
NPM_CI ?= yes

# clients builds the TypeScript client's package: npm ci from its
# lockfile, then npm pack, whose prepack builds src/ into
# clients/typescript/dist (committed, and checked by .ci/check-clients) and
# which leaves the tarball bin/logbook-client-<version>.tgz (bin/ is not
# tracked), for `npm install <that file>` where the repository is not.
clients: ## build the TypeScript client (clients/typescript/dist) and its npm pack tarball in bin/
	@mkdir -p bin && cd clients/typescript && npm ci --no-audit --no-fund && \
	tgz=$$(npm pack --pack-destination ../../bin | tail -n 1) && \
	echo "make clients: clients/typescript/dist built; package: bin/$$tgz"

# test-clients runs the TypeScript client's tests (npm ci from its
# lockfile unless NPM_CI=no, then npm test: tsc into build/, node --test,
# and vitest with test/vitest/vitest.config.ts; one of them installs the
# package in a new project as the README says) and, at the same time, the
# Python client's (unittest; one of them pip installs it into a new venv;
# its output is printed when it ends), all against real `logbook serve`
# processes of the binary LOGBOOK_TEST_BIN names, or else of one built into
# a temporary directory, removed afterwards. Needs Node.js 20+, npm and
# Python 3.11+.
test-clients: ## the TypeScript and Python clients' tests (Node.js 20+, Python 3.11+)
	@set -e; bin=$$(mktemp -d); trap 'wait; rm -rf "$$bin"' EXIT; \
	logbook="$${LOGBOOK_TEST_BIN:-$$bin/logbook}"; \
	if [ -z "$$LOGBOOK_TEST_BIN" ]; then echo "test-clients: building logbook into $$bin"; $(GO) build -o "$$logbook" ./cmd/logbook; fi; \
	echo "test-clients: Python (unittest) in the background, its output in $$bin/python.log until it ends"; \
	(cd clients/python && LOGBOOK_TEST_BIN="$$logbook" python3 -m unittest discover -v) >"$$bin/python.log" 2>&1 & python=$$!; \
	if [ "$(NPM_CI)" != no ]; then echo "test-clients: TypeScript npm ci"; (cd clients/typescript && npm ci --no-audit --no-fund); fi; \
	echo "test-clients: TypeScript (tsc, node --test, vitest)"; \
	(cd clients/typescript && LOGBOOK_TEST_BIN="$$logbook" npm test); \
	python_ok=yes; wait $$python || python_ok=no; \
	echo "test-clients: Python (unittest):"; cat "$$bin/python.log"; \
	[ $$python_ok = yes ] || { echo "test-clients: the Python client's tests failed" >&2; exit 1; }

# test-viewer runs the web viewer's tests in a real browser: npm ci from
# viewer/package-lock.json (unless NPM_CI=no), then node --test driving Chromium
# (CHROMIUM, default Debian's /usr/bin/chromium) through playwright-core
# against real `logbook serve` processes of the binary LOGBOOK_TEST_BIN
# names, or else of one built into a temporary directory. The first run also writes a 100,000-message store
# under the temporary directory (logbook-viewer-big-v1), which later runs
# reuse. Screenshots go to viewer/test-artifacts/.
CHROMIUM ?= /usr/bin/chromium
test-viewer: ## the web viewer's tests in Chromium (CHROMIUM=path)
	@test -x "$(CHROMIUM)" || { echo "test-viewer needs Chromium at $(CHROMIUM): apt-get install chromium" >&2; exit 1; }
	@bin=$$(mktemp -d) && trap 'rm -rf "$$bin"' EXIT && \
	logbook="$${LOGBOOK_TEST_BIN:-$$bin/logbook}" && \
	if [ -z "$$LOGBOOK_TEST_BIN" ]; then echo "test-viewer: building logbook into $$bin" && $(GO) build -o "$$logbook" ./cmd/logbook; fi && \
	if [ "$(NPM_CI)" != no ]; then echo "test-viewer: npm ci" && (cd viewer && npm ci --no-audit --no-fund); fi && \
	echo "test-viewer: the browser tests" && \
	(cd viewer && LOGBOOK_TEST_BIN="$$logbook" LOGBOOK_CHROMIUM="$(CHROMIUM)" npm test)

# chaos runs the long fault suite (test/chaos): CHAOS_FAULTS faults per
# backend (JSONL zstd and plain, SQLite, PostgreSQL, memory) against a real
# serve, the append path's faults and cut operations (import, delete, hold,
# gc, salvage, fork, migrate, compact), then the summary table (lost,
# duplicated, half-made); `make test` runs a short one. Run it as root with
# strace installed and PostgreSQL reachable (LOGBOOK_TEST_PG_DSN), or those
# kinds are skipped; with CI=true they fail instead.
CHAOS_FAULTS ?= 200
chaos: ## the long fault suite (CHAOS_FAULTS=200 per backend)
	$(GO) test -count=1 -v -timeout 0 ./test/chaos -chaos.faults=$(CHAOS_FAULTS)

vet: ## go vet ./...
	$(GO) vet ./...

fmt-check: ## fail when gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# fuzz-smoke runs every fuzz target for FUZZTIME executions (a count, see
# .ci/fuzz-smoke).
FUZZTIME ?= 100000x
fuzz-smoke: ## every fuzz target for FUZZTIME executions (default 100000x)
	@.ci/fuzz-smoke $(FUZZTIME)

bench: ## every benchmark, once
	$(GO) test -run='^$$' -bench=. -benchmem ./...
