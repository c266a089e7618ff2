package jsonl

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Checkpoints (docs/storage.md, "Checkpoints"): the backend implements
// sdk.Checkpointer with one file beside the log, checkpoint.v1.bin:
//
//	magic "LBJCKPT3"
//	events, prefix uint64 LE    the events covered and the log bytes they end at
//	prefixCRC uint32 LE         CRC-32C of the log's bytes [0, prefix)
//	name uint16 LE + bytes      the log file it is bound to (events.v<N>.jsonl[.zst])
//	frames uvarint              zstd: the batch frames of the prefix (0 for a plain log),
//	  then per frame, in order: its size and its event count, uvarints
//	size uint64 LE + bytes      the host's checkpoint, byte for byte as written
//	crc uint32 LE               CRC-32C of everything before it
//
// This is the one layout the backend writes, with one checksum over it;
// the host's checkpoint is its payload, opaque to the backend, stored as
// it came. The layout with magic "LBJCKPT2" (earlier versions) differs
// only in that payload, which is zstd-compressed: it is still read, and the
// next checkpoint written replaces it.
//
// The binding is checked against the log's bytes: the covered events must
// end exactly at prefix in the current log, and the log's bytes up to
// there must have the recorded CRC. An open reads the checkpoint with the
// log and checks the binding against the bytes it has just read, which
// costs a few milliseconds for a 24 MB compressed log, far less than
// checking its envelopes again. The frame table is the index a scan of
// those very bytes built, so an open whose binding matches takes it
// instead of decoding the prefix's frames (a read decodes them, verifying
// their checksums, as it streams). ReadCheckpoint returns what the open
// read; it reads the file again, and checks the binding against the log
// file, only when the file changed since. The file is replaced durably
// (temp file, fsync, rename, directory fsync) after the events it covers
// are durable, so it never runs ahead of the log.

const (
	checkpointName  = "checkpoint.v1.bin"
	checkpointMagic = "LBJCKPT3"
	// checkpointMagicZstd is the magic of the earlier layout, whose
	// payload is zstd-compressed; read, never written.
	checkpointMagicZstd = "LBJCKPT2"
	// maxCheckpointBytes bounds what a read of the file allocates.
	maxCheckpointBytes = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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
	buf := checkpointFile{events: int64(events), prefix: hd.ix.end, crc: crc, name: filepath.Base(hd.path),
		frames: hd.ix.frames, data: data}.encode()
	path := filepath.Join(hd.dir, checkpointName)
	hd.ck, hd.ckInfo = nil, vfs.FileInfo{}
	if err := durable.On(vfs.Durable(b.fs)).ReplaceFile(path, buf, filePerm); err != nil {
		return handles.IOError(op, hd.id, "writing its checkpoint", err)
	}
	if fi, err := b.fs.Stat(path); err == nil { // else the next ReadCheckpoint reads the file
		hd.ck = parseCheckpointFile(buf, nil)
		hd.ckInfo = fi
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
	fi, err := b.fs.Stat(filepath.Join(hd.dir, checkpointName))
	if err != nil {
		return 0, nil, false, nil
	}
	if fi != hd.ckInfo {
		// Written since this handle read it (through another handle), or
		// the handle's log was replaced since.
		ck, info := b.readCheckpoint(hd.dir)
		if ck != nil && !ck.binds(hd.path, func(n int64) (uint32, bool) {
			crc, err := prefixCRC(hd.f, n)
			return crc, err == nil
		}) {
			ck = nil
		}
		hd.ck, hd.ckInfo = ck, info
	}
	ck := hd.ck
	if ck == nil || !hd.ix.endsAt(ck.events, ck.prefix) {
		return 0, nil, false, nil
	}
	return sdk.Offset(ck.events), ck.data, true, nil
}

// checkpointFile is a parsed checkpoint.v1.bin.
type checkpointFile struct {
	events, prefix int64
	crc            uint32
	name           string
	frames         []frameRef // zstd: the prefix's batch frames (size and count)
	data           []byte     // the host's checkpoint
}

// readCheckpoint reads and parses the checkpoint file in dir. ck is nil
// when there is none or it is damaged; info describes the file read (zero
// when there is none).
func (b *Backend) readCheckpoint(dir string) (ck *checkpointFile, info vfs.FileInfo) {
	f, err := b.fs.OpenFile(filepath.Join(dir, checkpointName), os.O_RDONLY, 0)
	if err != nil {
		return nil, vfs.FileInfo{}
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil || info.Size > maxCheckpointBytes {
		return nil, vfs.FileInfo{}
	}
	raw := make([]byte, info.Size)
	if err := readFull(f, raw, 0); err != nil {
		return nil, vfs.FileInfo{}
	}
	dec, err := b.decoder(true)
	if err != nil {
		return nil, info
	}
	ck = parseCheckpointFile(raw, dec)
	return ck, info
}

// binds reports whether ck is bound to the log at path: the same file
// name, and crcOf(ck.prefix), the CRC-32C of the log's bytes [0,
// ck.prefix), is the recorded one (ok false: the bytes could not be had).
func (ck *checkpointFile) binds(path string, crcOf func(n int64) (crc uint32, ok bool)) bool {
	if ck.name != filepath.Base(path) {
		return false
	}
	crc, ok := crcOf(ck.prefix)
	return ok && crc == ck.crc
}

// apply appends ck's frames to ix, which holds only the header unit, when
// they tile data from the header unit's end exactly to ck.prefix, each a
// structurally complete frame of its recorded size, and count ck.events
// events; otherwise it leaves ix as it is (the scan then checks the frames
// itself). The caller has checked the binding: the frames are the index of
// bytes that were checked when the checkpoint was written.
func (ck *checkpointFile) apply(data []byte, ix *index) {
	off, next := ix.end, int64(0)
	frames := make([]frameRef, 0, len(ck.frames))
	for _, f := range ck.frames {
		if f.size <= 0 || f.count <= 0 || f.size > ck.prefix-off {
			return
		}
		if n, st, _ := frameSpan(data[off:ck.prefix]); st != unitGood || int64(n) != f.size {
			return
		}
		frames = append(frames, frameRef{off: off, size: f.size, first: next, count: f.count})
		off, next = off+f.size, next+f.count
	}
	if off != ck.prefix || next != ck.events {
		return
	}
	ix.frames, ix.next, ix.end, ix.fromCheckpoint = frames, next, off, off
}

// encode lays ck out as above.
func (ck checkpointFile) encode() []byte {
	buf := make([]byte, 0, 48+len(ck.name)+8*len(ck.frames)+len(ck.data))
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
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(ck.data)))
	buf = append(buf, ck.data...)
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
}

// parseCheckpointFile reads the layout above, or the earlier one, whose
// payload it decompresses with dec (nil: refused); nil for anything else.
// Its data aliases b in the current layout.
func parseCheckpointFile(b []byte, dec *zstd.Decoder) *checkpointFile {
	if len(b) < len(checkpointMagic)+8+8+4+2+1+8+4 {
		return nil
	}
	compressed := string(b[:len(checkpointMagicZstd)]) == checkpointMagicZstd
	if string(b[:len(checkpointMagic)]) != checkpointMagic && (!compressed || dec == nil) {
		return nil
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(body):]) {
		return nil
	}
	ck := &checkpointFile{}
	d := body[len(checkpointMagic):]
	ck.events, ck.prefix = int64(binary.LittleEndian.Uint64(d)), int64(binary.LittleEndian.Uint64(d[8:]))
	ck.crc = binary.LittleEndian.Uint32(d[16:])
	n := int(binary.LittleEndian.Uint16(d[20:]))
	d = d[22:]
	if len(d) < n {
		return nil
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
		return nil
	}
	ck.frames = make([]frameRef, frames)
	for i := range ck.frames {
		size, ok1 := uvarint()
		count, ok2 := uvarint()
		if !ok1 || !ok2 {
			return nil
		}
		ck.frames[i] = frameRef{size: size, count: count}
	}
	if len(d) < 8 {
		return nil
	}
	size := binary.LittleEndian.Uint64(d)
	d = d[8:]
	if size != uint64(len(d)) || ck.events <= 0 || ck.prefix <= 0 {
		return nil
	}
	ck.data = d[:len(d):len(d)]
	if compressed {
		var err error
		if ck.data, err = dec.DecodeAll(d, nil); err != nil {
			return nil
		}
	}
	return ck
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

var _ sdk.Checkpointer = (*Backend)(nil)
