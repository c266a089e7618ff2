package jsonl

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// checkpointFixture stores 3 batches of session "s", writes a checkpoint
// covering them through a write handle and appends one more batch; it
// returns the config and the write handle's backend closed again.
func checkpointFixture(t *testing.T, compression string) (Config, *Backend) {
	t.Helper()
	cfg := Config{Root: t.TempDir(), Compression: compression}
	b := newTestBackend(t, cfg)
	storeEvents(t, b, "s", persistencetest.Batch(0, 10), persistencetest.Batch(10, 10), persistencetest.Batch(20, 10))
	o, err := b.Open(t.Context(), "s", sdk.AccessWrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteCheckpoint(t.Context(), o.Handle, 29, []byte("short")); !sdkCode(err, sdk.CodeInvalidBoundary) {
		t.Fatalf("a checkpoint of 29 of 30 durable events: %v, want INVALID_BOUNDARY", err)
	}
	if err := b.WriteCheckpoint(t.Context(), o.Handle, 30, []byte("the host's bytes")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(t.Context(), o.Handle, 30, persistencetest.Batch(30, 5)); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(t.Context(), o.Handle); err != nil {
		t.Fatal(err)
	}
	return cfg, b
}

func sdkCode(err error, code sdk.Code) bool { return sdk.CodeOf(err) == code }

// readCheckpoint opens s with access and returns its checkpoint.
func readCheckpoint(t *testing.T, b *Backend, access sdk.Access) (sdk.Offset, string, bool) {
	t.Helper()
	o, err := b.Open(t.Context(), "s", access)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context(), o.Handle)
	events, data, found, err := b.ReadCheckpoint(t.Context(), o.Handle)
	if err != nil {
		t.Fatal(err)
	}
	return events, string(data), found
}

// A checkpoint is read back while the log's bytes up to its events are
// the ones it was bound to (also after later appends, through read and
// write handles), and is ignored — never an error — once they are not: a
// flipped byte in the covered log, a flipped byte in the checkpoint file,
// or a log that is no longer the one it was written for.
func TestCheckpointBinding(t *testing.T) {
	for _, compression := range []string{CompressionZstd, CompressionNone} {
		t.Run(compression, func(t *testing.T) {
			cfg, b := checkpointFixture(t, compression)
			for _, access := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
				events, data, found := readCheckpoint(t, b, access)
				if !found || events != 30 || data != "the host's bytes" {
					t.Fatalf("access %d: checkpoint %d %q found %v; want 30 events", access, events, data, found)
				}
			}
			ckPath := filepath.Join(cfg.Root, EncodeID("s"), checkpointName)
			intact := mustRead(t, ckPath)
			for _, at := range []int{0, 9, len(intact) / 2, len(intact) - 1} {
				flipped := append([]byte(nil), intact...)
				flipped[at] ^= 1
				if err := os.WriteFile(ckPath, flipped, 0o600); err != nil {
					t.Fatal(err)
				}
				if _, _, found := readCheckpoint(t, b, sdk.AccessRead); found {
					t.Errorf("a checkpoint with byte %d flipped was read back", at)
				}
			}
			if err := os.WriteFile(ckPath, intact, 0o600); err != nil {
				t.Fatal(err)
			}
			// The covered log changes: its first event's time, same length.
			// Plain JSONL still loads (the line is valid), but the
			// checkpoint no longer matches it.
			if compression == CompressionNone {
				log := sessionLog(cfg, "s")
				data := mustRead(t, log)
				i := indexOf(data, []byte(`"time":`))
				data[i+len(`"time":`)] ^= 1 // one digit for another
				if err := os.WriteFile(log, data, 0o600); err != nil {
					t.Fatal(err)
				}
				if _, _, found := readCheckpoint(t, b, sdk.AccessRead); found {
					t.Error("the checkpoint of a log whose covered bytes changed was read back")
				}
			}
		})
	}
}

func indexOf(b, sub []byte) int {
	for i := 0; i+len(sub) <= len(b); i++ {
		if string(b[i:i+len(sub)]) == string(sub) {
			return i
		}
	}
	return -1
}

// openIndex opens s for reading and returns its Opened reply, its index,
// whether the open decoded the frames (took none from the checkpoint), and
// every event, or the open's error.
func openIndex(t *testing.T, b *Backend) (sdk.Opened, index, bool, [][]byte, error) {
	t.Helper()
	o, err := b.Open(t.Context(), "s", sdk.AccessRead)
	if err != nil {
		return o, index{}, false, nil, err
	}
	defer b.Close(t.Context(), o.Handle)
	hd, err := b.handles.Get(o.Handle)
	if err != nil {
		t.Fatal(err)
	}
	hd.mu.Lock()
	ix, decoded := hd.ix.snapshot(), hd.ix.fromCheckpoint == 0
	hd.mu.Unlock()
	var events [][]byte
	err = b.Read(t.Context(), o.Handle, 0, -1, func(c [][]byte) error {
		events = append(events, c...)
		return nil
	})
	requireSameThroughFrames(t, b, o, 0, o.NextSeq, events, err)
	return o, ix, decoded, events, err
}

// withoutCheckpoint runs f with s's checkpoint file moved away.
func withoutCheckpoint(t *testing.T, cfg Config, f func()) {
	t.Helper()
	path := filepath.Join(cfg.Root, EncodeID("s"), checkpointName)
	saved := mustRead(t, path)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	f()
	if err := os.WriteFile(path, saved, 0o600); err != nil {
		t.Fatal(err)
	}
}

// An open whose checkpoint matches takes the covered frames' index from it
// without decoding them, and ends with the index, the events and the reply
// of an open that scans every frame.
func TestCheckpointIndexesCoveredFrames(t *testing.T) {
	cfg, b := checkpointFixture(t, CompressionZstd)
	o, ix, decoded, events, err := openIndex(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if decoded {
		t.Error("the open decoded the frames its checkpoint covers")
	}
	withoutCheckpoint(t, cfg, func() {
		wo, wix, wdecoded, wevents, err := openIndex(t, b)
		if err != nil {
			t.Fatal(err)
		}
		if !wdecoded {
			t.Error("without a checkpoint, the open took frames from one")
		}
		if o.NextSeq != wo.NextSeq || o.Torn != wo.Torn {
			t.Errorf("through the checkpoint: next %d torn %+v; scanned: next %d torn %+v", o.NextSeq, o.Torn, wo.NextSeq, wo.Torn)
		}
		if !slices.Equal(ix.frames, wix.frames) || ix.next != wix.next || ix.end != wix.end || ix.hdrEnd != wix.hdrEnd {
			t.Errorf("through the checkpoint: index %+v; scanned: %+v", ix, wix)
		}
		requireEqualEvents(t, "through the checkpoint", events, wevents)
	})
}

// Damage inside the covered prefix (a flipped byte in a batch frame) or a
// log cut inside it is found as it is without a checkpoint: the binding no
// longer matches, the open scans every frame and reports the same
// CORRUPT_LOG or torn tail.
func TestCheckpointCoveredDamageScanned(t *testing.T) {
	cfg, b := checkpointFixture(t, CompressionZstd)
	_, ix, _, _, err := openIndex(t, b)
	if err != nil {
		t.Fatal(err)
	}
	log := sessionLog(cfg, "s")
	intact := mustRead(t, log)
	mid := ix.frames[1]
	flipped := slices.Clone(intact)
	flipped[mid.off+mid.size/2] ^= 0x10
	cut := intact[:mid.off+mid.size-2]
	for name, data := range map[string][]byte{"flipped": flipped, "cut": cut} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(log, data, 0o600); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(log, intact, 0o600)
			o, _, _, events, err := openIndex(t, b)
			withoutCheckpoint(t, cfg, func() {
				wo, _, _, wevents, werr := openIndex(t, b)
				if fmt.Sprint(err) != fmt.Sprint(werr) || o.Torn != wo.Torn || o.NextSeq != wo.NextSeq {
					t.Errorf("with the checkpoint: %v, torn %+v, next %d; without: %v, torn %+v, next %d", err, o.Torn, o.NextSeq, werr, wo.Torn, wo.NextSeq)
				}
				requireEqualEvents(t, "with the checkpoint", events, wevents)
			})
			switch name {
			case "flipped":
				if !sdkCode(err, sdk.CodeCorruptLog) {
					t.Errorf("a flipped byte in a covered frame: %v, want CORRUPT_LOG", err)
				}
			case "cut":
				if err != nil || o.Torn.FromSeq != 10 {
					t.Errorf("a log cut inside its second frame: %v, torn %+v; want a torn tail from seq 10", err, o.Torn)
				}
			}
		})
	}
}

// A checkpoint's frame table is checked where that costs nothing: one
// whose sizes do not tile the covered bytes is not used (the open scans
// the frames), and one whose event counts are wrong but add up is found
// by a read that decodes the frames (CORRUPT_LOG), never served: a whole
// read, or one of the event a wrong count would place first in a frame.
func TestCheckpointFrameTableChecked(t *testing.T) {
	cfg, b := checkpointFixture(t, CompressionZstd)
	path := filepath.Join(cfg.Root, EncodeID("s"), checkpointName)
	intact := mustRead(t, path)
	defer os.WriteFile(path, intact, 0o600)
	ck := parseCheckpointFile(intact, nil)
	if ck == nil || len(ck.frames) != 3 {
		t.Fatalf("the fixture's checkpoint: %+v; want 3 frames", ck)
	}
	rewrite := func(change func(fs []frameRef)) {
		c := *ck
		c.frames = slices.Clone(ck.frames)
		change(c.frames)
		if err := os.WriteFile(path, c.encode(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(func(fs []frameRef) { fs[0].size++; fs[1].size-- })
	o, _, decoded, events, err := openIndex(t, b)
	if err != nil || !decoded || o.NextSeq != 35 || len(events) != 35 {
		t.Errorf("sizes that do not tile the frames: %v, decoded %v, next %d, %d events; want a scan of 35", err, decoded, o.NextSeq, len(events))
	}
	for _, counts := range [][3]int64{{11, 9, 10}, {9, 11, 10}} {
		rewrite(func(fs []frameRef) {
			for i := range fs {
				fs[i].count = counts[i]
			}
		})
		if _, _, _, _, err := openIndex(t, b); !sdkCode(err, sdk.CodeCorruptLog) {
			t.Errorf("frame counts %v for frames of 10 events: %v, want CORRUPT_LOG", counts, err)
		}
		// A read of the one event a wrong count places first in a frame.
		at := sdk.Offset(counts[0])
		o, err := b.Open(t.Context(), "s", sdk.AccessRead)
		if err != nil {
			t.Fatal(err)
		}
		err = b.Read(t.Context(), o.Handle, at, 1, func([][]byte) error { return nil })
		requireSameThroughFrames(t, b, o, at, at+1, nil, err)
		b.Close(t.Context(), o.Handle)
		if !sdkCode(err, sdk.CodeCorruptLog) {
			t.Errorf("frame counts %v: a read of event %d: %v, want CORRUPT_LOG", counts, at, err)
		}
	}
}

// A checkpoint file of the earlier layout (magic LBJCKPT2, its payload
// zstd-compressed) is still read: ReadCheckpoint returns the host's
// checkpoint and the open takes the covered frames' index from it; the
// next checkpoint written replaces it with the current layout.
func TestCheckpointEarlierLayoutRead(t *testing.T) {
	for _, comp := range []string{CompressionNone, CompressionZstd} {
		t.Run(comp, func(t *testing.T) {
			cfg, b := checkpointFixture(t, comp)
			path := filepath.Join(cfg.Root, EncodeID("s"), checkpointName)
			ck := parseCheckpointFile(mustRead(t, path), nil)
			enc, err := zstd.NewWriter(nil)
			if err != nil {
				t.Fatal(err)
			}
			old := *ck
			old.data = enc.EncodeAll(ck.data, nil)
			raw := old.encode()
			copy(raw, checkpointMagicZstd)
			raw = binary.LittleEndian.AppendUint32(raw[:len(raw)-4], crc32.Checksum(raw[:len(raw)-4], castagnoli))
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			if events, data, found := readCheckpoint(t, b, sdk.AccessRead); !found || events != 30 || data != "the host's bytes" {
				t.Fatalf("the earlier layout: %d %q %v; want the checkpoint of 30 events", events, data, found)
			}
			if comp == CompressionZstd {
				if _, _, decoded, _, err := openIndex(t, b); err != nil || decoded {
					t.Fatalf("the earlier layout: %v, the open decoded the covered frames %v", err, decoded)
				}
			}
			o, err := b.Open(t.Context(), "s", sdk.AccessWrite)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.WriteCheckpoint(t.Context(), o.Handle, o.NextSeq, []byte("again")); err != nil {
				t.Fatal(err)
			}
			b.Close(t.Context(), o.Handle)
			if got := string(mustRead(t, path)[:len(checkpointMagic)]); got != checkpointMagic {
				t.Fatalf("the checkpoint written after it starts with %q, want %q", got, checkpointMagic)
			}
		})
	}
}

// ReadCheckpoint returns what the open read while the file is unchanged,
// and reads it again when it changed since: a checkpoint written through a
// write handle after a read handle's open is found through the read
// handle, and so is the one a handle wrote itself.
func TestReadCheckpointSeesALaterCheckpoint(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	storeEvents(t, b, "s", persistencetest.Batch(0, 10))
	r, err := b.Open(t.Context(), "s", sdk.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context(), r.Handle)
	if _, _, found, err := b.ReadCheckpoint(t.Context(), r.Handle); found || err != nil {
		t.Fatalf("before any checkpoint: found %v, %v", found, err)
	}
	w, err := b.Open(t.Context(), "s", sdk.AccessWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context(), w.Handle)
	if err := b.WriteCheckpoint(t.Context(), w.Handle, 10, []byte("ten")); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]string{"the read handle": r.Handle, "the writing handle": w.Handle} {
		if events, data, found, err := b.ReadCheckpoint(t.Context(), h); err != nil || !found || events != 10 || string(data) != "ten" {
			t.Errorf("%s: %d %q %v %v; want the checkpoint of 10 events written after its open", name, events, data, found, err)
		}
	}
}
