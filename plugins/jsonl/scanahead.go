package jsonl

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"
)

// Whole-log scans of zstd logs decode and check batch frames on several
// goroutines: a window of structurally good frames is found in order, its
// frames are decoded and checked at once, and the results are taken in
// order while every frame is good and continues the seqs. At the first
// frame that is not, scanAhead stops and scanFrames goes on one frame at a
// time from there, so a damaged log is classified and reported exactly as
// a sequential scan would.

// aheadWindowBytes bounds the content a window may decode at once.
const aheadWindowBytes = 64 << 20

// aheadFrame is one frame of a window and, once checked, its result.
type aheadFrame struct {
	off, n int    // the frame within the scanned data
	bound  uint64 // the most it can decode to
	first  int64  // the seq of its first line
	count  int64  // its line count
	ok     bool   // complete lines, valid envelopes with contiguous seqs
}

// scanAhead checks as many leading good batch frames of data as it can on
// several goroutines, appends them to ix and returns the bytes it
// consumed.
func (c *checker) scanAhead(data []byte, base int64, ix *index) int {
	workers := min(runtime.GOMAXPROCS(0), maxPieces)
	if workers < 2 || c.maxContent > 0 {
		return 0 // one core, or a fuzz target's bounded checker
	}
	subs := make([]checker, workers)
	for i := range subs {
		subs[i] = checker{dec: c.dec, scanning: true}
	}
	pos := 0
	var window []aheadFrame
	for {
		window = window[:0]
		var size uint64
		for p := pos; p < len(data) && len(window) < 8*workers && (len(window) < 2 || size < aheadWindowBytes); {
			n, bound, st, _ := frameBounds(data[p:])
			if st != unitGood {
				break
			}
			window = append(window, aheadFrame{off: p, n: n, bound: bound})
			size += bound
			p += n
		}
		if len(window) < 2 {
			return pos
		}
		c.checkWindow(data, base, window, subs)
		for i := range window {
			f := &window[i]
			if !f.ok || f.first != ix.next {
				return pos
			}
			ix.frames = append(ix.frames, frameRef{off: base + int64(f.off), size: int64(f.n), first: f.first, count: f.count})
			ix.next += f.count
			pos = f.off + f.n
			ix.end = base + int64(pos)
		}
	}
}

// checkWindow decodes and checks the frames of a window on one goroutine
// per checker in subs.
func (c *checker) checkWindow(data []byte, base int64, window []aheadFrame, subs []checker) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range subs {
		sc := &subs[w]
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(window) {
					return
				}
				sc.checkAhead(data, &window[i])
			}
		})
	}
	wg.Wait()
}

// checkAhead decodes one frame and checks that it holds complete lines,
// each a valid envelope, with seqs counting up from its first line's.
func (c *checker) checkAhead(data []byte, f *aheadFrame) {
	out, err := c.decodeFrame(data[f.off:f.off+f.n], f.bound)
	if err != nil {
		return
	}
	f.first, f.count, f.ok = c.selfContained(out)
}

// selfContained checks decoded frame content on its own: complete lines,
// each a valid envelope, with seqs counting up from its first line's. It
// returns that first seq and the line count.
func (c *checker) selfContained(out []byte) (first, count int64, ok bool) {
	if len(out) == 0 || out[len(out)-1] != '\n' {
		return 0, 0, false
	}
	first, _, reason := c.envelope(out[:bytes.IndexByte(out, '\n')])
	if reason != "" {
		return 0, 0, false
	}
	count, reason = c.contentEvents(out, first)
	return first, count, reason == ""
}
