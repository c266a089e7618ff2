package jsonl

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// readDamaged calls ReadDamaged and collects what it passed to fn.
func readDamaged(t *testing.T, b *Backend, id string) (sdk.Damaged, [][]byte, error) {
	t.Helper()
	var events [][]byte
	d, err := b.ReadDamaged(t.Context(), id, func(chunk [][]byte) error {
		events = append(events, chunk...)
		return nil
	})
	return d, events, err
}

// requireDamage checks a ReadDamaged reply of a corrupt log whose valid
// prefix is want and whose damage starts at byte offset off of damaged.
func requireDamage(t *testing.T, got sdk.Damaged, events, want [][]byte, damaged []byte, off int, intact int64, reason string) {
	t.Helper()
	requireEqualEvents(t, "valid prefix", events, want)
	dm := got.Damage
	switch {
	case !got.Corrupt || got.ValidEvents != int64(len(want)) || got.Header.ID != "s1":
		t.Fatalf("ReadDamaged = corrupt %t, %d valid events, header %q; want corrupt, %d, s1", got.Corrupt, got.ValidEvents, got.Header.ID, len(want))
	case dm.Offset != int64(off) || dm.Bytes != int64(len(damaged)-off) || !bytes.Equal(dm.Tail, damaged[off:]):
		t.Fatalf("damage at %d, %d bytes, tail of %d bytes; want at %d, %d bytes, the file's bytes from there", dm.Offset, dm.Bytes, len(dm.Tail), off, len(damaged)-off)
	case dm.IntactEventsExcluded != intact:
		t.Fatalf("%d intact events excluded; want %d", dm.IntactEventsExcluded, intact)
	case !strings.Contains(dm.Reason, reason):
		t.Fatalf("reason %q does not name %q", dm.Reason, reason)
	}
}

// requireUnchanged checks that path still holds data and no artifact was
// kept beside it.
func requireUnchanged(t *testing.T, path string, data []byte) {
	t.Helper()
	if got := mustRead(t, path); !bytes.Equal(got, data) {
		t.Fatal("ReadDamaged changed the file")
	}
	requireNoArtifact(t, filepath.Dir(path))
}

// TestReadDamagedZstd: a damaged frame followed by intact ones gives the
// frames before it, the raw bytes from it on, and the count of events in
// the intact frames after it; the file stays as it was.
func TestReadDamagedZstd(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	all := storeEvents(t, b, "s1", batchesOf(40, 5)...)
	path := sessionLog(cfg, "s1")
	data := mustRead(t, path)
	us := units(t, data, true)
	f1 := us[2] // events 5–9
	damaged := bytes.Clone(data)
	damaged[(f1[0]+f1[1])/2] ^= 0x01
	damageLog(t, path, damaged)
	got, events, err := readDamaged(t, b, "s1")
	if err != nil {
		t.Fatal(err)
	}
	requireDamage(t, got, events, all[:5], damaged, f1[0], 30, "batch frame")
	requireUnchanged(t, path, damaged)
}

// TestReadDamagedZstdFirstFrame: damage in the first frame after the
// header leaves no valid event; ReadDamaged says so (it panicked on the
// empty prefix, which salvage reported as PLUGIN_UNAVAILABLE).
func TestReadDamagedZstdFirstFrame(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	storeEvents(t, b, "s1", batchesOf(40, 5)...)
	path := sessionLog(cfg, "s1")
	data := mustRead(t, path)
	f0 := units(t, data, true)[1] // events 0–4
	damaged := bytes.Clone(data)
	damaged[(f0[0]+f0[1])/2] ^= 0x01
	damageLog(t, path, damaged)
	got, events, err := readDamaged(t, b, "s1")
	if err != nil {
		t.Fatal(err)
	}
	requireDamage(t, got, events, nil, damaged, f0[0], 35, "batch frame")
	requireUnchanged(t, path, damaged)
}

// TestReadDamagedPlain: a damaged line with a valid turn/end after it
// (events 0–9, the turn/end at 8, line 6 = event 4 unparsable) gives
// events 0–3 and counts the 5 intact lines after it; CRLF line endings
// after the header give no events and name CRLF.
func TestReadDamagedPlain(t *testing.T) {
	t.Run("damaged-line", func(t *testing.T) {
		cfg := Config{Root: t.TempDir(), Compression: CompressionNone}
		b := newTestBackend(t, cfg)
		all := storeEvents(t, b, "s1", tenEventLog(true)...)
		path := sessionLog(cfg, "s1")
		data := mustRead(t, path)
		line6 := units(t, data, false)[5]
		damaged := bytes.Clone(data)
		damaged[line6[0]] = '#'
		damageLog(t, path, damaged)
		got, events, err := readDamaged(t, b, "s1")
		if err != nil {
			t.Fatal(err)
		}
		requireDamage(t, got, events, all[:4], damaged, line6[0], 5, "JSON")
		requireUnchanged(t, path, damaged)
	})
	t.Run("crlf", func(t *testing.T) {
		cfg := Config{Root: t.TempDir(), Compression: CompressionNone}
		b := newTestBackend(t, cfg)
		storeEvents(t, b, "s1", tenEventLog(true)...)
		path := sessionLog(cfg, "s1")
		data := mustRead(t, path)
		hdr := bytes.IndexByte(data, '\n') + 1
		crlf := append(data[:hdr:hdr], bytes.ReplaceAll(data[hdr:], []byte("\n"), []byte("\r\n"))...)
		damageLog(t, path, crlf)
		got, events, err := readDamaged(t, b, "s1")
		if err != nil {
			t.Fatal(err)
		}
		requireDamage(t, got, events, nil, crlf, hdr, 0, "CRLF")
		requireUnchanged(t, path, crlf)
	})
}

// TestReadDamagedClean: a log that loads, also with a torn tail, is not
// corrupt: every committed event, zero Damage, nothing cut. ReadDamaged
// takes no claim, so it works beside a writer.
func TestReadDamagedClean(t *testing.T) {
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		t.Run(comp, func(t *testing.T) {
			cfg := Config{Root: t.TempDir(), Compression: comp}
			b := newTestBackend(t, cfg)
			all := storeEvents(t, b, "s1", batchesOf(12, 4)...)
			path := sessionLog(cfg, "s1")
			data := mustRead(t, path)
			torn := append(bytes.Clone(data), data[len(data)-7:len(data)-1]...)
			damageLog(t, path, torn)
			w, err := b.Open(t.Context(), "s1", sdk.AccessRead)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close(t.Context(), w.Handle)
			if w.Torn.Bytes == 0 {
				t.Fatal("test bug: the log has no torn tail")
			}
			got, events, err := readDamaged(t, b, "s1")
			if err != nil {
				t.Fatal(err)
			}
			requireEqualEvents(t, "events", events, all)
			if got.Corrupt || got.ValidEvents != 12 || got.Damage.Offset != 0 || got.Damage.Bytes != 0 || got.Damage.Tail != nil || got.Damage.Reason != "" {
				t.Fatalf("ReadDamaged of a clean log = %+v; want 12 valid events, not corrupt, zero damage", got)
			}
			requireUnchanged(t, path, torn)
		})
	}
}

// TestReadDamagedRefuses: a bad header unit is CORRUPT_LOG, a missing
// session SESSION_NOT_FOUND, and an error from fn ends the read as is.
func TestReadDamagedRefuses(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	storeEvents(t, b, "s1", batchesOf(3, 1)...)
	storeEvents(t, b, "s2", batchesOf(3, 1)...)
	path := sessionLog(cfg, "s1")
	data := mustRead(t, path)
	hdr := units(t, data, true)[0]
	data[hdr[1]-1] ^= 0x55 // the header frame's checksum
	damageLog(t, path, data)
	_, _, err := readDamaged(t, b, "s1")
	persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, "byte offset 0")
	_, _, err = readDamaged(t, b, "nope")
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound)
	stop := sdk.Errorf(sdk.CodeUsage, "test", "stop")
	_, err = b.ReadDamaged(t.Context(), "s2", func([][]byte) error { return stop })
	if err != stop {
		t.Fatalf("ReadDamaged returned %v; want fn's error", err)
	}
}
