package telemetry_test

import (
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/telemetry"
	"github.com/seed-e5e476df/logbook/sdk"
)

// BenchmarkTurnEnqueue measures what the feed pays per turn (its 11
// events folded, its 4 spans queued or dropped), calling the Pusher's
// listener methods directly: "queued" with a collector that answers at
// once, "dropped" with one that holds the upload and a queue of one, so
// that every turn is dropped.
func BenchmarkTurnEnqueue(b *testing.B) {
	const turns = 256
	s := create(b, newStore(b), "bench")
	appendTurns(b, s, 1, turns)
	// byTurn holds each turn's events, in order.
	var byTurn [][]session.Event
	for _, e := range s.Events().All() {
		if e.Type() == "turn/start" {
			byTurn = append(byTurn, nil)
		}
		byTurn[len(byTurn)-1] = append(byTurn[len(byTurn)-1], e)
	}
	for _, bc := range []struct {
		name  string
		hold  bool
		queue int
	}{{"queued", false, 100000}, {"dropped", true, 1}} {
		b.Run(bc.name, func(b *testing.B) {
			var hold chan struct{}
			if bc.hold {
				hold = make(chan struct{})
			}
			r := newReceiver(b, nil, nil, hold)
			// The Pusher's own store has no session: only the benchmark
			// calls its listener methods.
			p := start(b, newStore(b), r, telemetry.Options{Queue: bc.queue, Timeout: time.Minute})
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				t := i % turns
				if t == 0 {
					p.SessionLive(s) // a new fold from the first turn
				}
				for _, e := range byTurn[t] {
					p.Event(s, e)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
			st := p.Stats()
			b.ReportMetric(float64(st.Dropped)/float64(sdk.Offset(b.N)*spansPerTurn), "dropped/span")
			r.release()
			closePusher(b, p, 10*time.Second)
		})
	}
}
