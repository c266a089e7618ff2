package multihost

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/events"
)

var (
	flagRounds = flag.Int("multihost.rounds", 20, "take-overs of the failover test")
	flagAgents = flag.Int("multihost.agents", 3, "sessions written at once in the failover test")
)

// takeOverLimit is how soon after a host's death another host must get
// each of its sessions.
const takeOverLimit = 2 * time.Second

// Failover by SIGKILL, round after round: agents append with flush to the
// host holding their sessions; the host is killed at a random moment; each
// agent resumes its session on the next host, which repairs the
// interrupted turn, and checks that every event it saw acknowledged is
// stored exactly once at its seq and that nothing else was written. A
// fresh host replaces the dead one, so every round kills the host that took
// over in the round before.
func TestFailoverTakeOvers(t *testing.T) {
	ctx := t.Context()
	cl := newCluster(t)
	cur, next := cl.start("h0"), cl.start("h1")
	agents := make([]*agent, *flagAgents)
	for i := range agents {
		id := fmt.Sprintf("agent-%d", i)
		s, err := cur.c.Create(ctx, id, events.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		agents[i] = newAgent(id, s)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var tookAll []time.Duration
	acked, repaired := 0, 0
	for round := range *flagRounds {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for _, a := range agents {
			wg.Go(func() { a.write(ctx, stop) })
		}
		time.Sleep(time.Duration(100+rng.IntN(300)) * time.Millisecond)
		killed := time.Now()
		cur.kill(t)
		close(stop)
		wg.Wait()

		took := make([]time.Duration, len(agents))
		errs := make([]error, len(agents))
		for i, a := range agents {
			wg.Go(func() { took[i], errs[i] = a.resumeOn(ctx, next, killed, takeOverLimit) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		tookAll = append(tookAll, took...)
		cur, next = next, cl.start(fmt.Sprintf("h%d", round+2))
	}
	for _, a := range agents {
		acked += len(a.acked)
		repaired += a.closers
	}
	slices.Sort(tookAll)
	p50, p90, worst := tookAll[len(tookAll)/2], tookAll[len(tookAll)*9/10], tookAll[len(tookAll)-1]
	t.Logf("%d take-overs × %d sessions: %d events acknowledged, 0 lost, 0 duplicated, 0 written by a dead host; %d repair events; take-over (kill → open on the next host) p50 %s, p90 %s, max %s",
		*flagRounds, len(agents), acked, repaired, p50.Round(time.Millisecond), p90.Round(time.Millisecond), worst.Round(time.Millisecond))
	if acked == 0 {
		t.Fatal("no event was acknowledged: the test checked nothing")
	}
}
