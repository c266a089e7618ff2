package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/internal/testserve"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Deadlines of the harness: generous, the machine has two shared cores.
const (
	startTimeout   = 2 * time.Minute // serve listens
	exitTimeout    = time.Minute     // a killed or stopped process is gone
	recoverTimeout = 3 * time.Minute // every writer acknowledged a batch after a fault
	pauseTimeout   = 3 * time.Minute // every writer finished its batch
	tmpfsSize      = "512m"          // the data directory's tmpfs (as root): a long run's sessions fit
)

// store is the kind of a backend's storage.
type store int

const (
	jsonlStore    store = iota // JSONL files <data>/<id>/events.v<format version>.jsonl[.zst]
	sqliteStore                // one SQLite database, <data>/sessions.db
	postgresStore              // a schema of its own in the test database
	memoryStore                // in serve's plugin process only
)

// backend is one persistence configuration under test.
type backend struct {
	name   string // as in -chaos.backends
	config string // testdata file
	store  store
	// everyKind: the backend runs every kind that applies to it at least
	// once, even when -chaos.faults is fewer (the short run). The
	// storage of PostgreSQL and memory is like no other backend's.
	everyKind bool
}

var backends = []backend{
	{"jsonl-zstd", "testdata/jsonl-zstd.hcl", jsonlStore, false},
	{"jsonl-none", "testdata/jsonl-none.hcl", jsonlStore, false},
	{"sqlite", "testdata/sqlite.hcl", sqliteStore, false},
	{"postgres", "testdata/postgres.hcl", postgresStore, true},
	{"memory", "testdata/memory.hcl", memoryStore, true},
}

// The env() calls of the postgres backend's config that name the test
// database and the run's own schema; pgConfig replaces them.
const (
	pgDSNEnv    = `env("LOGBOOK_CHAOS_PG_DSN")`
	pgSchemaEnv = `env("LOGBOOK_CHAOS_PG_SCHEMA")`
)

// pgConfig writes the postgres config at path with dsn and schema in place
// of its env() calls into a directory of t, and returns its path.
func pgConfig(t *testing.T, path, dsn, schema string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, pgDSNEnv) || !strings.Contains(s, pgSchemaEnv) {
		t.Fatalf("%s does not read %s and %s", path, pgDSNEnv, pgSchemaEnv)
	}
	s = strings.NewReplacer(pgDSNEnv, strconv.Quote(dsn), pgSchemaEnv, strconv.Quote(schema)).Replace(s)
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// harness runs one backend's chaos: a serve process, its writers, and the
// sessions the faults created.
type harness struct {
	t       *testing.T
	b       backend
	config  string // absolute path of the config file
	root    string // the tmpfs mount point (as root), else a temp dir
	dir     string // the data directory, root/data
	mounted bool   // root is a tmpfs of tmpfsSize
	rng     *rand.Rand
	pgDSN   string // postgres: the test database
	schema  string // postgres: the run's schema, dropped at its end

	// gate is held shared by every writer for each batch; the harness
	// takes it exclusively to pause them.
	gate sync.RWMutex

	mu       sync.Mutex
	srv      *testserve.Process
	cl       *client.Client
	problems []string          // broken rules found outside the verifier
	codes    map[string]int    // error codes the writers saw
	last     map[string]string // each session's last error

	writers []*writer
	extra   []*record // sessions the second-writer faults created
	seq     int       // numbers the ids a fault makes up

	ops opState // the operation faults' sessions and findings (ops_test.go)
}

func newHarness(t *testing.T, b backend, seed uint64) *harness {
	cfg, err := filepath.Abs(b.config)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, b: b, config: cfg, root: t.TempDir(), rng: rand.New(rand.NewPCG(seed, 1)), codes: map[string]int{}, last: map[string]string{}}
	if b.store == postgresStore {
		// A fresh schema per run, dropped when the run ends, written into
		// a config of the run's own in place of the env() calls, so that
		// the backends can run side by side (t.Setenv cannot).
		h.pgDSN = pgtest.DSN(t)
		h.schema = pgtest.Schema(t, h.pgDSN)
		h.config = pgConfig(t, cfg, h.pgDSN, h.schema)
	}
	if os.Geteuid() == 0 {
		if err := syscall.Mount("tmpfs", h.root, "tmpfs", 0, "size="+tmpfsSize+",mode=0700"); err != nil {
			t.Logf("LOUD: cannot mount a tmpfs on %s (%v): disk-full is skipped", h.root, err)
		} else {
			h.mounted = true
			t.Cleanup(func() { h.unmount() })
		}
	}
	h.dir = filepath.Join(h.root, "data")
	if err := os.MkdirAll(h.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.mu.Lock()
		srv, cl := h.srv, h.cl
		h.mu.Unlock()
		if srv != nil {
			_ = srv.Kill9(exitTimeout)
		}
		if cl != nil {
			cl.Close()
		}
	})
	return h
}

// unmount unmounts the tmpfs; the serve process and its plugins are gone
// by then (cleanups run last in, first out).
func (h *harness) unmount() {
	if err := syscall.Unmount(h.root, 0); err != nil {
		h.t.Errorf("unmounting the tmpfs %s: %v; detaching it", h.root, err)
		_ = syscall.Unmount(h.root, syscall.MNT_DETACH)
	}
}

// cli runs the logbook CLI over the backend's config and data directory.
func (h *harness) cli(ctx context.Context, stdin string, args ...string) (stdout, stderr string, err error) {
	return runCLI(ctx, stdin, append([]string{"--config", h.config, "--data", h.dir}, args...)...)
}

// start starts a serve process over the data directory and makes it the
// writers' server.
func (h *harness) start() {
	h.t.Helper()
	p, err := h.startServe()
	if err != nil {
		h.t.Fatal(err)
	}
	h.mu.Lock()
	old := h.cl
	h.srv, h.cl = p, client.New(p.Addr(), client.Options{})
	h.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// startServe starts a serve process over the data directory.
func (h *harness) startServe() (*testserve.Process, error) {
	return testserve.Start(logbookBin, startTimeout, "--config", h.config, "--data", h.dir, "--log-level", "warn")
}

// server returns the current serve process.
func (h *harness) server() *testserve.Process {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.srv
}

// client returns a client of the current serve process.
func (h *harness) client() *client.Client {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cl
}

// restart kills serve with SIGKILL (if it still runs) and starts a new one.
func (h *harness) restart() {
	h.t.Helper()
	if err := h.server().Kill9(exitTimeout); err != nil {
		h.t.Fatal(err)
	}
	h.start()
}

// problem notes a broken rule; the test fails at the end of the backend's
// run.
func (h *harness) problem(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.problems = append(h.problems, err.Error())
}

// lastErrors renders each session's last error.
func (h *harness) lastErrors() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var parts []string
	for id, e := range h.last {
		parts = append(parts, id+": "+e)
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// noteError counts an error code a writer of session id saw.
func (h *harness) noteError(id string, err error) {
	code := string(sdk.CodeOf(err))
	if code == "" {
		code = "(no code)"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.codes[code]++
	h.last[id] = err.Error()
}

// codeSummary renders the error codes the writers saw.
func (h *harness) codeSummary() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var parts []string
	for c, n := range h.codes {
		parts = append(parts, fmt.Sprintf("%s×%d", c, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// records returns the records of every session of the run.
func (h *harness) records() []*record {
	out := make([]*record, 0, len(h.writers)+len(h.extra))
	for _, w := range h.writers {
		out = append(out, w.sessions()...)
	}
	return append(out, h.extra...)
}

// successes returns each writer's count of acknowledged batches.
func (h *harness) successes() []int64 {
	out := make([]int64, len(h.writers))
	for i, w := range h.writers {
		out[i] = w.successes.Load()
	}
	return out
}

// failures is the writers' count of failed calls.
func (h *harness) failures() int64 {
	var n int64
	for _, w := range h.writers {
		n += w.failures.Load()
	}
	return n
}

// awaitRecovery waits until every writer acknowledged a batch after the
// counts since.
func (h *harness) awaitRecovery(since []int64) error {
	deadline := time.Now().Add(recoverTimeout)
	for i, w := range h.writers {
		for w.successes.Load() <= since[i] {
			if time.Now().After(deadline) {
				return fmt.Errorf("writer of %s acknowledged nothing within %s of the fault (errors seen: %s); serve's log:\n%s",
					w.session().id, recoverTimeout, h.codeSummary(), tail(h.server().Log(), 4000))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return nil
}

// awaitFailure waits up to d until a writer's call failed after the count
// since; it reports whether one did.
func (h *harness) awaitFailure(since int64, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for h.failures() <= since {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// pause waits until every writer finished its batch and holds them.
func (h *harness) pause() error {
	locked := make(chan struct{})
	go func() {
		h.gate.Lock()
		close(locked)
	}()
	select {
	case <-locked:
		return nil
	case <-time.After(pauseTimeout):
		return fmt.Errorf("the writers did not finish their batches within %s (errors seen: %s; last: %s); serve's log:\n%s",
			pauseTimeout, h.codeSummary(), h.lastErrors(), tail(h.server().Log(), 4000))
	}
}

// resume lets the paused writers go on.
func (h *harness) resume() { h.gate.Unlock() }

// newID makes up a session id no writer uses.
func (h *harness) newID(prefix string) string {
	h.seq++
	return fmt.Sprintf("%s%d", prefix, h.seq)
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
