package sqlite

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

func TestEncIDKeepsSafeBytesAndEscapesTheRest(t *testing.T) {
	cases := map[string]string{
		"s1":         "s1",
		"a.b_c-d":    "a.b_c-d",
		"S1":         "~531",
		".hidden":    "~2Ehidden",
		"..":         "~2E.",
		"a/b\\c":     "a~2Fb~5Cc",
		"~":          "~7E",
		"é":          "~C3~A9",
		"with space": "with~20space",
	}
	for id, want := range cases {
		if got := encID(id); got != want {
			t.Errorf("encID(%q) = %q; want %q", id, got, want)
		}
	}
	if encID("Ab") == encID("ab") || encID("aB") == encID("ab") {
		t.Error("encID collides under ASCII case folding")
	}
	if n := len(encID(strings.Repeat("A", 80))); n != 240 {
		t.Errorf("an 80-byte id encodes to %d bytes; want at most 240", n)
	}
}

func TestNormalizeSQLIgnoresFormattingOnly(t *testing.T) {
	a := normalizeSQL("CREATE TABLE t(\n  a INTEGER, -- comment\n  b TEXT NOT NULL ) STRICT")
	b := normalizeSQL("create table t(a integer,b text not null)strict")
	if a != b {
		t.Fatalf("normalizeSQL differs on formatting:\n %q\n %q", a, b)
	}
	if normalizeSQL("CREATE TABLE t(a INTEGER) STRICT") == normalizeSQL("CREATE TABLE t(a INTEGER)") {
		t.Fatal("normalizeSQL hides a missing STRICT")
	}
}

func TestCompressStoresAFrameOnlyWhenItIsSmaller(t *testing.T) {
	c, err := newCodec()
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	for _, min := range []int{MinCompressMinBytes, DefaultCompressMinBytes, 4096} {
		small := row{data: []byte(`"` + strings.Repeat("a", min-3) + `"`)} // min-1 bytes
		c.compress(&small, min)
		if small.blob != nil {
			t.Fatalf("data of %d bytes was compressed; the threshold is %d", len(small.data), min)
		}
		big := row{data: []byte(`"` + strings.Repeat("a", min-2) + `"`)} // min bytes
		c.compress(&big, min)
		if big.blob == nil || len(big.blob) >= len(big.data) {
			t.Fatalf("compressible data of %d bytes was not stored as a smaller frame (threshold %d)", len(big.data), min)
		}
		noise := make([]byte, 3*min)
		rand.Read(noise)
		random := row{data: noise}
		c.compress(&random, min)
		if random.blob != nil {
			t.Fatalf("incompressible data got a frame of %d bytes for %d bytes of data", len(random.blob), len(noise))
		}
	}
}

// TestEveryPragmaReadsBack checks the connection the backend keeps, in
// every journal mode: trusted_schema OFF, foreign_keys ON, busy_timeout as
// configured, synchronous FULL, the journal mode asked for.
func TestEveryPragmaReadsBack(t *testing.T) {
	for _, mode := range []string{"wal", "delete", "truncate", "persist", "memory"} {
		t.Run(mode, func(t *testing.T) {
			cfg := DefaultConfig(filepath.Join(t.TempDir(), "sessions.db"))
			if mode == "memory" {
				cfg.Path = MemoryPath
			} else {
				cfg.JournalMode = mode
			}
			cfg.BusyTimeout = 1234_000_000 // 1234 ms
			b, err := Open(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Shutdown()
			for pragma, want := range map[string]string{
				"trusted_schema": "0", "foreign_keys": "1", "busy_timeout": "1234", "synchronous": "2",
				"journal_mode": mode, "application_id": "1280264002", "user_version": strconv.Itoa(UserVersion),
			} {
				var got string
				if err := b.st.db.QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("PRAGMA %s = %s; want %s", pragma, got, want)
				}
			}
		})
	}
}

// TestTornRowsOfAnInMemoryDatabaseGoToATempDirectory covers the one place
// an in-memory database touches the file system.
func TestTornRowsOfAnInMemoryDatabaseGoToATempDirectory(t *testing.T) {
	b, err := Open(t.Context(), DefaultConfig(MemoryPath))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	o, err := b.Create(t.Context(), sdk.Header{ID: "s1", CreatedAt: 1})
	if err != nil {
		t.Fatal(err)
	}
	events := [][]byte{[]byte(`{"seq":0,"time":1,"type":"t","data":0}`), []byte(`{"seq":1,"time":1,"type":"t","data":1}`)}
	if _, err := b.Append(t.Context(), o.Handle, 0, events); err != nil {
		t.Fatal(err)
	}
	b.Close(t.Context(), o.Handle)
	if _, err := b.st.db.ExecContext(t.Context(), "UPDATE sessions SET next_seq = 1"); err != nil {
		t.Fatal(err)
	}
	w, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(w.Torn.Artifact)) })
	if w.Torn.FromSeq != 1 || w.Torn.Bytes != int64(len(events[1])+1) || !strings.HasPrefix(w.Torn.Artifact, filepath.Join(os.TempDir(), "logbook-sqlite-memory-")) {
		t.Fatalf("torn %+v; want from seq 1, %d bytes, an artifact in a temporary directory", w.Torn, len(events[1])+1)
	}
}

// TestMigrateOfAChangedRowIsOWNERSHIP_LOST: a migration from v1 stored
// when the sessions row is no longer at v1 (another process migrated it
// after this open read it) updates no row and is OWNERSHIP_LOST, not an
// I/O error, and leaves the row as it was.
func TestMigrateOfAChangedRowIsOWNERSHIP_LOST(t *testing.T) {
	ctx := t.Context()
	cfg := DefaultConfig(filepath.Join(t.TempDir(), "sessions.db"))
	b, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	if _, err := b.Create(ctx, sdk.Header{ID: "s1", CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	s, err := b.store()
	if err != nil {
		t.Fatal(err)
	}
	before, _, err := s.session(ctx, s.stmts.session, "s1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.migrate(ctx, "s1", 1, []byte(`{"version":2}`))
	if !errors.Is(err, sdk.CodeOwnershipLost) || !strings.Contains(err.Error(), "format migration") || strings.Contains(err.Error(), "<nil>") {
		t.Fatalf("migrate of a row already at v%d = %v; want OWNERSHIP_LOST naming the format migration", sdk.FormatVersion, err)
	}
	after, _, err := s.session(ctx, s.stmts.session, "s1")
	if err != nil || !reflect.DeepEqual(after, before) {
		t.Fatalf("the sessions row changed from %+v to %+v (%v)", before, after, err)
	}
}
