package postgres_test

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/internal/testbin"
	"github.com/seed-e5e476df/logbook/plugins/postgres"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

// logbookBin is the logbook binary the subprocess tests run as `logbook
// plugin postgres`, built once by TestMain.
var logbookBin string

func TestMain(m *testing.M) { testbin.Main(m, &logbookBin) }

// where is the database and schema an instance works in.
type where struct{ dsn, schema string }

// mode is one way a test reaches a backend.
type mode struct {
	name    string
	connect func(t *testing.T, w where) sdk.Persistence
}

var modes = []mode{
	{"in-process", inProcess},
	{"grpc-in-memory", overGRPC},
	{"subprocess", subprocess},
}

// TestConformance runs the persistence conformance suite against the
// backend reached directly, through go-plugin's in-memory gRPC connection,
// and as a real `logbook plugin postgres` subprocess, each subtest in a
// schema of its own. Every hook is set, so no subtest skips: Reopen
// configures a second backend over the same schema (another host: its own
// pool and ownership connection; in the subprocess mode another plugin
// process); Tear, Corrupt and SetFormatVersion change the tables through a
// connection of the test's own.
func TestConformance(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { persistencetest.Run(t, harness(m, dsn)) })
	}
}

func harness(m mode, dsn string) persistencetest.Harness {
	var mu sync.Mutex
	places := map[sdk.Persistence]where{}
	connect := func(t *testing.T, w where) sdk.Persistence {
		p := m.connect(t, w)
		mu.Lock()
		places[p] = w
		mu.Unlock()
		t.Cleanup(func() {
			mu.Lock()
			delete(places, p)
			mu.Unlock()
		})
		return p
	}
	placeOf := func(t *testing.T, p sdk.Persistence) where {
		mu.Lock()
		defer mu.Unlock()
		w, ok := places[p]
		if !ok {
			t.Fatalf("harness: %T was not made by this harness", p)
		}
		return w
	}
	return persistencetest.Harness{
		Name:         postgres.Name,
		Capabilities: persistencetest.Capabilities{StatCounts: true, IntactUnitsProveDamage: true},
		Declared:     postgres.ServeConfig("test").Info.Capabilities,
		Served:       postgres.ServeConfig("test").Persistence,
		New:          func(t *testing.T) sdk.Persistence { return connect(t, where{dsn, pgtest.Schema(t, dsn)}) },
		Reopen:       func(t *testing.T, p sdk.Persistence) sdk.Persistence { return connect(t, placeOf(t, p)) },
		Tear: func(t *testing.T, p sdk.Persistence, id string, _ int) {
			// A row is all or nothing; what an outside writer can leave is
			// a row that next_seq does not cover.
			w := placeOf(t, p)
			pgtest.Exec(t, w.dsn, "UPDATE "+w.schema+".sessions SET next_seq = next_seq - 1 WHERE id = $1", id)
		},
		Corrupt: func(t *testing.T, p sdk.Persistence, id string, seq sdk.Seq) string {
			w := placeOf(t, p)
			pgtest.Exec(t, w.dsn, "UPDATE "+w.schema+`.events SET envelope = '{"todos":[', zstd = false WHERE session_id = $1 AND seq = $2`, id, int64(seq))
			return "seq " + strconv.FormatInt(int64(seq), 10)
		},
		SetFormatVersion: func(t *testing.T, p sdk.Persistence, id, literal string) {
			setFormatVersion(t, placeOf(t, p), id, literal)
		},
		Rewrite: func(t *testing.T, p sdk.Persistence, id string, seq sdk.Seq, ev []byte) {
			w := placeOf(t, p)
			pgtest.Exec(t, w.dsn, "UPDATE "+w.schema+".events SET envelope = $3, zstd = false WHERE session_id = $1 AND seq = $2", id, int64(seq), ev)
		},
	}
}

func configJSON(t testing.TB, w where, extra map[string]any) []byte {
	t.Helper()
	m := map[string]any{"dsn": w.dsn, "schema": w.schema}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// inProcess is a Backend of this process over w.
func inProcess(t *testing.T, w where) sdk.Persistence {
	cfg := postgres.DefaultConfig(w.dsn)
	cfg.Schema = w.schema
	return openBackend(t, cfg)
}

func openBackend(t testing.TB, cfg postgres.Config) *postgres.Backend {
	t.Helper()
	b, err := postgres.Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("postgres.Open(schema %s): %v", cfg.Schema, err)
	}
	t.Cleanup(func() {
		if err := b.Shutdown(); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return b
}

// overGRPC serves a Backend through go-plugin's in-process gRPC connection
// and configures it through the Configure RPC, as the host does.
func overGRPC(t *testing.T, w where) sdk.Persistence {
	t.Helper()
	cfg := postgres.ServeConfig("test")
	t.Cleanup(func() { cfg.Persistence.(*postgres.Backend).Shutdown() })
	return plugintest.ConfiguredPersistence(t, cfg, configJSON(t, w, nil))
}

// subprocess starts `logbook plugin postgres` as the host does (AutoMTLS
// on) with w in its block, as a config file would.
func subprocess(t *testing.T, w where) sdk.Persistence {
	return startPlugin(t, configJSON(t, w, nil))
}

// startPlugin starts `logbook plugin postgres` as the host does, with
// config as its block, and returns its persistence.
func startPlugin(t testing.TB, config []byte) sdk.Persistence {
	t.Helper()
	return plugintest.LaunchedPersistence(t, exec.Command(logbookBin, "plugin", postgres.Name), config)
}

// setFormatVersion rewrites the version member of session id's stored
// header, byte for byte.
func setFormatVersion(t testing.TB, w where, id, literal string) {
	t.Helper()
	c := pgtest.Conn(t, w.dsn)
	var header string
	if err := c.QueryRow(t.Context(), "SELECT header FROM "+w.schema+".sessions WHERE id = $1", id).Scan(&header); err != nil {
		t.Fatalf("reading the header of %q: %v", id, err)
	}
	const prefix = `{"type":"session","version":`
	rest, ok := strings.CutPrefix(header, prefix)
	if !ok {
		t.Fatalf("header %q does not start with %s", header, prefix)
	}
	header = prefix + literal + rest[strings.IndexByte(rest, ','):]
	if _, err := c.Exec(t.Context(), "UPDATE "+w.schema+".sessions SET header = $1 WHERE id = $2", header, id); err != nil {
		t.Fatal(err)
	}
}
