package frames_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/frames"
)

// stored is a FrameReader over fixed frames: it hands over those that
// hold events of the range, one by one.
type stored []sdk.Frame

func (s stored) ReadFrames(_ context.Context, _ string, from sdk.Offset, n int64, fn func([]sdk.Frame) error) (bool, error) {
	if s == nil {
		return false, nil
	}
	for i, f := range s {
		if int64(f.First)+f.Count <= int64(from) || int64(f.First) >= int64(from)+n {
			continue
		}
		if err := fn(s[i : i+1]); err != nil {
			return true, err
		}
	}
	return true, nil
}

func lines(first, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"seq":%d,"time":0,"type":"x","data":null}`+"\n", first+i)
	}
	return b.String()
}

// frame compresses content as the JSONL backend does (with a content
// checksum), or without the checksum.
func frame(t testing.TB, first, count int, content string, checksum bool) sdk.Frame {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(checksum))
	if err != nil {
		t.Fatal(err)
	}
	return sdk.Frame{Offset: int64(1000 * first), First: sdk.Seq(first), Count: int64(count), Data: enc.EncodeAll([]byte(content), nil)}
}

func read(t *testing.T, s stored, from, to sdk.Offset) (string, bool, error) {
	t.Helper()
	var b strings.Builder
	framed, err := frames.Read(t.Context(), s, "s", "h", from, to, func(c [][]byte) error {
		if len(c) > frames.ChunkEvents {
			t.Fatalf("a chunk of %d events", len(c))
		}
		for _, e := range c {
			b.Write(e)
			b.WriteByte('\n')
		}
		return nil
	})
	return b.String(), framed, err
}

func TestReadDecodesTheRange(t *testing.T) {
	s := stored{frame(t, 0, 1000, lines(0, 1000), true), frame(t, 1000, 5, lines(1000, 5), true), frame(t, 1005, 20, lines(1005, 20), true)}
	for _, r := range [][2]int{{0, 1025}, {3, 1001}, {1000, 1005}, {1004, 1006}, {1024, 1025}} {
		got, framed, err := read(t, s, sdk.Offset(r[0]), sdk.Offset(r[1]))
		if err != nil || !framed || got != lines(r[0], r[1]-r[0]) {
			t.Fatalf("[%d, %d): framed %v, %v, %d bytes; want %d", r[0], r[1], framed, err, len(got), len(lines(r[0], r[1]-r[0])))
		}
	}
	if _, framed, err := read(t, nil, 0, 5); framed || err != nil {
		t.Fatalf("an unframed log: framed %v, %v; want false, nil", framed, err)
	}
}

// Every check of a frame is CORRUPT_LOG naming the session and the frame's
// offset; the chunks before the bad frame were delivered.
func TestReadRefusesBadFrames(t *testing.T) {
	good := frame(t, 0, 10, lines(0, 10), true)
	flipped := frame(t, 10, 10, lines(10, 10), true)
	flipped.Data = append([]byte(nil), flipped.Data...)
	flipped.Data[len(flipped.Data)-6] ^= 0x01
	for name, bad := range map[string]sdk.Frame{
		"no content checksum":   frame(t, 10, 10, lines(10, 10), false),
		"a flipped byte":        flipped,
		"fewer lines":           frame(t, 10, 10, lines(10, 9), true),
		"more lines":            frame(t, 10, 10, lines(10, 11), true),
		"no final newline":      frame(t, 10, 10, strings.TrimSuffix(lines(10, 10), "\n"), true),
		"another first seq":     frame(t, 10, 10, lines(11, 10), true),
		"not the expected seqs": frame(t, 12, 10, lines(12, 10), true),
		"not a frame":           {Offset: 10000, First: 10, Count: 10, Data: []byte("{\"seq\":10}\n")},
	} {
		got, _, err := read(t, stored{good, bad}, 0, 20)
		e := sdk.ErrorOf(err)
		if e == nil || e.Code != sdk.CodeCorruptLog || e.SessionID != "s" || !strings.Contains(e.Error(), fmt.Sprintf("byte offset %d", bad.Offset)) {
			t.Errorf("%s: %v; want CORRUPT_LOG of session s naming byte offset %d", name, err, bad.Offset)
		}
		if got != lines(0, 10) {
			t.Errorf("%s: delivered %q before the error; want the good frame", name, got)
		}
	}
	if _, _, err := read(t, stored{good}, 0, 20); sdk.CodeOf(err) != sdk.CodeCorruptLog {
		t.Errorf("frames that end before the range: %v; want CORRUPT_LOG", err)
	}
}

// Reading a backend's frames, decoded on the reader's cores.
func ExampleRead() {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	content := `{"seq":0,"time":0,"type":"a","data":1}` + "\n" + `{"seq":1,"time":0,"type":"b","data":2}` + "\n"
	backend := stored{{Offset: 120, First: 0, Count: 2, Data: enc.EncodeAll([]byte(content), nil)}}
	framed, err := frames.Read(context.Background(), backend, "s", "handle", 0, 2, func(events [][]byte) error {
		for _, e := range events {
			fmt.Println(string(e))
		}
		return nil
	})
	fmt.Println(framed, err)
	// Output:
	// {"seq":0,"time":0,"type":"a","data":1}
	// {"seq":1,"time":0,"type":"b","data":2}
	// true <nil>
}
