package jsonl

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// The fuzz targets feed whole log files to the scanner of docs/storage.md. It
// must never panic, and must classify consistently: either an error a
// stored log may legitimately give (CORRUPT_LOG, or a format-gate code), or
// a committed prefix that rescans clean, is deterministic, indexes its
// events correctly, and accepts the next batch after it (what a write open
// does after cutting the torn tail).
//
// The seed corpora in testdata/fuzz/<Name>/ hold clean, torn and corrupted
// logs; TestWriteFuzzSeeds regenerates them.

func FuzzLineScanner(f *testing.F) {
	for _, s := range lineSeeds() {
		f.Add(s.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkScan(t, data, false) })
}

func FuzzFrameScanner(f *testing.F) {
	for _, s := range frameSeeds(f) {
		f.Add(s.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkScan(t, data, true) })
}

var fuzzCodec = struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}{
	enc: func() *zstd.Encoder { e, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true)); return e }(),
	dec: func() *zstd.Decoder { d, _ := newDecoder(); return d }(),
}

// fuzzMaxContent bounds what one fuzzed frame may decode to.
const fuzzMaxContent = 1 << 20

func checkScan(t *testing.T, data []byte, zst bool) {
	c := checker{dec: fuzzCodec.dec, maxContent: fuzzMaxContent}
	checkDamage(t, &c, data, zst)
	_, ix, err := c.scanLog(data, zst, "", "fuzz")
	if err != nil {
		switch sdk.CodeOf(err) {
		case sdk.CodeCorruptLog, sdk.CodeFormatTooNew, sdk.CodeFormatUnsupported:
			return
		}
		t.Fatalf("scan error with an unexpected code: %v", err)
	}
	if ix.hdrEnd <= 0 || ix.hdrEnd > ix.end || ix.end > int64(len(data)) {
		t.Fatalf("index bounds: header end %d, committed end %d, %d bytes", ix.hdrEnd, ix.end, len(data))
	}
	// Deterministic.
	_, again, err := (&checker{dec: fuzzCodec.dec, maxContent: fuzzMaxContent}).scanLog(data, zst, "", "fuzz")
	if err != nil || again.end != ix.end || again.next != ix.next {
		t.Fatalf("a second scan differs: %+v, %v; first end %d, next %d", again, err, ix.end, ix.next)
	}
	// The committed prefix is clean: no torn tail, the same events.
	_, clean, err := c.scanLog(data[:ix.end], zst, "", "fuzz")
	if err != nil || clean.end != ix.end || clean.next != ix.next {
		t.Fatalf("the committed prefix rescans as %+v, %v; want end %d, next %d", clean, err, ix.end, ix.next)
	}
	// The index finds every event, each with its seq.
	var count int64
	if zst {
		for _, fr := range ix.frames {
			if fr.first != count {
				t.Fatalf("frame at %d starts at seq %d; want %d", fr.off, fr.first, count)
			}
			count += fr.count
		}
	} else {
		for k, s := range ix.starts {
			line := data[s:ix.lineEnd(int64(k))]
			if seq, _, reason := c.envelope(line); reason != "" || seq != int64(k) {
				t.Fatalf("indexed line %d = %q: seq %d, %s", k, line, seq, reason)
			}
			count++
		}
	}
	if count != ix.next {
		t.Fatalf("the index holds %d events; next is %d", count, ix.next)
	}
	// After a cut, the next batch appends cleanly.
	next := persistencetest.Batch(int(ix.next), 2)
	unit := append(append(append([]byte{}, next[0]...), '\n'), append(next[1], '\n')...)
	if zst {
		unit = fuzzCodec.enc.EncodeAll(unit, nil)
	}
	grown := append(data[:ix.end:ix.end], unit...)
	_, after, err := c.scanLog(grown, zst, "", "fuzz")
	if err != nil || after.next != ix.next+2 || after.end != int64(len(grown)) {
		t.Fatalf("after the cut and a batch: %+v, %v; want next %d, end %d", after, err, ix.next+2, len(grown))
	}
}

// checkDamage checks what salvage relies on: committed damage starts at
// the end of the valid prefix, which rescans clean; for zstd the frame it
// names as intact is; and scanLog refuses exactly the logs scanDamaged
// finds damaged.
func checkDamage(t *testing.T, c *checker, data []byte, zst bool) {
	_, ix, d, err := c.scanDamaged(data, zst, "", "fuzz")
	_, _, logErr := c.scanLog(data, zst, "", "fuzz")
	if err != nil || d == nil {
		if (err == nil) != (logErr == nil) {
			t.Fatalf("scanDamaged says %v, scanLog %v", err, logErr)
		}
		return
	}
	if sdk.CodeOf(logErr) != sdk.CodeCorruptLog {
		t.Fatalf("scanDamaged found damage at %d; scanLog says %v", d.off, logErr)
	}
	if d.off != ix.end || d.off >= int64(len(data)) {
		t.Fatalf("damage at %d; the valid prefix ends at %d of %d bytes", d.off, ix.end, len(data))
	}
	_, clean, cd, err := c.scanDamaged(data[:ix.end], zst, "", "fuzz")
	if err != nil || cd != nil || clean.end != ix.end || clean.next != ix.next {
		t.Fatalf("the valid prefix before the damage rescans as %+v, %+v, %v", clean, cd, err)
	}
	if zst {
		if d.later <= d.off || d.intact <= 0 {
			t.Fatalf("damage %+v names no intact frame after it", d)
		}
		n, bound, st, _ := frameBounds(data[d.later:])
		if st != unitGood {
			t.Fatalf("no frame at the intact offset %d", d.later)
		}
		if _, ok := c.intactFrame(data[d.later:d.later+int64(n)], bound); !ok {
			t.Fatalf("the frame at %d is not intact", d.later)
		}
	}
}

type seed struct {
	name string
	data []byte
	want string // the classification: "corrupt", "too-new", or "<events>" or "<events>+torn"
}

// seedLines is a clean log: header, turn/start, three events, turn/end.
func seedLines() [][]byte {
	h := headerjson.Encode(sdk.Header{ID: "s1", CreatedAt: 1, CWD: "/w"})
	lines := [][]byte{h, persistencetest.Envelope(0, "turn/start", `{"turn":1}`)}
	lines = append(lines, persistencetest.Batch(1, 3)...)
	return append(lines, turnEnd(4))
}

// deepEvent is the envelope at seq 1 of seedLines with data nested depth
// arrays: at the limit (512, the envelope not counted) a stored event, one
// deeper damage.
func deepEvent(depth int) []byte {
	return persistencetest.Envelope(1, "x-test/deep", strings.Repeat("[", depth)+strings.Repeat("]", depth))
}

// asV1 returns the header line of seedLines as format v1 wrote it; with
// protocol it also carries "protocol":"lenient", a member v1 does not have
// (CORRUPT_LOG).
func asV1(header []byte, protocol bool) []byte {
	h := bytes.Replace(header, versionMember(sdk.FormatVersion), versionMember(1), 1)
	if protocol {
		h = append(h[:len(h)-1:len(h)-1], `,"protocol":"lenient"}`...)
	}
	return h
}

// versionMember is the header member naming format version v.
func versionMember(v int) []byte { return []byte(`"version":` + strconv.Itoa(v)) }

func joinLines(lines [][]byte) []byte {
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	return b
}

func lineSeeds() []seed {
	lines := seedLines()
	clean := joinLines(lines)
	damaged := func(i int, fn func([]byte) []byte, closed bool) []byte {
		ls := make([][]byte, len(lines))
		for k := range lines {
			ls[k] = bytes.Clone(lines[k])
		}
		ls[i] = fn(ls[i])
		if !closed {
			ls = ls[:len(ls)-1]
		}
		return joinLines(ls)
	}
	hash := func(l []byte) []byte { l[0] = '#'; return l }
	tooNew := bytes.Replace(clean, versionMember(sdk.FormatVersion), versionMember(sdk.FormatVersion+1), 1)
	v1 := asV1(lines[0], false)
	v1Protocol := asV1(lines[0], true)
	return []seed{
		{"clean", clean, "5"},
		{"header-only", joinLines(lines[:1]), "0"},
		{"empty", nil, "corrupt"},
		{"header-without-newline", lines[0], "corrupt"},
		{"torn-missing-newline", clean[:len(clean)-1], "4+torn"},
		{"torn-mid-line", clean[:len(clean)-20], "4+torn"},
		{"torn-after-complete-line", joinLines(lines[:4]), "3"},
		{"damaged-then-turn-end", damaged(2, hash, true), "corrupt"},
		{"damaged-no-turn-end", damaged(2, hash, false), "1+torn"},
		{"wrong-seq-then-turn-end", damaged(3, func(l []byte) []byte { return bytes.Replace(l, []byte(`"seq":2`), []byte(`"seq":7`), 1) }, true), "corrupt"},
		{"not-canonical", damaged(3, func(l []byte) []byte { return append([]byte("{ "), l[1:]...) }, true), "corrupt"},
		{"version-next-garbage", append(tooNew, "garbage\n\xff\n"...), "too-new"},
		{"version-1.5", bytes.Replace(clean, versionMember(sdk.FormatVersion), []byte(`"version":1.5`), 1), "corrupt"},
		{"version-1", joinLines(append([][]byte{v1}, lines[1:]...)), "5"},
		{"version-1-protocol", joinLines(append([][]byte{v1Protocol}, lines[1:]...)), "corrupt"},
		{"crlf", bytes.ReplaceAll(clean, []byte("\n"), []byte("\r\n")), "corrupt"},
		{"crlf-after-header", append(joinLines(lines[:1]), bytes.ReplaceAll(joinLines(lines[1:]), []byte("\n"), []byte("\r\n"))...), "corrupt"},
		{"blank-line", append(joinLines(lines[:3]), append([]byte("\n"), joinLines(lines[3:])...)...), "corrupt"},
		{"data-at-depth-limit", damaged(2, func([]byte) []byte { return deepEvent(512) }, true), "5"},
		{"data-past-depth-limit", damaged(2, func([]byte) []byte { return deepEvent(513) }, true), "corrupt"},
	}
}

func frameSeeds(tb testing.TB) []seed {
	lines := seedLines()
	enc := fuzzCodec.enc
	frame := func(ls ...[]byte) []byte { return enc.EncodeAll(joinLines(ls), nil) }
	// Units: header frame, then batches [0,2), [2,4), [4] (the turn/end).
	units := [][]byte{frame(lines[0]), frame(lines[1:3]...), frame(lines[3:5]...), frame(lines[5])}
	join := func(us ...[]byte) []byte { return bytes.Join(us, nil) }
	clean := join(units...)
	flip := func(b []byte, at int) []byte { c := bytes.Clone(b); c[at] ^= 0x5A; return c }
	noCRC, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(false))
	if err != nil {
		tb.Fatal(err)
	}
	tooNew := frame(bytes.Replace(lines[0], versionMember(sdk.FormatVersion), versionMember(sdk.FormatVersion+1), 1))
	v1, v1Protocol := frame(asV1(lines[0], false)), frame(asV1(lines[0], true))
	skippable := []byte{0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4}
	mid := len(units[1]) / 2
	return []seed{
		{"clean", clean, "5"},
		{"header-only", units[0], "0"},
		{"empty", nil, "corrupt"},
		{"torn-mid-frame", clean[:len(clean)-len(units[3])/2], "4+torn"},
		{"torn-in-checksum", clean[:len(clean)-2], "4+torn"},
		{"torn-in-frame-header", clean[:len(clean)-len(units[3])+3], "4+torn"},
		{"checksum-then-turn-end", join(units[0], flip(units[1], len(units[1])-1), units[2], units[3]), "corrupt"},
		{"content-then-turn-end", join(units[0], flip(units[1], mid), units[2], units[3]), "corrupt"},
		{"magic-then-turn-end", join(units[0], flip(units[1], 0), units[2], units[3]), "corrupt"},
		{"damaged-then-intact", join(units[0], flip(units[1], len(units[1])-1), units[2]), "corrupt"},
		{"damaged-last-frame", join(units[0], units[1], flip(units[2], len(units[2])-1)), "2+torn"},
		{"no-checksum", join(units[0], noCRC.EncodeAll(joinLines(lines[1:3]), nil), units[2], units[3]), "corrupt"},
		{"skippable-then-intact", join(units[0], skippable, units[1]), "corrupt"},
		{"skippable-last", join(units[0], units[1], skippable), "2+torn"},
		{"garbage-between", join(units[0], []byte("garbage"), units[1], units[2], units[3]), "corrupt"},
		{"version-next-garbage", join(tooNew, []byte("\x28\xb5\x2f\xfd garbage")), "too-new"},
		{"version-1", join(v1, units[1], units[2], units[3]), "5"},
		{"version-1-protocol", join(v1Protocol, units[1], units[2], units[3]), "corrupt"},
		{"header-frame-damaged", join(flip(units[0], len(units[0])-1), units[1]), "corrupt"},
		{"plain-text", joinLines(lines), "corrupt"},
		{"data-at-depth-limit", join(units[0], frame(lines[1], deepEvent(512)), units[2], units[3]), "5"},
		{"data-past-depth-limit", join(units[0], frame(lines[1], deepEvent(513)), units[2], units[3]), "corrupt"},
	}
}

// TestSeedsClassify pins what the scanner makes of every seed.
func TestSeedsClassify(t *testing.T) {
	for _, zst := range []bool{false, true} {
		seeds := lineSeeds()
		if zst {
			seeds = frameSeeds(t)
		}
		for _, s := range seeds {
			_, ix, err := (&checker{dec: fuzzCodec.dec}).scanLog(s.data, zst, "", "seed")
			got := ""
			switch {
			case sdk.CodeOf(err) == sdk.CodeCorruptLog:
				got = "corrupt"
			case sdk.CodeOf(err) == sdk.CodeFormatTooNew:
				got = "too-new"
			case err != nil:
				got = err.Error()
			default:
				got = strconv.FormatInt(ix.next, 10)
				if ix.end < int64(len(s.data)) {
					got += "+torn"
				}
			}
			if got != s.want {
				t.Errorf("zstd %t, seed %s: %s (%v); want %s", zst, s.name, got, err, s.want)
			}
		}
	}
}

// TestWriteFuzzSeeds regenerates testdata/fuzz when
// LOGBOOK_JSONL_WRITE_FUZZ_SEEDS=1; otherwise it checks that every seed is
// on disk (not its bytes: another zstd encoder version may encode the
// frames differently).
func TestWriteFuzzSeeds(t *testing.T) {
	write := os.Getenv("LOGBOOK_JSONL_WRITE_FUZZ_SEEDS") == "1"
	for target, seeds := range map[string][]seed{"FuzzLineScanner": lineSeeds(), "FuzzFrameScanner": frameSeeds(t)} {
		dir := filepath.Join("testdata", "fuzz", target)
		for _, s := range seeds {
			content := fmt.Appendf(nil, "go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(s.data)))
			path := filepath.Join(dir, s.name)
			if write {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, content, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("seed %s is missing; run LOGBOOK_JSONL_WRITE_FUZZ_SEEDS=1 go test -run TestWriteFuzzSeeds ./plugins/jsonl", path)
			}
		}
	}
}
