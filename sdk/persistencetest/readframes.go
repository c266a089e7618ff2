package persistencetest

import (
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/frames"
)

var readFramesRules = []rule{
	{name: "frames-decode-to-what-read-returns-or-none-is-framed", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		fr := implementation[sdk.FrameReader](t, p)
		h, events := stored(t, p, "s", Batch(0, 3), Batch(3, 4), Batch(7, 3))
		closeHandle(t, p, h)
		r := open(t, p, "s", sdk.AccessRead)
		defer closeHandle(t, p, r.Handle)
		for _, w := range [][2]int{{0, 10}, {0, 1}, {2, 4}, {3, 7}, {5, 10}, {9, 10}} {
			var got [][]byte
			framed, err := frames.Read(t.Context(), fr, "s", r.Handle, sdk.Offset(w[0]), sdk.Offset(w[1]), func(c [][]byte) error {
				got = append(got, c...)
				return nil
			})
			switch {
			case err != nil:
				t.Fatalf("ReadFrames of [%d, %d), decoded: %v", w[0], w[1], err)
			case !framed && got != nil:
				t.Fatalf("ReadFrames of [%d, %d) answered framed false after handing over frames", w[0], w[1])
			case framed:
				requireEvents(t, "the decoded frames", got, events[w[0]:w[1]])
			}
		}
	}},
}
