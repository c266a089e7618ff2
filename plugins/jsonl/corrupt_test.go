package jsonl

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

func turnEnd(seq int) []byte {
	return persistencetest.Envelope(seq, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`)
}

// tenEventLog is events 0–9, each its own batch (so each its own frame),
// with a turn/end at 8 when closed.
func tenEventLog(closed bool) [][][]byte {
	var batches [][][]byte
	for seq := range 10 {
		ev := persistencetest.Batch(seq, 1)
		if closed && seq == 8 {
			ev = [][]byte{turnEnd(8)}
		}
		batches = append(batches, ev)
	}
	return batches
}

// requireNoArtifact fails when dir holds a torn-*.bin.
func requireNoArtifact(t *testing.T, dir string) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "torn-*.bin"))
	if len(m) > 0 {
		t.Fatalf("artifacts %v after opens that must not cut anything", m)
	}
}

// TestPartialLastLineIsATornTail: header + events 0–9 + a partial line → a read
// returns 10 events; a write open saves the partial bytes and truncates
// them before appending.
func TestPartialLastLineIsATornTail(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionNone}
	b := newTestBackend(t, cfg)
	all := storeEvents(t, b, "s1", tenEventLog(false)...)
	path := sessionLog(cfg, "s1")
	partial := persistencetest.Batch(10, 1)[0][:17]
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(partial)
	f.Close()
	r, events := readEvents(t, b, "s1", sdk.AccessRead)
	if r.NextSeq != 10 || r.Torn.Bytes != int64(len(partial)) || r.Torn.FromSeq != 10 {
		t.Fatalf("Open(read) = %+v; want 10 events and %d torn bytes from seq 10", r, len(partial))
	}
	requireEqualEvents(t, "read", events, all)
	w, _ := readEvents(t, b, "s1", sdk.AccessWrite)
	if got := mustRead(t, w.Torn.Artifact); !bytes.Equal(got, partial) {
		t.Fatalf("artifact holds %q; want %q", got, partial)
	}
	if _, err := b.Append(t.Context(), w.Handle, 10, persistencetest.Batch(10, 1)); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedLineIsCorruptUnlessItIsTheTail: an unparsable line for
// event 4 (line 6) followed later by a valid turn/end is CORRUPT_LOG naming
// line 6, from every open, with nothing changed; with no later turn/end the
// same damage is a torn tail: events 0–3, and a write open cuts at line 6.
func TestDamagedLineIsCorruptUnlessItIsTheTail(t *testing.T) {
	damages := map[string]func([]byte) []byte{
		"unparsable": func(l []byte) []byte { l[0] = '#'; return l },
		"not canonical": func(l []byte) []byte {
			return append([]byte("{ "), l[1:]...)
		},
		"wrong seq": func(l []byte) []byte { return bytes.Replace(l, []byte(`"seq":4`), []byte(`"seq":5`), 1) },
		"unknown member": func(l []byte) []byte {
			return append(l[:len(l)-1:len(l)-1], []byte(`,"extra":1}`)...)
		},
	}
	for name, damage := range damages {
		for _, closed := range []bool{true, false} {
			t.Run(name+"/turn-end-later="+strconv.FormatBool(closed), func(t *testing.T) {
				cfg := Config{Root: t.TempDir(), Compression: CompressionNone}
				b := newTestBackend(t, cfg)
				all := storeEvents(t, b, "s1", tenEventLog(closed)...)
				path := sessionLog(cfg, "s1")
				data := mustRead(t, path)
				us := units(t, data, false)
				line6 := us[5]
				bad := damage(bytes.Clone(data[line6[0] : line6[1]-1]))
				damaged := append(append(append([]byte{}, data[:line6[0]]...), bad...), data[line6[1]-1:]...)
				if err := os.WriteFile(path, damaged, 0o600); err != nil {
					t.Fatal(err)
				}
				if closed {
					for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
						_, err := b.Open(t.Context(), "s1", a)
						persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, "line 6", path, "line 10")
						if errors.Is(err, sdk.CodeSessionNotFound) {
							t.Fatal("corruption reported as absence")
						}
					}
					if got := mustRead(t, path); !bytes.Equal(got, damaged) {
						t.Fatal("a refused open changed the file")
					}
					requireNoArtifact(t, filepath.Dir(path))
					// The header still reads: Stat and List work.
					if _, err := b.Stat(t.Context(), "s1"); err != nil {
						t.Fatalf("Stat of a corrupt log: %v", err)
					}
					return
				}
				r, events := readEvents(t, b, "s1", sdk.AccessRead)
				requireEqualEvents(t, "read", events, all[:4])
				if r.Torn.FromSeq != 4 || r.Torn.Bytes != int64(len(damaged)-line6[0]) {
					t.Fatalf("Open(read) torn %+v; want from seq 4, %d bytes", r.Torn, len(damaged)-line6[0])
				}
				w, _ := readEvents(t, b, "s1", sdk.AccessWrite)
				if got := mustRead(t, w.Torn.Artifact); !bytes.Equal(got, damaged[line6[0]:]) {
					t.Fatal("the artifact does not hold the cut bytes from line 6 on")
				}
				if got := mustRead(t, path); !bytes.Equal(got, data[:line6[0]]) {
					t.Fatal("the write open did not cut the log at line 6")
				}
			})
		}
	}
}

// TestZstdDamage covers docs/storage.md for frames: a final frame cut short
// loses only that batch; a damaged earlier frame followed by intact frames
// is CORRUPT_LOG naming the damaged frame's byte offset and the first
// intact frame's, also when the damage breaks the frame's length fields
// (the scanner then finds the later frame by resynchronizing on its
// magic); the same damage in the last frame is a torn tail.
func TestZstdDamage(t *testing.T) {
	type damage struct {
		name string
		do   func(frame []byte) // damages a frame in place
	}
	damages := []damage{
		{"checksum", func(f []byte) { f[len(f)-1] ^= 0x55 }},
		{"content", func(f []byte) { f[len(f)-6] ^= 0x01 }},
		{"magic", func(f []byte) { f[0] = 0 }},
		{"block size grows past the file", func(f []byte) {
			// The first block header follows the frame header; raise its
			// size to 128 KiB − 1, so that the frame seems to run past
			// every later frame.
			h := headerSizeOf(f)
			f[h], f[h+1], f[h+2] = f[h]|0xF8, 0xFF, 0x0F
		}},
		{"reserved block type", func(f []byte) { h := headerSizeOf(f); f[h] |= 0x06 }},
	}
	for _, d := range damages {
		for _, last := range []bool{false, true} {
			t.Run(d.name+"/last-frame="+strconv.FormatBool(last), func(t *testing.T) {
				cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
				b := newTestBackend(t, cfg)
				all := storeEvents(t, b, "s1", tenEventLog(true)...)
				path := sessionLog(cfg, "s1")
				data := mustRead(t, path)
				us := units(t, data, true)
				at := 4 // the frame of event at
				if last {
					at = 9
				}
				fr := us[1+at]
				damaged := bytes.Clone(data)
				d.do(damaged[fr[0]:fr[1]])
				if err := os.WriteFile(path, damaged, 0o600); err != nil {
					t.Fatal(err)
				}
				if !last {
					requireRefused(t, b, path, damaged, "byte offset "+strconv.Itoa(fr[0]), "byte offset "+strconv.Itoa(us[1+at+1][0]))
					return
				}
				r, events := readEvents(t, b, "s1", sdk.AccessRead)
				requireEqualEvents(t, "read", events, all[:at])
				if r.Torn.FromSeq != sdk.Seq(at) || r.Torn.Bytes != int64(len(data)-fr[0]) {
					t.Fatalf("Open(read) torn %+v; want from seq %d, %d bytes", r.Torn, at, len(data)-fr[0])
				}
				w, _ := readEvents(t, b, "s1", sdk.AccessWrite)
				if got := mustRead(t, w.Torn.Artifact); !bytes.Equal(got, damaged[fr[0]:]) {
					t.Fatal("the artifact does not hold the cut bytes")
				}
				if _, err := b.Append(t.Context(), w.Handle, sdk.Seq(at), persistencetest.Batch(at, 2)); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	t.Run("final-frame-cut-short-loses-only-that-batch", func(t *testing.T) {
		cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
		b := newTestBackend(t, cfg)
		all := storeEvents(t, b, "s1", persistencetest.Batch(0, 4), persistencetest.Batch(4, 5))
		path := sessionLog(cfg, "s1")
		data := mustRead(t, path)
		if err := os.WriteFile(path, data[:len(data)-10], 0o600); err != nil {
			t.Fatal(err)
		}
		r, events := readEvents(t, b, "s1", sdk.AccessRead)
		if r.NextSeq != 4 || r.Torn.FromSeq != 4 {
			t.Fatalf("Open(read) = %+v; want the first batch only", r)
		}
		requireEqualEvents(t, "read", events, all[:4])
	})
}

// headerSizeOf is the frame header size of frame f.
// (RFC 8878 §3.1.1.1: magic, descriptor, window, dictionary id, FCS).
func headerSizeOf(f []byte) int {
	fhd := f[4]
	n := 5
	if fhd&(1<<5) == 0 {
		n++
	}
	n += [4]int{0, 1, 2, 4}[fhd&3]
	fcs := [4]int{0, 2, 4, 8}[fhd>>6]
	if fhd>>6 == 0 && fhd&(1<<5) != 0 {
		fcs = 1
	}
	return n + fcs
}

// TestFormatVersionIsCheckedBeforeEvents: a header with the next version
// is FORMAT_TOO_NEW from Open, Stat and List even when every event line is
// garbage (the header is decoded first), naming the file; restoring the
// current version then shows the damage.
func TestFormatVersionIsCheckedBeforeEvents(t *testing.T) {
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		t.Run(comp, func(t *testing.T) {
			cfg := Config{Root: t.TempDir(), Compression: comp}
			b := newTestBackend(t, cfg)
			storeEvents(t, b, "s1", persistencetest.Batch(0, 3), [][]byte{turnEnd(3)})
			path := sessionLog(cfg, "s1")
			next := sdk.FormatVersion + 1
			setFormatVersion(t, path, strconv.Itoa(next))
			data := mustRead(t, path)
			hdrEnd := bytes.IndexByte(data, '\n') + 1
			if comp == CompressionZstd {
				hdrEnd, _, _ = frameSpan(data)
			}
			garbage := []byte("garbage\n\x00\xff{\"seq\":\n\x28\xb5\x2f\xfd junk\n")
			if err := os.WriteFile(path, append(append(data[:hdrEnd:hdrEnd], garbage...), data[hdrEnd:]...), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
				_, err := b.Open(t.Context(), "s1", a)
				persistencetest.RequireCode(t, err, sdk.CodeFormatTooNew, "s1", next, path, "upgrade logbook")
			}
			_, err := b.Stat(t.Context(), "s1")
			persistencetest.RequireCode(t, err, sdk.CodeFormatTooNew, "s1", next)
			var entry sdk.ListEntry
			if err := b.List(t.Context(), func(e sdk.ListEntry) error { entry = e; return nil }); err != nil {
				t.Fatal(err)
			}
			persistencetest.RequireCode(t, entry.Err, sdk.CodeFormatTooNew, "s1", next)
			setFormatVersion(t, path, strconv.Itoa(sdk.FormatVersion))
			_, err = b.Open(t.Context(), "s1", sdk.AccessRead)
			persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, path)
		})
	}
}

// TestHighestGenerationIsTheLog: with events.v<current> and the next
// generation present, the next is the log (its header naming the next
// version is FORMAT_TOO_NEW naming it) and the current one is left
// byte-identical; a generation whose header names another version is
// CORRUPT_LOG naming both.
func TestHighestGenerationIsTheLog(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionNone}
	b := newTestBackend(t, cfg)
	storeEvents(t, b, "s1", persistencetest.Batch(0, 2))
	cur := sessionLog(cfg, "s1")
	before := mustRead(t, cur)
	next := filepath.Join(filepath.Dir(cur), logName(sdk.FormatVersion+1, false))
	if err := os.WriteFile(next, bytes.Replace(before, versionMember(sdk.FormatVersion), versionMember(sdk.FormatVersion+1), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		_, err := b.Open(t.Context(), "s1", a)
		persistencetest.RequireCode(t, err, sdk.CodeFormatTooNew, next)
	}
	if !bytes.Equal(mustRead(t, cur), before) {
		t.Fatal("the current generation changed")
	}
	if err := os.WriteFile(next, before, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := b.Open(t.Context(), "s1", sdk.AccessRead)
	persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, next, "format v"+strconv.Itoa(sdk.FormatVersion), "generation v"+strconv.Itoa(sdk.FormatVersion+1))
	// Names that only look like generations are ignored.
	for _, n := range []string{"events.v01.jsonl", "events.v0.jsonl", "events.v" + strconv.Itoa(sdk.FormatVersion) + ".jsonl.zst.abc.tmp", "events.v9.json"} {
		if _, _, ok := parseLogName(n); ok {
			t.Errorf("parseLogName(%q) accepted it", n)
		}
	}
}

// TestMissingHeaderIsNamed: a log whose header line was deleted (its first
// line is an event), is empty, or whose file is empty is CORRUPT_LOG from
// Open, Stat and List saying which, naming the file, never an empty quote.
func TestMissingHeaderIsNamed(t *testing.T) {
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		t.Run(comp, func(t *testing.T) {
			cfg := Config{Root: t.TempDir(), Compression: comp}
			b := newTestBackend(t, cfg)
			storeEvents(t, b, "s1", persistencetest.Batch(0, 2), persistencetest.Batch(2, 1))
			path := sessionLog(cfg, "s1")
			data := mustRead(t, path)
			hdrEnd := bytes.IndexByte(data, '\n') + 1
			var emptyHeader []byte
			if comp == CompressionZstd {
				hdrEnd, _, _ = frameSpan(data)
				enc, err := b.encoder()
				if err != nil {
					t.Fatal(err)
				}
				emptyHeader = enc.EncodeAll([]byte("\n"), nil)
			} else {
				emptyHeader = []byte("\n")
			}
			for _, c := range []struct {
				name    string
				content []byte
				want    []any
			}{
				{"header deleted", data[hdrEnd:], []any{"header is missing", `"seq":0`}},
				{"header empty", append(emptyHeader, data[hdrEnd:]...), []any{"header line is empty"}},
				{"file empty", nil, []any{"empty", "0 bytes", "header"}},
			} {
				t.Run(c.name, func(t *testing.T) {
					if err := os.WriteFile(path, c.content, 0o600); err != nil {
						t.Fatal(err)
					}
					want := append([]any{path}, c.want...)
					for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
						_, err := b.Open(t.Context(), "s1", a)
						persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, want...)
					}
					_, err := b.Stat(t.Context(), "s1")
					persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, want...)
					var entry sdk.ListEntry
					if err := b.List(t.Context(), func(e sdk.ListEntry) error { entry = e; return nil }); err != nil {
						t.Fatal(err)
					}
					persistencetest.RequireCode(t, entry.Err, sdk.CodeCorruptLog, want...)
					if strings.Contains(entry.Err.Error(), "got  ") || strings.HasSuffix(entry.Err.Error(), "got ") {
						t.Fatalf("the message quotes nothing: %v", entry.Err)
					}
					if got := mustRead(t, path); !bytes.Equal(got, c.content) {
						t.Fatal("an open changed the log")
					}
				})
			}
		})
	}
}
