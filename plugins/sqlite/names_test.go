package sqlite_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
)

// A session id of 80 bytes, each escaped in a file name, has torn-row
// artifacts whose names are shortened to fit: its write open cuts the torn
// rows, and Delete removes its artifacts and no other session's.
func TestTornRowArtifactsOfALongNonASCIIIDFit(t *testing.T) {
	path := dbPath(t)
	b := openBackend(t, sqlite.DefaultConfig(path))
	ids := []string{strings.Repeat("é", 40), strings.Repeat("é", 39) + "e"}
	events := turnLog(6)
	for _, id := range ids {
		o, err := b.Create(t.Context(), header(id))
		must(t, err)
		for _, ev := range events {
			appendOK(t, b, o.Handle, [][]byte{ev})
		}
		must(t, b.Close(t.Context(), o.Handle))
	}
	rawExec(t, path, "UPDATE sessions SET next_seq = 4")
	for _, id := range ids {
		o, err := b.Open(t.Context(), id, sdk.AccessWrite)
		if err != nil {
			t.Fatalf("write open of a torn session with a %d-byte id: %v", len(id), err)
		}
		if name := filepath.Base(o.Torn.Artifact); o.Torn.FromSeq != 4 || len(name) > sdk.MaxFileNameBytes || !strings.HasSuffix(name, ".jsonl") {
			t.Fatalf("torn %+v: artifact name of %d bytes", o.Torn, len(name))
		}
		requireRead(t, "after the cut", b, o.Handle, events[:4])
		must(t, b.Close(t.Context(), o.Handle))
	}
	if _, err := b.Delete(t.Context(), ids[0], sdk.AuditRequest{Reason: "test", By: sdk.ByAPI}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(path + ".torn")
	must(t, err)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if o, err := b.Open(t.Context(), ids[1], sdk.AccessRead); err != nil || len(left) != 1 || !slices.ContainsFunc(left, func(n string) bool { return strings.HasPrefix(n, "~C3~A9") }) {
		t.Fatalf("after deleting one session the torn-row directory holds %q (%v, %+v); want the other session's artifact", left, err, o)
	}
}
