package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/testbin"
	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

// logbookBin is the logbook binary the subprocess tests run as `logbook
// plugin sqlite`, built once by TestMain.
var logbookBin string

func TestMain(m *testing.M) { testbin.Main(m, &logbookBin) }

// mode is one way a test reaches a backend over the database at path.
type mode struct {
	name    string
	connect func(t *testing.T, path string) sdk.Persistence
}

var modes = []mode{
	{"in-process", inProcess},
	{"grpc-in-memory", overGRPC},
	{"subprocess", subprocess},
}

// TestConformance runs the persistence conformance suite against the backend
// reached directly, through go-plugin's in-memory gRPC connection, and as a
// real `logbook plugin sqlite` subprocess. Every hook is set, so no subtest
// skips: Reopen configures a second backend over the same file (in the
// subprocess mode: a second plugin process, so the write-claim rules run
// across processes); Tear, Corrupt and SetFormatVersion change the database
// through a connection of the test's own.
func TestConformance(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { persistencetest.Run(t, harness(m)) })
	}
}

func harness(m mode) persistencetest.Harness {
	var mu sync.Mutex
	paths := map[sdk.Persistence]string{}
	connect := func(t *testing.T, path string) sdk.Persistence {
		p := m.connect(t, path)
		mu.Lock()
		paths[p] = path
		mu.Unlock()
		t.Cleanup(func() {
			mu.Lock()
			delete(paths, p)
			mu.Unlock()
		})
		return p
	}
	pathOf := func(t *testing.T, p sdk.Persistence) string {
		mu.Lock()
		defer mu.Unlock()
		path, ok := paths[p]
		if !ok {
			t.Fatalf("harness: %T was not made by this harness", p)
		}
		return path
	}
	return persistencetest.Harness{
		Name: sqlite.Name,
		// Stat reports the exact event count but no size (SizeBytes -1), so
		// StatCounts stays off; TestStatCountsEventsExactly checks the count.
		// Every row is checked on its own.
		Capabilities: persistencetest.Capabilities{IntactUnitsProveDamage: true},
		Declared:     sqlite.ServeConfig("test").Info.Capabilities,
		Served:       sqlite.ServeConfig("test").Persistence,
		New:          func(t *testing.T) sdk.Persistence { return connect(t, dbPath(t)) },
		Reopen:       func(t *testing.T, p sdk.Persistence) sdk.Persistence { return connect(t, pathOf(t, p)) },
		Tear: func(t *testing.T, p sdk.Persistence, id string, _ int) {
			// A row is all or nothing; what a crash (or an outside writer)
			// can leave is a row that next_seq does not cover.
			rawExec(t, pathOf(t, p), "UPDATE sessions SET next_seq = next_seq - 1 WHERE id = ?", id)
		},
		Corrupt: func(t *testing.T, p sdk.Persistence, id string, seq sdk.Seq) string {
			rawExec(t, pathOf(t, p), `UPDATE events SET data = '{"todos":[' WHERE session_id = ? AND seq = ?`, id, int64(seq))
			return "seq " + strconv.FormatInt(int64(seq), 10)
		},
		SetFormatVersion: func(t *testing.T, p sdk.Persistence, id, literal string) {
			setFormatVersion(t, pathOf(t, p), id, literal)
		},
	}
}

// dbPath is a database path in a fresh directory of the test.
func dbPath(t *testing.T) string { return filepath.Join(t.TempDir(), "sessions.db") }

func configJSON(t testing.TB, path string, extra map[string]any) []byte {
	t.Helper()
	m := map[string]any{"path": path}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// inProcess is a Backend of this process over path.
func inProcess(t *testing.T, path string) sdk.Persistence {
	return openBackend(t, sqlite.DefaultConfig(path))
}

func openBackend(t *testing.T, cfg sqlite.Config) *sqlite.Backend {
	t.Helper()
	b, err := sqlite.Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("sqlite.Open(%+v): %v", cfg, err)
	}
	t.Cleanup(func() {
		if err := b.Shutdown(); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return b
}

// overGRPC serves a Backend through go-plugin's in-process gRPC connection
// (the production server, client, error mapping and message limits) and
// configures it through the Configure RPC, as the host does.
func overGRPC(t *testing.T, path string) sdk.Persistence {
	t.Helper()
	cfg := sqlite.ServeConfig("test")
	t.Cleanup(func() { cfg.Persistence.(*sqlite.Backend).Shutdown() })
	return plugintest.ConfiguredPersistence(t, cfg, configJSON(t, path, nil))
}

// subprocess starts `logbook plugin sqlite` as the host does (AutoMTLS on)
// with the path in its block, as a config file would.
func subprocess(t *testing.T, path string) sdk.Persistence {
	p, _ := startPlugin(t, configJSON(t, path, nil))
	return p
}

// startPlugin starts `logbook plugin sqlite` as the host does (AutoMTLS
// on), with config as its block, and returns its persistence and its
// process.
func startPlugin(t *testing.T, config []byte) (sdk.Persistence, *os.Process) {
	t.Helper()
	cmd := exec.Command(logbookBin, "plugin", sqlite.Name)
	p := plugintest.LaunchedPersistence(t, cmd, config)
	return p, cmd.Process
}

// rawDB opens the database at path with a connection of the test's own,
// as another program would; it changes no setting of the file.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func rawExec(t testing.TB, path, query string, args ...any) {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// setFormatVersion rewrites the stored format version of session id: the
// sessions.format_version column (STRICT INTEGER, so only for an integer
// literal) and the version member of the header column, byte for byte.
func setFormatVersion(t testing.TB, path, id, literal string) {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	var header string
	if err := db.QueryRow("SELECT header FROM sessions WHERE id = ?", id).Scan(&header); err != nil {
		t.Fatalf("reading the header of %q: %v", id, err)
	}
	const prefix = `{"type":"session","version":`
	rest, ok := strings.CutPrefix(header, prefix)
	if !ok {
		t.Fatalf("header %q does not start with %s", header, prefix)
	}
	header = prefix + literal + rest[strings.IndexByte(rest, ','):]
	if v, err := strconv.ParseInt(literal, 10, 64); err == nil {
		_, err = db.Exec("UPDATE sessions SET format_version = ?, header = ? WHERE id = ?", v, header, id)
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := db.Exec("UPDATE sessions SET header = ? WHERE id = ?", header, id); err != nil {
		t.Fatal(err)
	}
}
