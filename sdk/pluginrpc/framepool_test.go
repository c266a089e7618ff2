package pluginrpc

import "testing"

// The frame pool hands out buffers of the asked length in power-of-two
// capacities, reuses what comes back, and ignores buffers it did not make.
func TestFramePool(t *testing.T) {
	p := &framePool{}
	for _, n := range []int{0, 1, 9, 16 << 10, 16<<10 + 1, 1 << 20, 1<<20 + 1} {
		b := p.Get(n)
		if len(*b) != n {
			t.Fatalf("Get(%d) has length %d", n, len(*b))
		}
		if c := cap(*b); n <= 1<<20 && c&(c-1) != 0 {
			t.Fatalf("Get(%d) has capacity %d, not a power of two", n, c)
		}
		p.Put(b)
	}
	odd := make([]byte, 3)
	p.Put(&odd) // not a power of two: dropped
	huge := make([]byte, 0, 2<<20)
	p.Put(&huge) // above the largest class: dropped
	b := p.Get(100)
	(*b)[0] = 'x'
	p.Put(b)
	if again := p.Get(120); cap(*again) != 128 || len(*again) != 120 {
		t.Fatalf("Get(120) after a 128-byte buffer came back: len %d cap %d", len(*again), cap(*again))
	}
}
