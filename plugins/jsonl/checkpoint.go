package jsonl

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
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
//	magic "LBJCKPT1"
//	events, prefix uint64 LE    the events covered and the log bytes they end at
//	prefixCRC uint32 LE         CRC-32C of the log's bytes [0, prefix)
//	name uint16 LE + bytes      the log file it is bound to (events.v<N>.jsonl[.zst])
//	size uint64 LE + bytes      the host's checkpoint, zstd-compressed
//	crc uint32 LE               CRC-32C of everything before it
//
// The binding is checked on every read: the covered events must end
// exactly at prefix in the current log, and the log's bytes up to there
// must have the recorded CRC. Reading a 24 MB compressed log's prefix
// costs a few milliseconds, far less than checking its envelopes again.
// The file is replaced durably (temp file, fsync, rename, directory fsync)
// after the events it covers are durable, so it never runs ahead of the log.

const (
	checkpointName  = "checkpoint.v1.bin"
	checkpointMagic = "LBJCKPT1"
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
	packed := enc.EncodeAll(data, nil)
	name := filepath.Base(hd.path)
	buf := make([]byte, 0, 40+len(name)+len(packed))
	buf = append(buf, checkpointMagic...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(events))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(hd.ix.end))
	buf = binary.LittleEndian.AppendUint32(buf, crc)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(name)))
	buf = append(buf, name...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(packed)))
	buf = append(buf, packed...)
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
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
	events, prefix, crc, name, packed, ok := parseCheckpointFile(raw)
	if !ok || name != filepath.Base(hd.path) || !hd.ix.endsAt(events, prefix) {
		return 0, nil, false, nil
	}
	if prefix != hd.vouched { // else the open checked this very binding
		if got, err := prefixCRC(hd.f, prefix); err != nil || got != crc {
			return 0, nil, false, nil
		}
	}
	dec, err := b.decoder(true)
	if err != nil {
		return 0, nil, false, err
	}
	data, err := dec.DecodeAll(packed, nil)
	if err != nil {
		return 0, nil, false, nil
	}
	return sdk.Offset(events), data, true, nil
}

// trustedPrefix is the length of the log prefix the session's checkpoint
// vouches for: its bytes have the CRC the checkpoint recorded when they
// had been checked and were durable, so a scan need not check their
// envelopes again (only decode and count them, which also proves the
// covered events end where the checkpoint says). 0 when there is no usable
// checkpoint. data is the whole log file; hd.mu is held.
func (hd *handle) trustedPrefix(data []byte, readFile func(string) ([]byte, error)) int64 {
	raw, err := readFile(filepath.Join(hd.dir, checkpointName))
	if err != nil {
		return 0
	}
	_, prefix, crc, name, _, ok := parseCheckpointFile(raw)
	if !ok || name != filepath.Base(hd.path) || prefix > int64(len(data)) || crc32.Checksum(data[:prefix], castagnoli) != crc {
		return 0
	}
	return prefix
}

// parseCheckpointFile reads the layout above; ok is false for anything
// else.
func parseCheckpointFile(b []byte) (events, prefix int64, crc uint32, name string, packed []byte, ok bool) {
	if len(b) < len(checkpointMagic)+8+8+4+2+8+4 || string(b[:len(checkpointMagic)]) != checkpointMagic {
		return
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(body):]) {
		return
	}
	d := body[len(checkpointMagic):]
	events, prefix = int64(binary.LittleEndian.Uint64(d)), int64(binary.LittleEndian.Uint64(d[8:]))
	crc = binary.LittleEndian.Uint32(d[16:])
	n := int(binary.LittleEndian.Uint16(d[20:]))
	d = d[22:]
	if len(d) < n+8 {
		return
	}
	name, d = string(d[:n]), d[n:]
	size := binary.LittleEndian.Uint64(d)
	d = d[8:]
	if size != uint64(len(d)) || events <= 0 || prefix <= 0 {
		return
	}
	return events, prefix, crc, name, d, true
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
