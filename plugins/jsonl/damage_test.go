package jsonl

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// batchesOf is n events in batches of size each (so, for zstd, one frame
// per batch), with no turn/end anywhere.
func batchesOf(n, size int) [][][]byte {
	var out [][][]byte
	for seq := 0; seq < n; seq += size {
		out = append(out, persistencetest.Batch(seq, min(size, n-seq)))
	}
	return out
}

// damageLog overwrites path with data and returns data.
func damageLog(t *testing.T, path string, data []byte) []byte {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return data
}

// requireRefused checks that read and write opens of s1 fail with
// CORRUPT_LOG naming every want, and that they left the file as it was
// and kept no artifact.
func requireRefused(t *testing.T, b *Backend, path string, damaged []byte, want ...any) {
	t.Helper()
	for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		_, err := b.Open(t.Context(), "s1", a)
		persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, want...)
	}
	if got := mustRead(t, path); !bytes.Equal(got, damaged) {
		t.Fatal("a refused open changed the file")
	}
	requireNoArtifact(t, filepath.Dir(path))
}

// TestZstdDamageBeforeIntactFrames: a flipped byte in an early frame of a
// session with no turn/end after it (40 events in batches of 5, the byte
// flipped in the frame of events 5–9). The later frames still pass their
// checksums, so the damage is committed corruption, named with its offset
// and the offset of the first intact frame after it, and nothing is cut.
func TestZstdDamageBeforeIntactFrames(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	storeEvents(t, b, "s1", batchesOf(40, 5)...)
	path := sessionLog(cfg, "s1")
	data := mustRead(t, path)
	us := units(t, data, true)
	f1 := us[2] // header frame, then the frame of events 0–4, then 5–9
	damaged := bytes.Clone(data)
	damaged[(f1[0]+f1[1])/2] ^= 0x01
	damageLog(t, path, damaged)
	requireRefused(t, b, path, damaged, "byte offset "+strconv.Itoa(f1[0]), "byte offset "+strconv.Itoa(us[3][0]), "intact")
}

// TestZstdDamagedLastFrameIsTorn: the same flipped byte in the last frame
// has no intact frame after it, so it is a torn tail: a read sees the
// batches before it and a write open cuts it.
func TestZstdDamagedLastFrameIsTorn(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	all := storeEvents(t, b, "s1", batchesOf(40, 5)...)
	path := sessionLog(cfg, "s1")
	data := mustRead(t, path)
	us := units(t, data, true)
	last := us[len(us)-1]
	damaged := bytes.Clone(data)
	damaged[(last[0]+last[1])/2] ^= 0x01
	damageLog(t, path, damaged)
	r, events := readEvents(t, b, "s1", sdk.AccessRead)
	requireEqualEvents(t, "read", events, all[:35])
	if r.Torn.FromSeq != 35 || r.Torn.Bytes != int64(last[1]-last[0]) {
		t.Fatalf("Open(read) torn %+v; want %d bytes from seq 35", r.Torn, last[1]-last[0])
	}
}

// TestCRLFIsCorrupt: a compression "none" log converted to CRLF line
// endings is CORRUPT_LOG naming CRLF, never a torn tail, whether the
// header line was converted too or only the event lines.
func TestCRLFIsCorrupt(t *testing.T) {
	for _, headerToo := range []bool{true, false} {
		t.Run("header-too="+strconv.FormatBool(headerToo), func(t *testing.T) {
			cfg := Config{Root: t.TempDir(), Compression: CompressionNone}
			b := newTestBackend(t, cfg)
			storeEvents(t, b, "s1", tenEventLog(true)...)
			path := sessionLog(cfg, "s1")
			data := mustRead(t, path)
			crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
			want := []any{"CRLF", "line 1"}
			if !headerToo {
				hdr := bytes.IndexByte(data, '\n') + 1
				crlf = append(data[:hdr:hdr], bytes.ReplaceAll(data[hdr:], []byte("\n"), []byte("\r\n"))...)
				want = []any{"CRLF", "line 2"}
			}
			damageLog(t, path, crlf)
			requireRefused(t, b, path, crlf, want...)
		})
	}
}
