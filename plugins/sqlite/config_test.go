package sqlite_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

func TestParseConfigDefaultsAndKeys(t *testing.T) {
	cases := map[string]sqlite.Config{
		`{"path":"/d/s.db"}`: {Path: "/d/s.db", JournalMode: "wal", BusyTimeout: 5 * time.Second, CompressData: true, CompressMinBytes: 256},
		`{"path":"/d/s.db","journal_mode":"truncate","busy_timeout":0,"compress_data":false}`:   {Path: "/d/s.db", JournalMode: "truncate", CompressData: false, CompressMinBytes: 256},
		`{"path":":memory:","busy_timeout":null,"journal_mode":null,"compress_min_bytes":null}`: {Path: ":memory:", JournalMode: "wal", BusyTimeout: 5 * time.Second, CompressData: true, CompressMinBytes: 256},
		`{"path":"x","busy_timeout":2147483647}`:                                                {Path: "x", JournalMode: "wal", BusyTimeout: 2147483647 * time.Millisecond, CompressData: true, CompressMinBytes: 256},
		`{"path":"x","compress_min_bytes":64}`:                                                  {Path: "x", JournalMode: "wal", BusyTimeout: 5 * time.Second, CompressData: true, CompressMinBytes: 64},
		`{"path":"x","compress_min_bytes":1048576}`:                                             {Path: "x", JournalMode: "wal", BusyTimeout: 5 * time.Second, CompressData: true, CompressMinBytes: 1 << 20},
	}
	for in, want := range cases {
		got, err := sqlite.ParseConfig([]byte(in))
		if err != nil || got != want {
			t.Errorf("ParseConfig(%s) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}

func TestParseConfigRefusesBadConfigNamingTheKey(t *testing.T) {
	cases := map[string][]any{
		`{}`:                                     {`"path"`},
		`{"path":""}`:                            {"path is empty"},
		`{"path":"x","journal_mode":"off"}`:      {"journal_mode", `"off"`},
		`{"path":"x","busy_timeout":-1}`:         {"busy_timeout", "-1"},
		`{"path":"x","busy_timeout":2147483648}`: {"busy_timeout", "2147483648"},
		`{"path":"x","busy_timeout":1.5}`:        {"busy_timeout", "1.5"},
		`{"path":"x","busy_timeout":"5000"}`:     {"busy_timeout", `"5000"`},
		`{"path":"x","compress_data":"yes"}`:     {"compress_data"},
		`{"path":"x","journalMode":"wal"}`:       {"journalMode"},
		`["x"]`:                                  {"JSON object"},
		`{"path":"x"} {}`:                        {"after its JSON object"},
	}
	for in, values := range cases {
		_, err := sqlite.ParseConfig([]byte(in))
		t.Logf("%s: %v", in, err)
		persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, values...)
	}
}

// TestCompressMinBytesOutOfRangeIsCONFIG_INVALID: a compress_min_bytes that
// is not a whole number in 64 … 1048576 is refused naming the key, the
// range and the value, by ParseConfig and by Open, and Configure leaves the
// backend unconfigured.
func TestCompressMinBytesOutOfRangeIsCONFIG_INVALID(t *testing.T) {
	for _, v := range []string{"63", "0", "-64", "1048577", "4294967296", "1e3", "256.5", `"256"`, "true", "[256]", "99999999999999999999"} {
		in := `{"path":"x","compress_min_bytes":` + v + `}`
		_, err := sqlite.ParseConfig([]byte(in))
		persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, "compress_min_bytes")
		if !strings.Contains(err.Error(), "64 … 1048576") || !strings.Contains(err.Error(), "got "+v) {
			t.Errorf("ParseConfig(%s) = %v; want the range 64 … 1048576 and the value %s", in, err, v)
		}
		b := sqlite.New()
		err = b.Configure(t.Context(), []byte(in))
		persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, "compress_min_bytes")
		_, err = b.Describe(t.Context())
		persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, "not configured")
	}
	for _, n := range []int{63, 0, -1, 1<<20 + 1} {
		cfg := sqlite.DefaultConfig(dbPath(t))
		cfg.CompressMinBytes = n
		_, err := sqlite.Open(t.Context(), cfg)
		persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, "compress_min_bytes", "64 … 1048576")
		if _, statErr := os.Stat(cfg.Path); !os.IsNotExist(statErr) {
			t.Errorf("Open with compress_min_bytes %d created %s (%v)", n, cfg.Path, statErr)
		}
	}
}

func TestCallsBeforeConfigureAndAfterShutdownAreCONFIG_INVALID(t *testing.T) {
	b := sqlite.New()
	calls := func(want string) {
		t.Helper()
		ctx := t.Context()
		_, err := b.Describe(ctx)
		persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, want)
		_, err = b.Create(ctx, header("s1"))
		persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, want)
		_, err = b.Open(ctx, "s1", sdk.AccessRead)
		persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, want)
		_, err = b.Stat(ctx, "s1")
		persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, want)
		err = b.List(ctx, func(sdk.ListEntry) error { return nil })
		persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, want)
		if err := b.Close(ctx, "h1"); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	calls("not configured")
	err := b.Configure(t.Context(), []byte(`{"path":"x","journal_mode":"fast"}`))
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, "journal_mode")
	calls("not configured")
	must(t, b.Configure(t.Context(), configJSON(t, dbPath(t), nil)))
	err = b.Configure(t.Context(), configJSON(t, dbPath(t), nil))
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, "already configured")
	must(t, b.Shutdown())
	must(t, b.Shutdown())
	calls("shut down")
}

func TestHostConfiguresThePluginFromItsConfigBlock(t *testing.T) {
	path := dbPath(t)
	p, _ := startPlugin(t, configJSON(t, path, map[string]any{"journal_mode": "delete", "busy_timeout": 100, "compress_data": false}))
	d, err := p.Describe(t.Context())
	must(t, err)
	if d.Name != sqlite.Name || d.FormatVersion != sdk.FormatVersion || d.Compression != "" {
		t.Fatalf("Describe = %+v; want sqlite, format %d, no compression", d, sdk.FormatVersion)
	}
	o, err := p.Create(t.Context(), header("s1"))
	must(t, err)
	events := [][]byte{todo(0, 10_000, "a")}
	appendOK(t, p, o.Handle, events)
	if mode := queryString(t, path, "PRAGMA journal_mode"); mode != "delete" {
		t.Fatalf("journal_mode %s; want delete", mode)
	}
	if got := storedDataType(t, path, 0); got != "text" {
		t.Fatalf("data stored as %s with compress_data = false", got)
	}

	_, err = plugintest.Launch(t, exec.Command(logbookBin, "plugin", sqlite.Name), []byte(`{"path":"x.db","zstd_level":"best"}`))
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, "zstd_level")
}

func TestInMemoryDatabaseIsPrivateAndSharedOnlyByPeers(t *testing.T) {
	b := openBackend(t, sqlite.DefaultConfig(sqlite.MemoryPath))
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	events := persistencetest.Batch(0, 3)
	appendOK(t, b, o.Handle, events)

	peer, err := b.Peer()
	must(t, err)
	defer peer.Shutdown()
	r, err := peer.Open(t.Context(), "s1", sdk.AccessRead)
	must(t, err)
	requireRead(t, "peer", peer, r.Handle, events)
	_, err = peer.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, `"s1"`)

	other := openBackend(t, sqlite.DefaultConfig(sqlite.MemoryPath))
	_, err = other.Stat(t.Context(), "s1")
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, `"s1"`)

	// The first Backend's shutdown leaves the database to its peer.
	must(t, b.Shutdown())
	w, err := peer.Open(t.Context(), "s1", sdk.AccessWrite)
	must(t, err)
	appendOK(t, peer, w.Handle, persistencetest.Batch(3, 1))
	for _, name := range []string{":memory:", ":memory:.locks", ":memory:.torn"} {
		if _, err := os.Lstat(name); !os.IsNotExist(err) {
			t.Fatalf("an in-memory database touched %s in the working directory: %v", name, err)
		}
	}
}

func TestStatCountsEventsExactly(t *testing.T) {
	b := openBackend(t, sqlite.DefaultConfig(dbPath(t)))
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	for n := 0; n < 9; n += 3 {
		d := appendOK(t, b, o.Handle, persistencetest.Batch(n, 3))
		st, err := b.Stat(t.Context(), "s1")
		must(t, err)
		if st.EventCount != int64(n+3) || st.SizeBytes != -1 || st.FormatVersion != sdk.FormatVersion || st.Revision != d.Revision {
			t.Fatalf("Stat = %+v; want %d events, size -1 (unknown), format %d, revision %q", st, n+3, sdk.FormatVersion, d.Revision)
		}
	}
}
