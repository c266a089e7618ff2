package jsonl

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/frames"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// readThroughFrames reads the events [from, to) of the handle's session
// through ReadFrames, decoded by sdk/frames as the host decodes them.
func readThroughFrames(t testing.TB, b *Backend, o sdk.Opened, from, to sdk.Offset) (events [][]byte, framed bool, err error) {
	t.Helper()
	framed, err = frames.Read(t.Context(), b, o.Header.ID, o.Handle, from, to, func(c [][]byte) error {
		events = append(events, c...)
		return nil
	})
	return events, framed, err
}

// requireSameThroughFrames checks that a read of [from, to) through the
// frames gives what Read gave (events, or an error with readErr's code).
func requireSameThroughFrames(t testing.TB, b *Backend, o sdk.Opened, from, to sdk.Offset, want [][]byte, readErr error) {
	t.Helper()
	got, framed, err := readThroughFrames(t, b, o, from, to)
	switch {
	case !framed:
		t.Fatal("a zstd log was not read as frames")
	case sdk.CodeOf(err) != sdk.CodeOf(readErr) || (err == nil) != (readErr == nil):
		t.Fatalf("through the frames: %v; Read: %v", err, readErr)
	case err == nil && want != nil:
		requireEqualEvents(t, "through the frames", got, want)
	}
}

// ReadFrames hands over the stored frames of any range, and their decoding
// gives exactly what Read gives; a plain log is not framed.
func TestReadFramesDecodeToWhatReadReturns(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	all := storeEvents(t, b, "s", persistencetest.Batch(0, 700), persistencetest.Batch(700, 3), persistencetest.Batch(703, 40))
	o, err := b.Open(t.Context(), "s", sdk.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context(), o.Handle)
	for _, r := range [][2]sdk.Offset{{0, 743}, {0, 1}, {5, 700}, {699, 701}, {700, 703}, {702, 743}, {742, 743}} {
		got, framed, err := readThroughFrames(t, b, o, r[0], r[1])
		if err != nil || !framed {
			t.Fatalf("[%d, %d): framed %v, %v", r[0], r[1], framed, err)
		}
		requireEqualEvents(t, "through the frames", got, all[r[0]:r[1]])
	}

	plain := newTestBackend(t, Config{Root: t.TempDir(), Compression: CompressionNone})
	storeEvents(t, plain, "p", persistencetest.Batch(0, 5))
	po, err := plain.Open(t.Context(), "p", sdk.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(t.Context(), po.Handle)
	if framed, err := plain.ReadFrames(t.Context(), po.Handle, 0, -1, func([]sdk.Frame) error {
		t.Fatal("a plain log's read called fn")
		return nil
	}); framed || err != nil {
		t.Fatalf("a plain log: framed %v, %v; want false, nil", framed, err)
	}
}

// A byte flipped inside a stored frame after the open (which checked it)
// is found when the frame is decoded: CORRUPT_LOG at the frame's offset,
// through the frames as through Read, with and without a checkpoint. The
// first read after the open serves the bytes the open read, so it does
// not see the flip; the reads after it read the file.
func TestReadFramesFlippedByteIsCorruptLog(t *testing.T) {
	cfg, b := checkpointFixture(t, CompressionZstd)
	log := sessionLog(cfg, "s")
	intact := mustRead(t, log)
	for _, name := range []string{"with a checkpoint", "without"} {
		t.Run(name, func(t *testing.T) {
			check := func() {
				o, err := b.Open(t.Context(), "s", sdk.AccessRead)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close(t.Context(), o.Handle)
				hd, _ := b.handles.Get(o.Handle)
				fr := hd.ix.frames[1]
				flipped := slices.Clone(intact)
				flipped[fr.off+fr.size/2] ^= 0x10
				if err := os.WriteFile(log, flipped, 0o600); err != nil { // in place: the handle's file sees it
					t.Fatal(err)
				}
				defer os.WriteFile(log, intact, 0o600)
				if _, _, err := readThroughFrames(t, b, o, 0, o.NextSeq); err != nil {
					t.Fatalf("the first read, of the bytes the open read: %v", err)
				}
				_, _, err = readThroughFrames(t, b, o, 0, o.NextSeq)
				readErr := b.Read(t.Context(), o.Handle, 0, -1, func([][]byte) error { return nil })
				at := "byte offset " + strconv.FormatInt(fr.off, 10)
				for what, e := range map[string]error{"Read": readErr, "the frames": err} {
					if !sdkCode(e, sdk.CodeCorruptLog) || !strings.Contains(e.Error(), at) {
						t.Errorf("a flipped byte in the frame at %d, through %s: %v; want CORRUPT_LOG naming %s", fr.off, what, e, at)
					}
				}
			}
			if name == "without" {
				withoutCheckpoint(t, cfg, check)
			} else {
				check()
			}
		})
	}
}
