package sqlite_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// todo is a todo/write envelope whose data member is exactly size bytes,
// its content fill repeated and padded with 'x'.
func todo(seq, size int, fill string) []byte {
	const frame = `{"todos":[{"content":"","status":"pending"}]}`
	n := size - len(frame)
	content := strings.Repeat(fill, n/len(fill))
	content += strings.Repeat("x", n-len(content))
	return persistencetest.Envelope(seq, "todo/write", `{"todos":[{"content":"`+content+`","status":"pending"}]}`)
}

// noise is n bytes of random text zstd cannot shrink: a mix of 1-, 2- and
// 3-byte characters spreads the bytes over most values, so zstd keeps raw
// blocks and its frame comes out larger than the text.
func noise(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < n {
		switch x := r.Float64(); {
		case x < 0.4:
			if c := byte(0x20 + r.IntN(95)); c != '"' && c != '\\' {
				b.WriteByte(c)
			}
		case x < 0.8:
			b.WriteRune(rune(0x80 + r.IntN(0x800-0x80)))
		default:
			b.WriteRune(rune(0x1000 + r.IntN(0xD000-0x1000)))
		}
	}
	s, cut := b.String(), n
	for !utf8.ValidString(s[:cut]) {
		cut--
	}
	return s[:cut] + strings.Repeat("x", n-cut)
}

func storedDataType(t testing.TB, path string, seq int) string {
	t.Helper()
	return queryString(t, path, "SELECT typeof(data) FROM events WHERE seq = ?", seq)
}

func TestLargeDataIsStoredAsAZstdFrameWhenSmaller(t *testing.T) {
	path := dbPath(t)
	b := openBackend(t, sqlite.DefaultConfig(path))
	min := sqlite.DefaultCompressMinBytes
	events := [][]byte{
		todo(0, min-1, "a"),     // below the threshold
		todo(1, min, "a"),       // at the threshold, compressible
		todo(2, 100_000, "ab€"), // large, compressible, not ASCII
		todo(3, 60, "x"),
	}
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	appendOK(t, b, o.Handle, events)
	for seq, want := range []string{"text", "blob", "blob", "text"} {
		if got := storedDataType(t, path, seq); got != want {
			t.Errorf("event %d (%d bytes of data) is stored as %s; want %s", seq, len(events[seq]), got, want)
		}
	}
	// The BLOB is one zstd frame with a content checksum.
	var frame []byte
	must(t, rawDB(t, path).QueryRow("SELECT data FROM events WHERE seq = 2").Scan(&frame))
	if binary.LittleEndian.Uint32(frame) != 0xFD2FB528 || frame[4]&0x04 == 0 || len(frame) >= 100_000 {
		t.Fatalf("the stored data is not a smaller zstd frame with a checksum: magic %x, descriptor %08b, %d bytes", frame[:4], frame[4], len(frame))
	}
	// Byte-equal through the writer, a new reader, and another process.
	requireRead(t, "write handle", b, o.Handle, events)
	must(t, b.Close(t.Context(), o.Handle))
	r, err := b.Open(t.Context(), "s1", sdk.AccessRead)
	must(t, err)
	requireRead(t, "read handle", b, r.Handle, events)
	p := subprocess(t, path)
	r, err = p.Open(t.Context(), "s1", sdk.AccessRead)
	must(t, err)
	requireRead(t, "another process", p, r.Handle, events)
}

func TestLargeDataThatDoesNotShrinkStaysText(t *testing.T) {
	path := dbPath(t)
	b := openBackend(t, sqlite.DefaultConfig(path))
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	events := [][]byte{persistencetest.Envelope(0, "todo/write", `{"todos":[{"content":"`+noise(8192)+`","status":"pending"}]}`)}
	appendOK(t, b, o.Handle, events)
	if got := storedDataType(t, path, 0); got != "text" {
		t.Fatalf("incompressible data of 8192 bytes is stored as %s; want text", got)
	}
	requireRead(t, "read back", b, o.Handle, events)
}

func TestCompressionOffStoresText(t *testing.T) {
	path := dbPath(t)
	cfg := sqlite.DefaultConfig(path)
	cfg.CompressData = false
	b := openBackend(t, cfg)
	d, err := b.Describe(t.Context())
	must(t, err)
	if d.Compression != "" {
		t.Fatalf("Describe with compression off reports %q", d.Compression)
	}
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	events := [][]byte{todo(0, 50_000, "a")}
	appendOK(t, b, o.Handle, events)
	if got := storedDataType(t, path, 0); got != "text" {
		t.Fatalf("data stored as %s with compress_data false; want text", got)
	}
	requireRead(t, "read back", b, o.Handle, events)
}

func TestDamagedFrameIsCaughtByItsChecksum(t *testing.T) {
	for _, c := range []struct {
		name  string
		later bool // a turn/end follows the damaged event
	}{{"before a later turn/end: CORRUPT_LOG", true}, {"at the tail: torn", false}} {
		t.Run(c.name, func(t *testing.T) {
			path := dbPath(t)
			b := openBackend(t, sqlite.DefaultConfig(path))
			o, err := b.Create(t.Context(), header("s1"))
			must(t, err)
			events := [][]byte{persistencetest.Envelope(0, "turn/start", `{"turn":1}`), todo(1, 20_000, "abc")}
			if c.later {
				events = append(events, persistencetest.Envelope(2, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`))
			}
			appendOK(t, b, o.Handle, events)
			must(t, b.Close(t.Context(), o.Handle))
			// Flip one bit in the middle of the compressed content.
			var frame []byte
			must(t, rawDB(t, path).QueryRow("SELECT data FROM events WHERE seq = 1").Scan(&frame))
			frame[len(frame)/2] ^= 1
			rawExec(t, path, "UPDATE events SET data = ? WHERE seq = 1", frame)
			o2, err := b.Open(t.Context(), "s1", sdk.AccessRead)
			if c.later {
				persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, "seq 1", "compressed data")
				return
			}
			must(t, err)
			if o2.NextSeq != 1 || o2.Torn.FromSeq != 1 || o2.Torn.Bytes == 0 {
				t.Fatalf("Open(read) of a log whose last frame is damaged: next seq %d, torn %+v; want 1, from seq 1", o2.NextSeq, o2.Torn)
			}
			requireRead(t, "the prefix before the damage", b, o2.Handle, events[:1])
		})
	}
}

// TestEitherThresholdReadsBackByteIdentical: one session written in turn
// by a Backend with the old fixed threshold (4096), one with the default,
// and one with the smallest (64) holds TEXT and BLOB rows from every
// writer; every Backend, and another process, reads all of them back
// byte-identical. The database has the 4 KiB pages of the earlier builds,
// and keeps them.
func TestEitherThresholdReadsBackByteIdentical(t *testing.T) {
	path := newDatabase(t)
	rawExec(t, path, "PRAGMA journal_mode = DELETE; PRAGMA page_size = 4096; VACUUM")
	sizes := []int{63, 100, 200, 255, 256, 300, 1500, 4095, 4096, 20_000}
	var events [][]byte
	var want []string // the storage class of each event
	for _, w := range []struct{ min int }{{4096}, {sqlite.DefaultCompressMinBytes}, {sqlite.MinCompressMinBytes}} {
		cfg := sqlite.DefaultConfig(path)
		cfg.CompressMinBytes = w.min
		b, err := sqlite.Open(t.Context(), cfg)
		must(t, err)
		var o sdk.Opened
		if len(events) == 0 {
			o, err = b.Create(t.Context(), header("s1"))
		} else {
			o, err = b.Open(t.Context(), "s1", sdk.AccessWrite)
		}
		must(t, err)
		from := len(events)
		for _, n := range sizes {
			events = append(events, todo(len(events), n, "a"))
			if n >= w.min {
				want = append(want, "blob")
			} else {
				want = append(want, "text")
			}
		}
		appendOK(t, b, o.Handle, events[from:])
		requireRead(t, fmt.Sprintf("the writer with threshold %d", w.min), b, o.Handle, events)
		must(t, b.Close(t.Context(), o.Handle))
		must(t, b.Shutdown())
	}
	for seq, w := range want {
		if got := storedDataType(t, path, seq); got != w {
			t.Errorf("event %d (%d bytes of data) is stored as %s; want %s", seq, sizes[seq%len(sizes)], got, w)
		}
	}
	for _, min := range []int{4096, sqlite.DefaultCompressMinBytes} {
		cfg := sqlite.DefaultConfig(path)
		cfg.CompressMinBytes = min
		b := openBackend(t, cfg)
		r, err := b.Open(t.Context(), "s1", sdk.AccessRead)
		must(t, err)
		requireRead(t, fmt.Sprintf("a reader with threshold %d", min), b, r.Handle, events)
	}
	p := subprocess(t, path)
	r, err := p.Open(t.Context(), "s1", sdk.AccessRead)
	must(t, err)
	requireRead(t, "another process", p, r.Handle, events)
	if got := queryString(t, path, "PRAGMA page_size"); got != "4096" {
		t.Errorf("the database of 4 KiB pages now has pages of %s bytes", got)
	}
}

// TestANewDatabaseHas16KiBPages: the backend creates a database with pages
// of 16 KiB (rows of compressed data fill them better than 4 KiB pages).
func TestANewDatabaseHas16KiBPages(t *testing.T) {
	path := newDatabase(t)
	if got := queryString(t, path, "PRAGMA page_size"); got != "16384" {
		t.Fatalf("a new database has pages of %s bytes; want 16384", got)
	}
}

func requireRead(t testing.TB, what string, p sdk.Persistence, handle string, want [][]byte) {
	t.Helper()
	requireEqual(t, what, persistencetest.ReadAll(t, p, handle), want)
}

// requireEqual checks that got holds exactly the events want.
func requireEqual(t testing.TB, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: read %d events; want %d", what, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: event %d differs (%d bytes; want %d)", what, i, len(got[i]), len(want[i]))
		}
	}
}

// TestClosingAWriterTruncatesTheWAL: once the write handle is closed, the
// appended rows live in the database file and the WAL is empty, even while
// the database stays open (a process that then exits leaves no WAL bytes
// behind).
func TestClosingAWriterTruncatesTheWAL(t *testing.T) {
	path := dbPath(t)
	b := openBackend(t, sqlite.DefaultConfig(path))
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	var events [][]byte
	for i := range 200 {
		events = append(events, todo(i, 3000, "ab"))
	}
	appendOK(t, b, o.Handle, events)
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the append left no WAL to truncate (%v)", err)
	}
	must(t, b.Close(t.Context(), o.Handle))
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		t.Fatalf("after the writer closed, the WAL holds %d bytes; want 0", fi.Size())
	}
	r, err := b.Open(t.Context(), "s1", sdk.AccessRead)
	must(t, err)
	requireRead(t, "after the checkpoint", b, r.Handle, events)
}
