package sqlite_test

import (
	"os"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// readDamaged calls ReadDamaged on s1 and collects what it passed to fn.
func readDamaged(t *testing.T, b *sqlite.Backend) (sdk.Damaged, [][]byte) {
	t.Helper()
	var events [][]byte
	d, err := b.ReadDamaged(t.Context(), "s1", func(chunk [][]byte) error {
		events = append(events, chunk...)
		return nil
	})
	must(t, err)
	return d, events
}

// requireRowsKept checks that ReadDamaged left rows rows and saved no
// torn rows.
func requireRowsKept(t *testing.T, path string, rows int64) {
	t.Helper()
	if n := queryInt(t, path, "SELECT count(*) FROM events"); n != rows {
		t.Fatalf("ReadDamaged changed the rows: %d; want %d", n, rows)
	}
	if _, err := os.Stat(path + ".torn"); !os.IsNotExist(err) {
		t.Fatalf("ReadDamaged saved torn rows: %v", err)
	}
}

// TestReadDamaged: a damaged row with intact rows after it gives the rows
// before it and the damage by row (the seq, the rows from there, those
// rows as artifact lines, the intact ones counted); the database stays as
// it was.
func TestReadDamaged(t *testing.T) {
	for _, c := range []struct {
		name, damage string
		rows         int64    // stored rows from the damage on
		tail         []string // the artifact lines; "…" ends a prefix
		reason       string
	}{
		{"undecodable", `UPDATE events SET data = 'not json' WHERE seq = 3`, 3, []string{`{"undecodable":{"seq":3,…`, "4", "5"}, "not lossless JSON"},
		{"missing", `DELETE FROM events WHERE seq = 3`, 2, []string{`{"missing":{"fromSeq":3,"toSeq":3}}`, "4", "5"}, "missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			events := turnLog(6)
			path, b := storeLog(t, events)
			rawExec(t, path, c.damage)
			rows := queryInt(t, path, "SELECT count(*) FROM events")
			d, got := readDamaged(t, b)
			requireEqual(t, "the valid prefix", got, events[:3])
			dm := d.Damage
			if !d.Corrupt || d.ValidEvents != 3 || d.Header.ID != "s1" || dm.Offset != 3 || dm.Bytes != c.rows || dm.IntactEventsExcluded != 2 || !strings.Contains(dm.Reason, c.reason) {
				t.Fatalf("ReadDamaged = %+v; want corrupt, 3 valid events, damage at seq 3 over %d rows, 2 intact, reason naming %q", d, c.rows, c.reason)
			}
			lines := strings.Split(strings.TrimSuffix(string(dm.Tail), "\n"), "\n")
			for i, want := range c.tail {
				if len(want) == 1 { // the index of an event
					want = string(events[want[0]-'0'])
				}
				if i >= len(lines) || !strings.HasPrefix(lines[i], strings.TrimSuffix(want, "…")) || (!strings.HasSuffix(want, "…") && lines[i] != want) {
					t.Fatalf("tail\n%s\nwant lines (… ends a prefix)\n%s", dm.Tail, strings.Join(c.tail, "\n"))
				}
			}
			if len(lines) != len(c.tail) || !strings.HasSuffix(string(dm.Tail), "\n") {
				t.Fatalf("tail\n%s\nwant %d lines, each ending in a newline", dm.Tail, len(c.tail))
			}
			requireRowsKept(t, path, rows)
		})
	}
}

// TestReadDamagedClean: a session that loads, also with torn rows past
// next_seq, is not corrupt: its valid prefix and zero Damage, nothing cut.
func TestReadDamagedClean(t *testing.T) {
	events := turnLog(6)
	path, b := storeLog(t, events)
	rawExec(t, path, "UPDATE sessions SET next_seq = 4")
	d, got := readDamaged(t, b)
	requireEqual(t, "events", got, events[:4])
	if d.Corrupt || d.ValidEvents != 4 || d.Damage.Offset != 0 || d.Damage.Bytes != 0 || d.Damage.Tail != nil {
		t.Fatalf("ReadDamaged of a torn session = %+v; want 4 valid events, not corrupt, zero damage", d)
	}
	requireRowsKept(t, path, 6)
}

// TestReadDamagedRefuses: a missing session is SESSION_NOT_FOUND, a
// header that does not decode CORRUPT_LOG, and fn's error ends the read.
func TestReadDamagedRefuses(t *testing.T) {
	path, b := storeLog(t, turnLog(3))
	_, err := b.ReadDamaged(t.Context(), "nope", func([][]byte) error { return nil })
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound)
	stop := sdk.Errorf(sdk.CodeUsage, "test", "stop")
	if _, err := b.ReadDamaged(t.Context(), "s1", func([][]byte) error { return stop }); err != stop {
		t.Fatalf("ReadDamaged returned %v; want fn's error", err)
	}
	rawExec(t, path, `UPDATE sessions SET header = '{"type":"session","version":1'`)
	_, err = b.ReadDamaged(t.Context(), "s1", func([][]byte) error { return nil })
	persistencetest.RequireCode(t, err, sdk.CodeCorruptLog)
}
