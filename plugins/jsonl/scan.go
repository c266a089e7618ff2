package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/envelope"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// frameMagic starts every Zstandard frame (RFC 8878 §3.1.1); the scanner
// resynchronizes on it after a damaged frame (docs/storage.md).
var frameMagic = []byte{0x28, 0xB5, 0x2F, 0xFD}

// maxBlock is Block_Maximum_Size (RFC 8878 §3.1.1.2.4): no block holds or
// decodes to more, so a frame of k blocks decodes to at most k × maxBlock
// bytes, which bounds what a damaged frame header can make the decoder
// allocate.
const maxBlock = 128 << 10

// index is the committed prefix of a log (docs/storage.md): where it ends, how
// many events it holds and where they are. Its slices only grow; an element,
// once published, is never written again, so a reader may keep a
// capacity-clipped copy of the slice header without a lock.
type index struct {
	hdrEnd int64 // end of the header unit
	end    int64 // committedEnd: the offset after the last good unit
	next   int64 // the committed event count, i.e. the seq expected next
	// none: the file offset of each committed event's line
	starts []int64
	// zstd: the committed batch frames, in order
	frames []frameRef
	// fromCheckpoint is the end of the frames the scan took from the
	// session's checkpoint instead of decoding them (0: none): their
	// entries meet their content only when a read decodes them.
	fromCheckpoint int64
}

// frameRef is one committed batch frame.
type frameRef struct {
	off, size    int64 // its bytes in the file
	first, count int64 // its first seq and event count
}

// snapshot returns a copy of ix whose slices are clipped to their length.
func (ix *index) snapshot() index {
	c := *ix
	c.starts = ix.starts[:len(ix.starts):len(ix.starts)]
	c.frames = ix.frames[:len(ix.frames):len(ix.frames)]
	return c
}

// lineEnd is the offset of event k's terminating '\n' (ix is plain).
func (ix *index) lineEnd(k int64) int64 {
	if k+1 < int64(len(ix.starts)) {
		return ix.starts[k+1] - 1
	}
	return ix.end - 1
}

// checker validates units. It owns scratch buffers, so one checker serves
// one goroutine at a time.
type checker struct {
	dec     *zstd.Decoder // nil for plain logs
	scratch []byte        // canonical encoding of the line being checked
	parser  jsonv.Reparser
	decoded []byte   // the content of the frame being checked
	arr     []byte   // a run of lines as one JSON array
	lines   [][]byte // the lines of the run being checked
	// maxContent, when > 0, refuses frames that may decode to more bytes
	// (by their content size, or 128 KiB per block): the fuzz targets set
	// it so that a few bytes of RLE blocks cannot make each input decode
	// hundreds of MiB. The backend sets none: a batch may be any size.
	maxContent uint64
	sub        []checker // the checkers of the pieces of a large run (envelopes)
	// scanning keeps scratch buffers of any size between the frames of
	// one whole-log scan; endScan drops the large ones.
	scanning bool
	// tenant is the Header.Tenant every header this checker reads must
	// name: the tenant of the view whose directory holds the log.
	tenant string
	// trust, when set, is the checkpoint whose binding vouches for a
	// prefix of the log (checkpoint.go): a whole-log scan takes that
	// prefix's frames from its table without decoding them, and checks
	// only the frames after it.
	trust *checkpointFile
}

// endScan ends a whole-log scan: scratch larger than keepScratch goes.
func (c *checker) endScan() {
	c.scanning = false
	if cap(c.scratch) > keepScratch {
		c.scratch = nil
	}
	if cap(c.arr) > keepScratch {
		c.arr = nil
	}
	c.sub = nil
}

// Scratch buffers larger than keepScratch are dropped after use, so that
// one huge batch does not pin its size in every handle.
const keepScratch = 1 << 20

// envelope checks one stored or appended line: a canonical envelope
// (docs/format.md), byte for byte. It returns its seq and whether its type is
// turn/end, or a reason for refusing it.
func (c *checker) envelope(ev []byte) (seq int64, turnEnd bool, reason string) {
	// data sits one level inside the envelope; only its own depth is
	// limited.
	buf, doc, err := c.parser.AppendParse(c.scratchFor(len(ev)), ev, jsonv.Options{Enclosing: 1})
	c.keep(buf)
	if err != nil {
		return 0, false, "not lossless JSON: " + err.Error()
	}
	if !bytes.Equal(buf, ev) {
		return 0, false, "not in canonical form (no whitespace outside strings, canonical string escapes; see docs/format.md)"
	}
	return members(doc.Root())
}

// scratchFor returns c.scratch emptied, with room for n bytes.
func (c *checker) scratchFor(n int) []byte {
	if cap(c.scratch) < n {
		c.scratch = make([]byte, 0, max(n, 4096))
	}
	return c.scratch[:0]
}

func (c *checker) keep(buf []byte) {
	if cap(buf) <= keepScratch || c.scanning {
		c.scratch = buf[:0]
	} else {
		c.scratch = nil
	}
}

// members checks the members of a parsed envelope (docs/format.md): seq, time,
// type and data present; seq and time integers in 0 … 2^53−1; type a
// string; ignorable only the literal true; operation an id and a count
// (envelope.Operation); no other member. Order is free.
func members(v jsonv.Value) (seq int64, turnEnd bool, reason string) {
	if v.Kind() != jsonv.Object {
		return 0, false, "not a JSON object"
	}
	const hasSeq, hasTime, hasType, hasData = 1, 2, 4, 8
	var seen int
	for k, m := range v.Members() {
		switch {
		case k.StrEqual("seq"), k.StrEqual("time"):
			n, ok := m.Int()
			if !ok || n < 0 || n > sdk.MaxSeq {
				return 0, false, fmt.Sprintf("member %s is not an integer in 0 … 2^53−1", k.Bytes())
			}
			if k.StrEqual("seq") {
				seq, seen = n, seen|hasSeq
			} else {
				seen |= hasTime
			}
		case k.StrEqual("type"):
			if m.Kind() != jsonv.String {
				return 0, false, `member "type" is not a string`
			}
			turnEnd, seen = m.StrEqual("turn/end"), seen|hasType
		case k.StrEqual("data"):
			seen |= hasData
		case k.StrEqual("surfaceOp"), k.StrEqual("sourceEventSeqs"):
		case k.StrEqual("ignorable"):
			if b, ok := m.Bool(); !ok || !b {
				return 0, false, `member "ignorable" is not the literal true`
			}
		case k.StrEqual("operation"):
			if _, _, err := envelope.Operation(m); err != nil {
				return 0, false, err.Error()
			}
		default:
			return 0, false, fmt.Sprintf("unknown member %s", clipBytes(k.Bytes()))
		}
	}
	for _, m := range [...]struct {
		bit  int
		name string
	}{{hasSeq, "seq"}, {hasTime, "time"}, {hasType, "type"}, {hasData, "data"}} {
		if seen&m.bit == 0 {
			return 0, false, fmt.Sprintf("member %q is missing", m.name)
		}
	}
	return seq, turnEnd, ""
}

// lineFault is the first bad line of a run: its index and why (reason),
// or, with reason "", the seq it has instead of the expected one.
type lineFault struct {
	index  int
	seq    int64
	reason string
}

func (f lineFault) String(first int64) string {
	if f.reason != "" {
		return f.reason
	}
	return fmt.Sprintf("seq %d where %d was expected", f.seq, first+int64(f.index))
}

// envelopes checks a run of lines as envelope would, each with seq first
// plus its index, and reports the first bad one (ok false). It parses the
// run once, as the JSON array [l0,l1,…]: the array's canonical form equals
// its input exactly when every element's does, and each element must span
// exactly its line, so the run costs one parse and O(log n) allocations
// instead of a Doc per line. Only when that fails does it check line by
// line, to find and name the culprit.
//
// A large run is checked as a sharedCheck on up to GOMAXPROCS (at most
// maxPieces) goroutines, each with its own checker.
func (c *checker) envelopes(lines [][]byte, first int64) (lineFault, bool) {
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	k := min(runtime.GOMAXPROCS(0), maxPieces, size/pieceMin, len(lines))
	if k < 2 {
		return c.envelopesRun(lines, first)
	}
	if len(c.sub) < k-1 {
		c.sub = make([]checker, k-1)
	}
	s := newSharedCheck(lines, first)
	for p := range k - 1 {
		c.sub[p].scanning = c.scanning
		go s.run(&c.sub[p])
	}
	s.run(c)
	return s.result()
}

// Runs of at least 2 × pieceMin bytes are checked in pieces.
const pieceMin, maxPieces = 2 << 20, 4

// envelopesRun is envelopes on one goroutine.
func (c *checker) envelopesRun(lines [][]byte, first int64) (lineFault, bool) {
	n := 2
	for _, l := range lines {
		n += len(l) + 1
	}
	arr := slices.Grow(c.arr[:0], n)
	arr = append(arr, '[')
	for i, l := range lines {
		if i > 0 {
			arr = append(arr, ',')
		}
		arr = append(arr, l...)
	}
	arr = append(arr, ']')
	if cap(arr) <= keepScratch || c.scanning {
		c.arr = arr[:0]
	} else {
		c.arr = nil
	}
	// Each element's data sits two levels inside the array.
	buf, doc, err := c.parser.AppendParse(c.scratchFor(len(arr)), arr, jsonv.Options{Enclosing: 2})
	c.keep(buf)
	if err == nil && bytes.Equal(buf, arr) && doc.Root().Len() == len(lines) {
		off, i := 1, 0
		for _, el := range doc.Root().Elements() {
			if s, e := el.Span(); s != off || e != off+len(lines[i]) {
				break // a line that is not exactly one value
			}
			seq, _, reason := members(el)
			if reason != "" || seq != first+int64(i) {
				return lineFault{index: i, seq: seq, reason: reason}, false
			}
			off += len(lines[i]) + 1
			i++
		}
		if i == len(lines) {
			return lineFault{}, true
		}
	}
	for i, l := range lines {
		seq, _, reason := c.envelope(l)
		if reason != "" || seq != first+int64(i) {
			return lineFault{index: i, seq: seq, reason: reason}, false
		}
	}
	return lineFault{}, true
}

// checkBatch checks an Append batch: every element a canonical envelope
// (ENVELOPE_INVALID naming its index) with seq firstSeq + index
// (SEQ_NOT_CONTIGUOUS).
func (c *checker) checkBatch(firstSeq sdk.Seq, events [][]byte) *sdk.Error {
	if f, ok := c.envelopes(events, int64(firstSeq)); !ok {
		return batchFault(firstSeq, f)
	}
	return nil
}

// batchFault is checkBatch's error for the first bad line f of a batch.
func batchFault(firstSeq sdk.Seq, f lineFault) *sdk.Error {
	if f.reason != "" {
		return sdk.Errorf(sdk.CodeEnvelopeInvalid, op, "batch event %d is not a canonical envelope: %s", f.index, f.reason).WithIndex(f.index)
	}
	want := int64(firstSeq) + int64(f.index)
	return sdk.Errorf(sdk.CodeSeqNotContiguous, op, "batch event %d has seq %d; expected %d (firstSeq %d + %d)", f.index, f.seq, want, firstSeq, f.index).WithSeq(f.seq).WithIndex(f.index)
}

// unitStatus classifies the unit at some position.
type unitStatus int

const (
	unitGood       unitStatus = iota
	unitIncomplete            // the data ends inside it (docs/storage.md)
	unitBad                   // complete but not what this backend writes
)

// frameSpan returns the length of the Zstandard frame at the start of b,
// walking its frame header (zstd.Header) and block headers without
// decoding: incomplete when b ends inside it; bad when it is not a frame
// this backend writes (no magic, a skippable frame, a dictionary, no content
// checksum, a reserved block type, an oversized block, a content size its
// blocks cannot hold).
func frameSpan(b []byte) (int, unitStatus, string) {
	n, _, st, reason := frameBounds(b)
	return n, st, reason
}

// frameBounds is frameSpan that also returns the most bytes the frame can
// decode to.
func frameBounds(b []byte) (int, uint64, unitStatus, string) {
	var h zstd.Header
	if err := h.Decode(b); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) && (len(b) >= 4 || bytes.HasPrefix(frameMagic, b)) {
			return 0, 0, unitIncomplete, "the data ends inside the frame header"
		}
		return 0, 0, unitBad, "not a zstd frame header: " + err.Error()
	}
	switch {
	case h.Skippable:
		return 0, 0, unitBad, "a skippable frame"
	case !h.HasCheckSum:
		return 0, 0, unitBad, "a frame without content checksum"
	case h.DictionaryID != 0:
		return 0, 0, unitBad, "a frame that needs a dictionary"
	}
	pos, blocks := h.HeaderSize, uint64(0)
	for {
		if len(b)-pos < 3 {
			return 0, 0, unitIncomplete, "the data ends inside the frame"
		}
		bh := uint32(b[pos]) | uint32(b[pos+1])<<8 | uint32(b[pos+2])<<16
		last, typ, size := bh&1 != 0, (bh>>1)&3, int(bh>>3)
		content := size
		switch typ {
		case 1: // RLE: one byte, repeated size times
			content = 1
		case 3:
			return 0, 0, unitBad, "a reserved block type"
		}
		if size > maxBlock {
			return 0, 0, unitBad, fmt.Sprintf("a block of %d bytes (at most %d)", size, maxBlock)
		}
		pos += 3
		if len(b)-pos < content {
			return 0, 0, unitIncomplete, "the data ends inside the frame"
		}
		pos += content
		blocks++
		if last {
			break
		}
	}
	if len(b)-pos < 4 {
		return 0, 0, unitIncomplete, "the data ends inside the frame checksum"
	}
	pos += 4
	bound := blocks * maxBlock
	if h.HasFCS {
		if h.FrameContentSize > bound {
			return 0, 0, unitBad, fmt.Sprintf("a content size of %d bytes that %d blocks cannot hold", h.FrameContentSize, blocks)
		}
		bound = h.FrameContentSize
	}
	return pos, bound, unitGood, ""
}

// decodeFrame decodes one structurally complete frame, which decodes to
// at most bound bytes, into c.decoded, verifying its checksum.
func (c *checker) decodeFrame(frame []byte, bound uint64) ([]byte, error) {
	if c.maxContent > 0 && bound > c.maxContent {
		return nil, fmt.Errorf("the frame may decode to %d bytes, over this checker's limit of %d", bound, c.maxContent)
	}
	out, err := c.dec.DecodeAll(frame, c.decoded[:0])
	return out, c.keepDecoded(out, err)
}

func (c *checker) keepDecoded(out []byte, err error) error {
	if cap(out) <= 4<<20 {
		c.decoded = out[:0]
	} else {
		c.decoded = nil // do not keep a huge buffer
	}
	return err
}

// headerUnit splits the header unit off the start of a log: the first line
// (none) or the first frame, which must decode to exactly one line (zstd).
// It returns the header line without its '\n' and the unit's length. The
// line aliases c's scratch for zstd.
func (c *checker) headerUnit(data []byte, zst bool) (line []byte, n int, st unitStatus, reason string) {
	if len(data) == 0 {
		return nil, 0, unitBad, "the file is empty (0 bytes): the header line is missing"
	}
	if !zst {
		nl := bytes.IndexByte(data, '\n')
		switch {
		case nl < 0:
			return nil, 0, unitIncomplete, "the header line has no terminating newline"
		case nl == 0:
			return nil, 0, unitBad, "the header line is empty"
		case data[nl-1] == '\r':
			return nil, 0, unitBad, crlfReason
		}
		return data[:nl], nl + 1, unitGood, ""
	}
	n, bound, st, reason := frameBounds(data)
	if st != unitGood {
		return nil, 0, st, "the header frame: " + reason
	}
	out, err := c.decodeFrame(data[:n], bound)
	if err != nil {
		return nil, 0, unitBad, "the header frame does not decode: " + err.Error()
	}
	if len(out) == 1 && out[0] == '\n' {
		return nil, 0, unitBad, "the header line is empty"
	}
	if len(out) == 0 || out[len(out)-1] != '\n' || bytes.IndexByte(out, '\n') != len(out)-1 {
		reason := "the header frame does not hold exactly one line"
		if nl := bytes.IndexByte(out, '\n'); nl > 0 {
			// A first line that is no header says more, as a missing one.
			if _, err := headerjson.Decode(out[:nl], "", ""); err != nil {
				var e *sdk.Error
				if errors.As(err, &e) {
					reason += "; " + e.Detail
				}
			}
		}
		return nil, 0, unitBad, reason
	}
	return out[:len(out)-1], n, unitGood, ""
}

// scanLog classifies a whole log (docs/storage.md): the header unit first
// (the format gate, the identity check and the header shape, before any
// event is decoded), then the events. It returns the header and the
// committed prefix; len(data) − ix.end bytes after it are a torn tail. A
// bad header unit, or committed damage (see damage), is CORRUPT_LOG.
// id "" skips the identity check.
func (c *checker) scanLog(data []byte, zst bool, id, path string) (sdk.Header, *index, error) {
	h, ix, d, err := c.scanDamaged(data, zst, id, path)
	if err == nil && d != nil {
		err = d.error(h.ID, path)
	}
	if err != nil {
		return sdk.Header{}, nil, err
	}
	return h, ix, nil
}

// scanDamaged is scanLog that returns committed damage instead of failing
// on it: ix is then the longest valid prefix, which ends where d starts.
// Only a bad header unit is an error.
func (c *checker) scanDamaged(data []byte, zst bool, id, path string) (sdk.Header, *index, *damage, error) {
	h, n, _, err := c.header(data, zst, id, path)
	if err != nil {
		return sdk.Header{}, nil, nil, err
	}
	ix := &index{hdrEnd: int64(n), end: int64(n)}
	if zst && c.trust != nil {
		c.trust.apply(data, ix)
	}
	var d *damage
	if zst {
		d = c.scanFrames(data[ix.end:], ix.end, ix)
	} else {
		d = c.scanLines(data[n:], int64(n), ix)
	}
	return h, ix, d, nil
}

// header decodes the header unit at the start of data: the format gate,
// the identity check, the header shape and the tenant check (CORRUPT_LOG
// when the unit is not good, st saying why, unitIncomplete when data ends
// inside it; CORRUPT_LOG when the header names another tenant than
// c.tenant). It returns the unit's length.
func (c *checker) header(data []byte, zst bool, id, path string) (sdk.Header, int, unitStatus, error) {
	line, n, st, reason := c.headerUnit(data, zst)
	if st != unitGood {
		e := sdk.Errorf(sdk.CodeCorruptLog, op, "%s: %s: %s", path, firstUnit(zst), reason)
		e.SessionID = id
		return sdk.Header{}, 0, st, e
	}
	h, err := headerjson.Decode(line, id, path)
	if err == nil {
		if err = handles.StoredTenant(op, h, c.tenant, path); err != nil {
			h = sdk.Header{}
		}
	}
	return h, n, st, err
}

func firstUnit(zst bool) string {
	if zst {
		return "byte offset 0"
	}
	return "line 1"
}

// scanLines continues ix over data, the bytes of a plain log from file
// offset base == ix.end on. It appends every good line to ix and returns
// the damage when the first bad line is committed (laterLines); nil means
// the bytes after ix.end, if any, are a torn tail.
func (c *checker) scanLines(data []byte, base int64, ix *index) *damage {
	const runLines, runBytes = 1024, 1 << 20 // lines checked by one parse
	pos := 0
	var bad string
	for pos < len(data) {
		lines := c.lines[:0]
		for q := pos; q < len(data) && len(lines) < runLines && q-pos < runBytes; {
			nl := bytes.IndexByte(data[q:], '\n')
			if nl < 0 {
				break
			}
			lines = append(lines, data[q:q+nl])
			q += nl + 1
		}
		c.lines = lines[:0]
		if len(lines) == 0 {
			bad = "an incomplete final line (no newline)"
			break
		}
		f, ok := c.envelopes(lines, ix.next)
		good := lines
		if !ok {
			good = lines[:f.index]
		}
		for _, l := range good {
			ix.starts = append(ix.starts, base+int64(pos))
			ix.next++
			pos += len(l) + 1
		}
		ix.end = base + int64(pos)
		if !ok {
			bad = f.String(ix.next - int64(f.index))
			break
		}
	}
	clear(c.lines[:cap(c.lines)]) // drop the references into data
	if bad == "" {
		return nil
	}
	return c.laterLines(data[pos:], base+int64(pos), ix.next+2, bad)
}

// scanFrames continues ix over data, the bytes of a zstd log from file
// offset base == ix.end on, frame by frame; see scanLines.
func (c *checker) scanFrames(data []byte, base int64, ix *index) *damage {
	pos := c.scanAhead(data, base, ix)
	var bad string
	for pos < len(data) {
		n, bound, st, reason := frameBounds(data[pos:])
		if st == unitGood {
			count, r := c.frameEvents(data[pos:pos+n], bound, ix.next)
			if r == "" {
				ix.frames = append(ix.frames, frameRef{off: base + int64(pos), size: int64(n), first: ix.next, count: count})
				ix.next += count
				pos += n
				ix.end = base + int64(pos)
				continue
			}
			reason = r
		}
		bad = reason
		break
	}
	if bad == "" {
		return nil
	}
	return c.laterFrames(data[pos:], base+int64(pos), "the batch frame: "+bad)
}

// frameEvents decodes a structurally complete batch frame and checks that
// it holds complete lines, each a valid envelope with the next expected
// seq from first on. It returns the event count or a reason.
func (c *checker) frameEvents(frame []byte, bound uint64, first int64) (int64, string) {
	out, err := c.decodeFrame(frame, bound)
	if err != nil {
		return 0, "not decodable: " + err.Error()
	}
	return c.contentEvents(out, first)
}

// contentEvents is frameEvents on the decoded content of a frame.
func (c *checker) contentEvents(out []byte, first int64) (int64, string) {
	if len(out) == 0 || out[len(out)-1] != '\n' {
		return 0, "not a sequence of complete lines"
	}
	lines := c.lines[:0]
	for len(out) > 0 {
		nl := bytes.IndexByte(out, '\n')
		lines = append(lines, out[:nl])
		out = out[nl+1:]
	}
	c.lines = lines[:0]
	f, ok := c.envelopes(lines, first)
	clear(lines)
	if !ok {
		return 0, fmt.Sprintf("its line %d: %s", f.index+1, f.String(first))
	}
	return int64(len(lines)), ""
}

func clipBytes(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}
