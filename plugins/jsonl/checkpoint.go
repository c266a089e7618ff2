package jsonl

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"path/filepath"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Checkpoints (docs/storage.md, "Checkpoints"): the backend implements
// sdk.Checkpointer with one file beside the log, checkpoint.v1.bin:
//
//	magic "LBJCKPT2"
//	events, prefix uint64 LE    the events covered and the log bytes they end at
//	prefixCRC uint32 LE         CRC-32C of the log's bytes [0, prefix)
//	name uint16 LE + bytes      the log file it is bound to (events.v<N>.jsonl[.zst])
//	frames uvarint              zstd: the batch frames of the prefix (0 for a plain log),
//	  then per frame, in order: its size and its event count, uvarints
//	size uint64 LE + bytes      the host's checkpoint, zstd-compressed
//	crc uint32 LE               CRC-32C of everything before it
//
// The binding is checked on every read: the covered events must end
// exactly at prefix in the current log, and the log's bytes up to there
// must have the recorded CRC. Reading a 24 MB compressed log's prefix
// costs a few milliseconds, far less than checking its envelopes again.
// The frame table is the index a scan of those very bytes built, so an
// open whose binding matches takes it instead of decoding the prefix's
// frames (a read decodes them, verifying their checksums, as it streams).
// The file is replaced durably (temp file, fsync, rename, directory fsync)
// after the events it covers are durable, so it never runs ahead of the log.

const (
	checkpointName  = "checkpoint.v1.bin"
	checkpointMagic = "LBJCKPT2"
	// maxCheckpointBytes bounds what a read of the file allocates.
	maxCheckpointBytes = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkpointEncoder compresses checkpoints, whatever the log's compression.
var checkpointEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
})

// WriteCheckpoint implements sdk.Checkpointer: events must be the durable
// length of the write handle's log (every acknowledged append is).
func (b *Backend) WriteCheckpoint(ctx context.Context, handle string, events sdk.Offset, data []byte) error {
	hd, err := b.lock(ctx, "write checkpoint", handle)
	if err != nil {
		return err
	}
	defer hd.mu.Unlock()
	if !hd.write || hd.pending {
		return sdk.Errorf(sdk.CodeInvalidBoundary, op, "a checkpoint is written through a write handle of a stored session")
	}
	if int64(events) != hd.ix.next || events == 0 {
		e := sdk.Errorf(sdk.CodeInvalidBoundary, op, "a checkpoint covers the whole durable log: %d events, not %d", hd.ix.next, events)
		e.SessionID = hd.id
		return e
	}
	crc, err := prefixCRC(hd.f, hd.ix.end)
	if err != nil {
		return handles.IOError(op, hd.id, "reading "+hd.path, err)
	}
	enc, err := checkpointEncoder()
	if err != nil {
		return handles.IOError(op, hd.id, "making the zstd encoder", err)
	}
	buf := checkpointFile{events: int64(events), prefix: hd.ix.end, crc: crc, name: filepath.Base(hd.path),
		frames: hd.ix.frames, packed: enc.EncodeAll(data, nil)}.encode()
	if err := durable.On(vfs.Durable(b.fs)).ReplaceFile(filepath.Join(hd.dir, checkpointName), buf, filePerm); err != nil {
		return handles.IOError(op, hd.id, "writing its checkpoint", err)
	}
	return nil
}

// ReadCheckpoint implements sdk.Checkpointer. A missing, damaged or stale
// checkpoint is found=false, never an error.
func (b *Backend) ReadCheckpoint(ctx context.Context, handle string) (sdk.Offset, []byte, bool, error) {
	hd, err := b.lock(ctx, "read checkpoint", handle)
	if err != nil {
		return 0, nil, false, err
	}
	defer hd.mu.Unlock()
	if hd.pending {
		return 0, nil, false, nil
	}
	raw, err := b.readSmallFile(filepath.Join(hd.dir, checkpointName))
	if err != nil {
		return 0, nil, false, nil
	}
	ck, ok := parseCheckpointFile(raw)
	events, prefix := ck.events, ck.prefix
	if !ok || ck.name != filepath.Base(hd.path) || !hd.ix.endsAt(events, prefix) {
		return 0, nil, false, nil
	}
	if prefix != hd.vouched { // else the open checked this very binding
		if got, err := prefixCRC(hd.f, prefix); err != nil || got != ck.crc {
			return 0, nil, false, nil
		}
	}
	dec, err := b.decoder(true)
	if err != nil {
		return 0, nil, false, err
	}
	data, err := dec.DecodeAll(ck.packed, nil)
	if err != nil {
		return 0, nil, false, nil
	}
	return sdk.Offset(events), data, true, nil
}

// checkpointFile is a parsed checkpoint.v1.bin.
type checkpointFile struct {
	events, prefix int64
	crc            uint32
	name           string
	frames         []frameRef // zstd: the prefix's batch frames (size and count)
	packed         []byte
}

// trustedPrefix returns the batch frames of the log prefix the session's
// checkpoint vouches for: its bytes have the CRC the checkpoint recorded
// when they had been checked and were durable, and the frames are the
// index of those bytes, so a scan need neither decode nor check them
// again. The frames' offsets count from the header unit's end (the scan
// places and checks them, see trustedFrames.apply). ok is false when there is no
// usable checkpoint or the log is plain (whose lines a scan finds anyway).
// data is the whole log file; hd.mu is held.
func (hd *handle) trustedPrefix(data []byte, readFile func(string) ([]byte, error)) (trustedFrames, bool) {
	raw, err := readFile(filepath.Join(hd.dir, checkpointName))
	if err != nil {
		return trustedFrames{}, false
	}
	ck, ok := parseCheckpointFile(raw)
	if !ok || len(ck.frames) == 0 || ck.name != filepath.Base(hd.path) || ck.prefix > int64(len(data)) || crc32.Checksum(data[:ck.prefix], castagnoli) != ck.crc {
		return trustedFrames{}, false
	}
	return trustedFrames{events: ck.events, prefix: ck.prefix, frames: ck.frames}, true
}

// trustedFrames is the part of a log a checkpoint's binding vouches for: its
// first events events, ending at byte offset prefix, in these frames.
type trustedFrames struct {
	events, prefix int64
	frames         []frameRef
}

// apply appends v's frames to ix, which holds only the header unit, when
// they tile data from the header unit's end exactly to v.prefix, each a
// structurally complete frame of its recorded size, and count v.events
// events; otherwise it leaves ix as it is and reports false (the scan
// then checks the frames itself).
func (v trustedFrames) apply(data []byte, ix *index) bool {
	off, next := ix.end, int64(0)
	frames := make([]frameRef, 0, len(v.frames))
	for _, f := range v.frames {
		if f.size <= 0 || f.count <= 0 || f.size > v.prefix-off {
			return false
		}
		if n, st, _ := frameSpan(data[off:v.prefix]); st != unitGood || int64(n) != f.size {
			return false
		}
		frames = append(frames, frameRef{off: off, size: f.size, first: next, count: f.count})
		off, next = off+f.size, next+f.count
	}
	if off != v.prefix || next != v.events {
		return false
	}
	ix.frames, ix.next, ix.end = frames, next, off
	return true
}

// encode lays ck out as above.
func (ck checkpointFile) encode() []byte {
	buf := make([]byte, 0, 48+len(ck.name)+8*len(ck.frames)+len(ck.packed))
	buf = append(buf, checkpointMagic...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(ck.events))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(ck.prefix))
	buf = binary.LittleEndian.AppendUint32(buf, ck.crc)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(ck.name)))
	buf = append(buf, ck.name...)
	buf = binary.AppendUvarint(buf, uint64(len(ck.frames)))
	for _, f := range ck.frames {
		buf = binary.AppendUvarint(buf, uint64(f.size))
		buf = binary.AppendUvarint(buf, uint64(f.count))
	}
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(ck.packed)))
	buf = append(buf, ck.packed...)
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
}

// parseCheckpointFile reads the layout above; ok is false for anything
// else.
func parseCheckpointFile(b []byte) (ck checkpointFile, ok bool) {
	if len(b) < len(checkpointMagic)+8+8+4+2+1+8+4 || string(b[:len(checkpointMagic)]) != checkpointMagic {
		return
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(body):]) {
		return
	}
	d := body[len(checkpointMagic):]
	ck.events, ck.prefix = int64(binary.LittleEndian.Uint64(d)), int64(binary.LittleEndian.Uint64(d[8:]))
	ck.crc = binary.LittleEndian.Uint32(d[16:])
	n := int(binary.LittleEndian.Uint16(d[20:]))
	d = d[22:]
	if len(d) < n {
		return
	}
	ck.name, d = string(d[:n]), d[n:]
	uvarint := func() (int64, bool) {
		v, k := binary.Uvarint(d)
		if k <= 0 || v > math.MaxInt64 {
			return 0, false
		}
		d = d[k:]
		return int64(v), true
	}
	frames, ok := uvarint()
	if !ok || frames > int64(len(d))/2 {
		return checkpointFile{}, false
	}
	ck.frames = make([]frameRef, frames)
	for i := range ck.frames {
		size, ok1 := uvarint()
		count, ok2 := uvarint()
		if !ok1 || !ok2 {
			return checkpointFile{}, false
		}
		ck.frames[i] = frameRef{size: size, count: count}
	}
	if len(d) < 8 {
		return checkpointFile{}, false
	}
	size := binary.LittleEndian.Uint64(d)
	d = d[8:]
	if size != uint64(len(d)) || ck.events <= 0 || ck.prefix <= 0 {
		return checkpointFile{}, false
	}
	ck.packed = d
	return ck, true
}

// endsAt reports whether the committed log's first events events end
// exactly at byte offset prefix.
func (ix *index) endsAt(events, prefix int64) bool {
	if events > ix.next || prefix > ix.end {
		return false
	}
	if len(ix.frames) > 0 {
		for _, f := range ix.frames { // the checkpoint is normally the last frame or close to it
			if f.first+f.count == events {
				return f.off+f.size == prefix
			}
		}
		return false
	}
	return events > 0 && int64(len(ix.starts)) >= events && ix.lineEnd(events-1)+1 == prefix
}

// prefixCRC is the CRC-32C of f's bytes [0, n).
func prefixCRC(f vfs.File, n int64) (uint32, error) {
	buf := make([]byte, min(n, 4<<20))
	var crc uint32
	for off := int64(0); off < n; {
		k := min(int64(len(buf)), n-off)
		if _, err := f.ReadAt(buf[:k], off); err != nil {
			return 0, err
		}
		crc = crc32.Update(crc, castagnoli, buf[:k])
		off += k
	}
	return crc, nil
}

// readSmallFile reads a whole file of at most maxCheckpointBytes.
func (b *Backend) readSmallFile(path string) ([]byte, error) {
	f, err := b.fs.OpenFile(path, 0, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size > maxCheckpointBytes {
		return nil, errors.New("too large")
	}
	buf := make([]byte, fi.Size)
	if err := readFull(f, buf, 0); err != nil {
		return nil, err
	}
	return buf, nil
}

var _ sdk.Checkpointer = (*Backend)(nil)
