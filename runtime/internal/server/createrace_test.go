package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// createRacer is one process that creates sessions over the shared data
// directory: a `logbook serve` (through its client) or the CLI.
type createRacer struct {
	name string
	c    *client.Client // nil: the CLI
}

// create creates id; nil means this racer won.
func (r createRacer) create(ctx context.Context, dir, id string) error {
	if r.c != nil {
		_, err := r.c.Create(ctx, id, events.CreateOptions{})
		return err
	}
	_, err := runCLI(ctx, dir, "", "create", id)
	return err
}

// appendOne appends one event with flush; nil means it was acknowledged.
func (r createRacer) appendEvents(ctx context.Context, dir, id string, ins ...events.Input) error {
	if r.c != nil {
		return appendFlush(ctx, r.c, id, ins...)
	}
	var stdin strings.Builder
	for _, in := range ins {
		m := map[string]any{"type": in.Type, "data": json.RawMessage(in.Data)}
		if in.SurfaceOp != nil {
			m["surfaceOp"] = "append"
		}
		line, _ := json.Marshal(m)
		stdin.Write(line)
		stdin.WriteByte('\n')
	}
	_, err := runCLI(ctx, dir, stdin.String(), "append", id, "-")
	return err
}

// runCLI runs the logbook CLI over dir with stdin and returns its stdout;
// a failure carries the last stderr line.
func runCLI(ctx context.Context, dir, stdin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, logbookBin, append([]string{"--data", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		return nil, fmt.Errorf("logbook %s: %w: %s", strings.Join(args, " "), err, lines[len(lines)-1])
	}
	return stdout.Bytes(), nil
}

// lostCreate reports whether err is the refusal a racer that lost must get.
func lostCreate(err error) bool {
	return errors.Is(err, sdk.CodeSessionAlreadyExists) || strings.Contains(err.Error(), "SESSION_ALREADY_EXISTS")
}

// Two `logbook serve` processes and the CLI over one data directory race
// to create the same ids: exactly one wins each id, and the one event the
// winner appends with flush, once acknowledged, is stored. Some rounds let
// one racer finish its Create before the others start, which is the case
// where a Create that claimed nothing (and a server that replied before
// storing) let a second creator take the id and lose the first one's
// acknowledged event.
func TestCreateRaceAcrossProcessesHasOneWinner(t *testing.T) {
	const rounds = 50
	dir := t.TempDir()
	ctx := context.Background()
	var racers []createRacer
	for _, name := range []string{"serve A", "serve B"} {
		p := startServe(t, dir)
		c := client.New(p.addr, client.Options{})
		t.Cleanup(c.Close)
		racers = append(racers, createRacer{name: name, c: c})
	}
	racers = append(racers, createRacer{name: "CLI"})

	acked := map[string]string{} // id → the text of its acknowledged event
	wins := map[string]int{}
	for i := range rounds {
		id := fmt.Sprintf("race-%02d", i)
		errs := make([]error, len(racers))
		run := func(group []int) {
			var wg sync.WaitGroup
			start := make(chan struct{})
			for _, k := range group {
				wg.Go(func() {
					<-start
					errs[k] = racers[k].create(ctx, dir, id)
				})
			}
			close(start)
			wg.Wait()
		}
		// Round i%4: 0 releases all three at once; 1, 2 and 3 let racer
		// (i%4)−1 create first and then release the other two.
		if first := i%4 - 1; first < 0 {
			run([]int{0, 1, 2})
		} else {
			run([]int{first})
			var rest []int
			for k := range racers {
				if k != first {
					rest = append(rest, k)
				}
			}
			run(rest)
		}
		winner := -1
		for k, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("%s: both %s and %s created it", id, racers[winner].name, racers[k].name)
			case err == nil:
				winner = k
			case !lostCreate(err):
				t.Fatalf("%s: %s lost the race with %v; want SESSION_ALREADY_EXISTS", id, racers[k].name, err)
			}
		}
		if winner < 0 {
			t.Fatalf("%s: no racer created it: %v", id, errs)
		}
		text := fmt.Sprintf("acknowledged by %s in round %d", racers[winner].name, i)
		if err := racers[winner].appendEvents(ctx, dir, id, events.TurnStart(1), userInput("u-"+id, text)); err != nil {
			t.Fatalf("%s: the winner %s could not append: %v", id, racers[winner].name, err)
		}
		acked[id] = text
		wins[racers[winner].name]++
	}
	t.Logf("%d ids, one winner each: %v", rounds, wins)

	for id, text := range acked {
		out, err := runCLI(ctx, dir, "", "events", id)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(out, []byte(text)); n != 1 {
			t.Fatalf("%s: the acknowledged event %q is stored %d times; want once:\n%s", id, text, n, out)
		}
	}
}
