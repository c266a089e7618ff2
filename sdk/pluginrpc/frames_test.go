package pluginrpc

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// frameLog hands over fixed frames; framed false stands for a plain log.
type frameLog struct {
	sdk.Persistence // only ReadFrames is called
	frames          []sdk.Frame
	framed          bool
}

func (b *frameLog) ReadFrames(_ context.Context, _ string, _ sdk.Offset, _ int64, fn func([]sdk.Frame) error) (bool, error) {
	if !b.framed {
		return false, nil
	}
	for i := 0; i < len(b.frames); i += 2 {
		if err := fn(b.frames[i:min(i+2, len(b.frames))]); err != nil {
			return true, err
		}
	}
	return true, nil
}

// Frames cross the connection unchanged, in order, also one larger than a
// message (in parts, joined again); a plain log and a backend without the
// capability are framed false with no frame.
func TestReadFramesOverTheConnection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{10, readChunkBytes/2 + 7, 3*readChunkBytes + 5, 1, readChunkBytes}
	var want []sdk.Frame
	first := sdk.Seq(0)
	for i, n := range sizes {
		data := make([]byte, n)
		for k := range data {
			data[k] = byte(rng.Uint32())
		}
		want = append(want, sdk.Frame{Offset: int64(100 * i), First: first, Count: int64(i + 1), Data: data})
		first += sdk.Seq(i + 1)
	}
	c := serveOver(t, &frameLog{frames: want, framed: true})
	var got []sdk.Frame
	framed, err := c.ReadFrames(t.Context(), "h", 0, -1, func(fs []sdk.Frame) error {
		got = append(got, fs...)
		return nil
	})
	if err != nil || !framed {
		t.Fatalf("ReadFrames: framed %v, %v", framed, err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d frames; want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Offset != w.Offset || g.First != w.First || g.Count != w.Count || !bytes.Equal(g.Data, w.Data) {
			t.Fatalf("frame %d: offset %d, first %d, count %d, %d bytes; want %d, %d, %d, %d bytes",
				i, g.Offset, g.First, g.Count, len(g.Data), w.Offset, w.First, w.Count, len(w.Data))
		}
	}

	for name, b := range map[string]sdk.Persistence{"a plain log": &frameLog{}, "no capability": plainLog{}} {
		c := serveOver(t, b)
		framed, err := c.ReadFrames(t.Context(), "h", 0, -1, func([]sdk.Frame) error {
			t.Fatalf("%s: fn was called", name)
			return nil
		})
		if framed || err != nil {
			t.Fatalf("%s: framed %v, %v; want false, nil", name, framed, err)
		}
	}
}
