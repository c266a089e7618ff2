package sqlite_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// turnLog is turn/start then todo events 1 … n-1, stored in batches of one
// event, so that damage to one row is damage to one batch.
func turnLog(n int) [][]byte {
	return append([][]byte{persistencetest.Envelope(0, "turn/start", `{"turn":1}`)}, persistencetest.Batch(1, n-1)...)
}

func turnEndAt(seq int) []byte {
	return persistencetest.Envelope(seq, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`)
}

// storeLog stores events as session s1 of a new database, one batch per
// event, and returns the database path and a backend over it.
func storeLog(t *testing.T, events [][]byte) (string, *sqlite.Backend) {
	t.Helper()
	path := dbPath(t)
	b := openBackend(t, sqlite.DefaultConfig(path))
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	for _, ev := range events {
		appendOK(t, b, o.Handle, [][]byte{ev})
	}
	must(t, b.Close(t.Context(), o.Handle))
	return path, b
}

// openTorn opens s1 and requires a torn tail from seq from, the events
// before it, and an artifact exactly for a write open.
func openTorn(t *testing.T, b *sqlite.Backend, access sdk.Access, from int, events [][]byte) sdk.Opened {
	t.Helper()
	o, err := b.Open(t.Context(), "s1", access)
	must(t, err)
	write := access == sdk.AccessWrite
	if o.NextSeq != sdk.Offset(from) || o.Torn.FromSeq != sdk.Seq(from) || o.Torn.Bytes <= 0 || (o.Torn.Artifact != "") != write {
		t.Fatalf("Open(%d) = next seq %d, torn %+v; want next seq %d, torn from %d, an artifact only when writing", access, o.NextSeq, o.Torn, from, from)
	}
	requireRead(t, "after a torn open", b, o.Handle, events[:from])
	return o
}

// requireArtifact checks the file a write open saved the torn rows to:
// <path>.torn/s1.<ms>.jsonl, mode 0600 in a 0700 directory, holding lines
// and as many bytes as Torn.Bytes says. A line ending in "…" is a prefix.
func requireArtifact(t *testing.T, path string, torn sdk.Torn, lines ...string) {
	t.Helper()
	dir := path + ".torn"
	if filepath.Dir(torn.Artifact) != dir || !strings.HasPrefix(filepath.Base(torn.Artifact), "s1.") || !strings.HasSuffix(torn.Artifact, ".jsonl") {
		t.Fatalf("artifact %s; want %s/s1.<epoch ms>.jsonl", torn.Artifact, dir)
	}
	for p, want := range map[string]os.FileMode{dir: os.ModeDir | 0o700, torn.Artifact: 0o600} {
		fi, err := os.Stat(p)
		must(t, err)
		if fi.Mode() != want {
			t.Errorf("%s has mode %v; want %v", p, fi.Mode(), want)
		}
	}
	got, err := os.ReadFile(torn.Artifact)
	must(t, err)
	gotLines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	ok := len(gotLines) == len(lines) && strings.HasSuffix(string(got), "\n")
	for i := 0; ok && i < len(lines); i++ {
		if prefix, cut := strings.CutSuffix(lines[i], "…"); cut {
			ok = strings.HasPrefix(gotLines[i], prefix)
		} else {
			ok = gotLines[i] == lines[i]
		}
	}
	if !ok {
		t.Fatalf("artifact holds\n%s\nwant (… ends a prefix)\n%s", got, strings.Join(lines, "\n"))
	}
	if int64(len(got)) != torn.Bytes {
		t.Fatalf("artifact has %d bytes; Torn.Bytes says %d", len(got), torn.Bytes)
	}
}

func TestRowsBeyondNextSeqAreATornTail(t *testing.T) {
	events := turnLog(6)
	path, b := storeLog(t, events)
	rev := queryInt(t, path, "SELECT revision FROM sessions")
	rawExec(t, path, "UPDATE sessions SET next_seq = 4")

	r := openTorn(t, b, sdk.AccessRead, 4, events)
	if n := queryInt(t, path, "SELECT count(*) FROM events"); n != 6 {
		t.Fatalf("a read open changed the rows: %d left; want 6", n)
	}
	if _, err := os.Stat(path + ".torn"); !os.IsNotExist(err) {
		t.Fatalf("a read open made the torn-row directory: %v", err)
	}
	w := openTorn(t, b, sdk.AccessWrite, 4, events)
	if w.Torn.Bytes != r.Torn.Bytes || w.Revision == r.Revision {
		t.Fatalf("write open cut %d bytes, revision %q; the read open reported %d bytes, revision %q", w.Torn.Bytes, w.Revision, r.Torn.Bytes, r.Revision)
	}
	requireArtifact(t, path, w.Torn, string(events[4]), string(events[5]))
	if n, next, rev2 := queryInt(t, path, "SELECT count(*) FROM events"), queryInt(t, path, "SELECT next_seq FROM sessions"), queryInt(t, path, "SELECT revision FROM sessions"); n != 4 || next != 4 || rev2 != rev+1 {
		t.Fatalf("after the cut: %d rows, next_seq %d, revision %d; want 4, 4, %d", n, next, rev2, rev+1)
	}
	more := persistencetest.Batch(4, 3)
	appendOK(t, b, w.Handle, more)
	requireRead(t, "after the cut and an append", b, w.Handle, append(events[:4:4], more...))
}

func TestUndecodableLastRowIsATornTail(t *testing.T) {
	events := turnLog(6)
	path, b := storeLog(t, events)
	rawExec(t, path, `UPDATE events SET data = 'not json' WHERE seq = 5`)
	openTorn(t, b, sdk.AccessRead, 5, events)
	w := openTorn(t, b, sdk.AccessWrite, 5, events)
	requireArtifact(t, path, w.Torn,
		`{"undecodable":{"seq":5,"time":1700000000005,"type":"todo/write","data":"not json","surfaceOp":null,"sourceEventSeqs":null,"ignorable":null},"reason":"data is not lossless JSON: json: JSON_SYNTAX: …`)
}

// TestDamagedRowBeforeIntactRowsIsCORRUPT_LOG: a damaged row with intact
// rows after it and no turn/end anywhere. The later rows alone prove the
// damage was committed (no later turn/end is needed), so every open
// refuses with CORRUPT_LOG naming its seq and the first intact row, and
// nothing is cut.
func TestDamagedRowBeforeIntactRowsIsCORRUPT_LOG(t *testing.T) {
	for _, c := range []struct{ name, damage, reason string }{
		{"undecodable", `UPDATE events SET data = 'not json' WHERE seq = 3`, "does not decode"},
		{"missing", `DELETE FROM events WHERE seq = 3`, "events 3 … 3 are missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			events := turnLog(6)
			path, b := storeLog(t, events)
			rawExec(t, path, c.damage)
			rows := queryInt(t, path, "SELECT count(*) FROM events")
			for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
				_, err := b.Open(t.Context(), "s1", a)
				persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, "seq 3", "later event 4 is intact")
			}
			if n := queryInt(t, path, "SELECT count(*) FROM events"); n != rows {
				t.Fatalf("a refused open changed the rows: %d; want %d", n, rows)
			}
			if _, err := os.Stat(path + ".torn"); !os.IsNotExist(err) {
				t.Fatalf("a refused open saved torn rows: %v", err)
			}
		})
	}
}

func TestDamageBeforeIntactRowsIsCORRUPT_LOG(t *testing.T) {
	for _, c := range []struct {
		name, damage, reason string
	}{
		{"undecodable data", `UPDATE events SET data = '{"todos":[' WHERE seq = 2`, "data is not lossless JSON"},
		{"non-canonical data", `UPDATE events SET data = '{ "todos": [] }' WHERE seq = 2`, "data is not canonical JSON"},
		{"data of the wrong type", `UPDATE events SET data = 42 WHERE seq = 2`, "data holds integer"},
		{"bad surface_op", `UPDATE events SET surface_op = '{' WHERE seq = 2`, "surface_op is not lossless JSON"},
		{"time out of range", `UPDATE events SET time = -5 WHERE seq = 2`, "time -5"},
		{"missing row", `DELETE FROM events WHERE seq = 2`, "events 2 … 2 are missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			events := append(turnLog(4), turnEndAt(4), persistencetest.Batch(5, 1)[0])
			path, b := storeLog(t, events)
			rawExec(t, path, c.damage)
			rows := queryInt(t, path, "SELECT count(*) FROM events")
			for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite, sdk.AccessWrite} {
				_, err := b.Open(t.Context(), "s1", a)
				persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, "seq 2", c.reason, "later event 3 is intact")
			}
			if n := queryInt(t, path, "SELECT count(*) FROM events"); n != rows {
				t.Fatalf("a refused open changed the rows: %d; want %d", n, rows)
			}
			if _, err := os.Stat(path + ".torn"); !os.IsNotExist(err) {
				t.Fatalf("a refused open saved torn rows: %v", err)
			}
		})
	}
}

func TestMissingRowsBelowNextSeqAreATornTail(t *testing.T) {
	t.Run("the last two", func(t *testing.T) {
		events := turnLog(6)
		path, b := storeLog(t, events)
		rawExec(t, path, "DELETE FROM events WHERE seq IN (4, 5)")
		w := openTorn(t, b, sdk.AccessWrite, 4, events)
		requireArtifact(t, path, w.Torn, `{"missing":{"fromSeq":4,"toSeq":5}}`)
	})
	t.Run("the last, with a torn row past next_seq", func(t *testing.T) {
		events := turnLog(6)
		path, b := storeLog(t, events)
		rawExec(t, path, "DELETE FROM events WHERE seq = 4")
		rawExec(t, path, "UPDATE sessions SET next_seq = 5")
		w := openTorn(t, b, sdk.AccessWrite, 4, events)
		requireArtifact(t, path, w.Torn, `{"missing":{"fromSeq":4,"toSeq":4}}`, string(events[5]))
	})
}

func TestReadHandleOnATornLogSeesTheLogAfterTheCut(t *testing.T) {
	events := turnLog(6)
	path, b := storeLog(t, events)
	rawExec(t, path, `UPDATE events SET data = 'not json' WHERE seq = 5`)
	r := openTorn(t, b, sdk.AccessRead, 5, events)
	// Another process cuts the tail and appends.
	p := subprocess(t, path)
	w, err := p.Open(t.Context(), "s1", sdk.AccessWrite)
	must(t, err)
	if w.Torn.FromSeq != 5 || w.Torn.Artifact == "" {
		t.Fatalf("the other process's write open: torn %+v; want a cut from 5", w.Torn)
	}
	more := persistencetest.Batch(5, 4)
	appendOK(t, p, w.Handle, more)
	requireRead(t, "the read handle after the other process cut and appended", b, r.Handle, append(events[:5:5], more...))
}

func TestDamageFoundByAReadIsCORRUPT_LOG(t *testing.T) {
	events := turnLog(6)
	path, b := storeLog(t, events)
	r, err := b.Open(t.Context(), "s1", sdk.AccessRead)
	must(t, err)
	rawExec(t, path, `UPDATE events SET data = 'not json' WHERE seq = 3`)
	err = b.Read(t.Context(), r.Handle, 0, -1, func([][]byte) error { return nil })
	persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, "seq 3", "does not decode")
	rawExec(t, path, `DELETE FROM events WHERE seq = 3`)
	err = b.Read(t.Context(), r.Handle, 2, 2, func([][]byte) error { return nil })
	persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, "seq 3", "missing")
}

func TestIdentityMismatchInTheHeaderColumn(t *testing.T) {
	path, b := storeLog(t, turnLog(2))
	rawExec(t, path, `UPDATE sessions SET header = replace(header, '"id":"s1"', '"id":"other"')`)
	for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		_, err := b.Open(t.Context(), "s1", a)
		persistencetest.RequireCode(t, err, sdk.CodeIdentityMismatch, `"s1"`, `"other"`)
	}
}

func TestTornRowsAreSavedByteForByte(t *testing.T) {
	// A torn row past next_seq that does decode is saved as its envelope,
	// so an operator can append it again; its bytes are those appended.
	events := [][]byte{
		persistencetest.Envelope(0, "turn/start", `{"turn":1}`),
		[]byte(`{"seq":1,"time":5,"type":"user/message","data":{"t":"é\u0001"},"surfaceOp":{"op":"replace","startSeq":0,"endSeq":0},"sourceEventSeqs":[0],"ignorable":true}`),
	}
	path, b := storeLog(t, events)
	rawExec(t, path, "UPDATE sessions SET next_seq = 1")
	w := openTorn(t, b, sdk.AccessWrite, 1, events)
	got, err := os.ReadFile(w.Torn.Artifact)
	must(t, err)
	if !bytes.Equal(got, append(events[1], '\n')) {
		t.Fatalf("artifact %q; want %q", got, events[1])
	}
}

func TestCutThatCannotSaveTheTornRowsChangesNothing(t *testing.T) {
	events := turnLog(4)
	path, b := storeLog(t, events)
	rawExec(t, path, "UPDATE sessions SET next_seq = 3")
	must(t, os.WriteFile(path+".torn", nil, 0o600)) // in the way of the directory
	_, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, path+".torn", "not a directory")
	if n, next := queryInt(t, path, "SELECT count(*) FROM events"), queryInt(t, path, "SELECT next_seq FROM sessions"); n != 4 || next != 3 {
		t.Fatalf("after a failed cut: %d rows, next_seq %d; want 4 rows, next_seq 3", n, next)
	}
	must(t, os.Remove(path+".torn"))
	w := openTorn(t, b, sdk.AccessWrite, 3, events) // the failed open left no claim
	requireArtifact(t, path, w.Torn, string(events[3]))
}

// TestStatAndListOfRowsThatDoNotMatchNextSeq: Stat and List never give
// next_seq as the event count of a damaged session: rows past next_seq, a
// missing row at the end and a missing row with intact rows after it each
// make Stat an error and the List entry one with Err, while an intact
// session beside them lists as before.
func TestStatAndListOfRowsThatDoNotMatchNextSeq(t *testing.T) {
	for _, c := range []struct {
		name, damage string
		names        []any
	}{
		{"rows past next_seq", "UPDATE sessions SET next_seq = 4 WHERE id = 's1'", []any{"6 rows", "next_seq 4", "torn tail from seq 4"}},
		{"the last row missing", "DELETE FROM events WHERE session_id = 's1' AND seq = 5", []any{"5 rows", "next_seq 6", "torn tail from seq 5"}},
		{"a missing row before intact ones", "DELETE FROM events WHERE session_id = 's1' AND seq = 3", []any{"seq 3", "later event 4 is intact"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, b := storeLog(t, turnLog(6))
			o, err := b.Create(t.Context(), header("s2"))
			must(t, err)
			appendOK(t, b, o.Handle, persistencetest.Batch(0, 3))
			must(t, b.Close(t.Context(), o.Handle))
			rawExec(t, path, c.damage)
			_, err = b.Stat(t.Context(), "s1")
			persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, c.names...)
			if st, err := b.Stat(t.Context(), "s2"); err != nil || st.EventCount != 3 {
				t.Fatalf("Stat of the intact session = %+v, %v; want 3 events", st, err)
			}
			entries := map[string]sdk.ListEntry{}
			must(t, b.List(t.Context(), func(e sdk.ListEntry) error { entries[e.ID] = e; return nil }))
			persistencetest.RequireCode(t, entries["s1"].Err, sdk.CodeCorruptLog, c.names...)
			if e := entries["s2"]; e.Err != nil || e.Header.ID != "s2" {
				t.Fatalf("List entry of the intact session = %+v", e)
			}
		})
	}
}
