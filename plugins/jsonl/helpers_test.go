package jsonl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// newTestBackend returns a backend over cfg whose clock is fixed, so torn
// artifacts have predictable names.
func newTestBackend(t testing.TB, cfg Config, opts ...Option) *Backend {
	t.Helper()
	b, err := New(cfg, append([]Option{WithClock(func() int64 { return 1_700_000_000_000 })}, opts...)...)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return b
}

// storeEvents creates session id with the given batches and closes it; it
// returns every event stored.
func storeEvents(t testing.TB, b *Backend, id string, batches ...[][]byte) [][]byte {
	t.Helper()
	o, err := b.Create(t.Context(), testHeader(id))
	if err != nil {
		t.Fatalf("Create(%q): %v", id, err)
	}
	var all [][]byte
	if len(batches) == 0 {
		if _, err := b.Flush(t.Context(), o.Handle); err != nil {
			t.Fatal(err)
		}
	}
	for _, batch := range batches {
		first := sdk.Seq(len(all))
		if _, err := b.Append(t.Context(), o.Handle, first, batch); err != nil {
			t.Fatalf("Append(%q, %d): %v", id, first, err)
		}
		all = append(all, batch...)
	}
	if err := b.Close(t.Context(), o.Handle); err != nil {
		t.Fatal(err)
	}
	return all
}

func testHeader(id string) sdk.Header {
	return sdk.Header{FormatVersion: sdk.FormatVersion, ID: id, CreatedAt: 1_700_000_000_000, CWD: "/work"}
}

// readEvents opens id with access, reads everything, and returns the
// Opened reply and the events; a read handle is closed again.
func readEvents(t testing.TB, b *Backend, id string, access sdk.Access) (sdk.Opened, [][]byte) {
	t.Helper()
	o, err := b.Open(t.Context(), id, access)
	if err != nil {
		t.Fatalf("Open(%q, %d): %v", id, access, err)
	}
	events := persistencetest.ReadAll(t, b, o.Handle)
	if access == sdk.AccessRead {
		if err := b.Close(t.Context(), o.Handle); err != nil {
			t.Fatal(err)
		}
	}
	return o, events
}

func requireEqualEvents(t testing.TB, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events; want %d", what, len(got), len(want))
	}
	for i := range want {
		if string(got[i]) != string(want[i]) {
			t.Fatalf("%s: event %d = %s; want %s", what, i, got[i], want[i])
		}
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func sessionLog(cfg Config, id string) string {
	return filepath.Join(cfg.Root, EncodeID(id), logName(sdk.FormatVersion, cfg.Compression != CompressionNone))
}
