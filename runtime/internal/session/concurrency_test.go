package session

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrentSnapshotsStayFixed runs readers against an appender that
// appends, replaces and rewrites; under -race this proves readers and the
// commit section do not race, and every snapshot a reader took stays what
// it was.
func TestConcurrentSnapshotsStayFixed(t *testing.T) {
	g := newLogGen(t, 42)
	var done atomic.Bool
	var wg sync.WaitGroup
	for r := range 3 {
		wg.Go(func() {
			for !done.Load() {
				m, err := g.s.Messages()
				if err != nil {
					t.Error(err)
					return
				}
				v, _ := g.s.Surface()
				ev := g.s.Events()
				tr := g.s.Transcript()
				_, _ = g.s.RequestHeader()
				_ = g.s.ToolHistory()
				// Snapshot the snapshots, then check they did not move.
				n, first := m.Len(), ""
				if n > 0 {
					first = string(m.At(n - 1).JSON())
				}
				nodes := v.Nodes()
				if r == 0 && len(nodes) > 0 {
					v.IndexOf(nodes[len(nodes)-1])
				}
				evLen, trLen := ev.Len(), tr.Len()
				if m.Len() != n || (n > 0 && string(m.At(n-1).JSON()) != first) || v.Len() != len(nodes) || ev.Len() != evLen || tr.Len() != trLen {
					t.Error("a snapshot changed after it was returned")
					return
				}
				if m.LogLen() > g.s.Len() {
					t.Error("snapshot from the future")
					return
				}
			}
		})
	}
	for range 3000 {
		g.next()
	}
	done.Store(true)
	wg.Wait()
}
