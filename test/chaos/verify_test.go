package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// cliTimeout bounds one CLI run.
const cliTimeout = 2 * time.Minute

// runCLI runs the logbook binary with args and stdin.
func runCLI(ctx context.Context, stdin string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(ctx, cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, logbookBin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// findings are what one verification found in one session, or in all.
type findings struct {
	lost     []string // acknowledged payload ids missing or at another seq
	dup      []string // payload ids stored more than once (one entry per extra copy)
	half     []string // sessions an operation left half-made ("kind:id")
	problems []string // every other broken rule: gaps in seqs, foreign events, a log that does not load
}

func (f *findings) add(g findings) {
	f.lost = append(f.lost, g.lost...)
	f.dup = append(f.dup, g.dup...)
	f.half = append(f.half, g.half...)
	f.problems = append(f.problems, g.problems...)
}

// verify reads the sessions of the run with `logbook events` and checks
// each against what its clients were acknowledged: every one when all is
// set, else those a fault may have changed since their last verification
// (all but the retired ones read once after they retired).
func (h *harness) verify(ctx context.Context, all bool) findings {
	var f findings
	for _, r := range h.records() {
		if !all && r.isSettled() {
			continue
		}
		f.add(h.verifySession(ctx, r))
		r.settle()
	}
	return f
}

// verifySession checks one stored session: it loads; its seqs run 0, 1, …;
// every acknowledged event is there exactly once at its acknowledged seq;
// no event is stored twice; every event was sent by its clients; every
// operation is stored at most once, with the number of events it was sent
// with, and every acknowledged one at its acknowledged first seq.
func (h *harness) verifySession(ctx context.Context, r *record) findings {
	var f findings
	sent, acked := r.snapshot()
	opSent, opAcked := r.ops()
	lines, found, err := h.readLog(ctx, "", r.id)
	if err != nil || !found {
		if len(acked) == 0 && err == nil {
			return f // created in memory only, nothing acknowledged
		}
		f.problems = append(f.problems, fmt.Sprintf("session %s does not load (found %v): %v", r.id, found, err))
		for pid := range acked {
			f.lost = append(f.lost, pid)
		}
		return f
	}
	at, opAt := map[string][]int64{}, map[string][]int64{}
	next := int64(0)
	for _, line := range lines {
		s, err := parseEnvelope([]byte(line))
		if err != nil {
			f.problems = append(f.problems, fmt.Sprintf("session %s: %v", r.id, err))
			continue
		}
		if s.seq != next {
			f.problems = append(f.problems, fmt.Sprintf("session %s: seq %d follows seq %d", r.id, s.seq, next-1))
		}
		next = s.seq + 1
		if s.op != "" {
			opAt[s.op] = append(opAt[s.op], s.seq)
			if n, ok := opSent[s.op]; !ok || n != s.opCount {
				f.problems = append(f.problems, fmt.Sprintf("session %s: operation %s of %d events at seq %d was never sent by its clients (sent: %v, %d events)", r.id, s.op, s.opCount, s.seq, ok, n))
			}
		}
		if s.pid == "" {
			continue
		}
		if !sent[s.pid] {
			f.problems = append(f.problems, fmt.Sprintf("session %s: event %s at seq %d was never sent by its clients (a second writer got in)", r.id, s.pid, s.seq))
		}
		at[s.pid] = append(at[s.pid], s.seq)
	}
	for pid, seqs := range at {
		for range seqs[1:] {
			f.dup = append(f.dup, pid)
		}
		if len(seqs) > 1 {
			f.problems = append(f.problems, fmt.Sprintf("session %s: event %s stored %d times, at seqs %v", r.id, pid, len(seqs), seqs))
		}
	}
	for op, seqs := range opAt {
		if len(seqs) > 1 {
			f.problems = append(f.problems, fmt.Sprintf("session %s: operation %s stored %d times, at seqs %v", r.id, op, len(seqs), seqs))
		}
	}
	for op, seq := range opAcked {
		if !slices.Contains(opAt[op], seq) {
			f.problems = append(f.problems, fmt.Sprintf("session %s: acknowledged operation %s (first seq %d) is stored at seqs %v", r.id, op, seq, opAt[op]))
		}
	}
	for pid, seq := range acked {
		seqs, ok := at[pid]
		switch {
		case !ok:
			f.lost = append(f.lost, pid)
			f.problems = append(f.problems, fmt.Sprintf("session %s: acknowledged event %s (seq %d) is not stored", r.id, pid, seq))
		case !slices.Contains(seqs, seq):
			f.lost = append(f.lost, pid)
			f.problems = append(f.problems, fmt.Sprintf("session %s: acknowledged event %s is stored at seqs %v, not at its acknowledged seq %d", r.id, pid, seqs, seq))
		}
	}
	return f
}

// verifyListing checks that `logbook sessions` lists every session of the
// run and reads each without an error.
func (h *harness) verifyListing(ctx context.Context) []string {
	var problems []string
	listed := map[string]bool{}
	if h.b.store == memoryStore {
		var err error
		if listed, err = h.listed(ctx, ""); err != nil {
			return []string{fmt.Sprintf("List: %v", err)}
		}
	} else {
		stdout, stderr, err := h.cli(ctx, "", "--json", "sessions")
		if err != nil {
			return []string{fmt.Sprintf("logbook sessions: %v: %s", err, tail(stderr, 2000))}
		}
		var list []struct {
			ID     string `json:"id"`
			Events *int64 `json:"events"`
			Error  string `json:"error"`
		}
		if err := json.Unmarshal([]byte(stdout), &list); err != nil {
			return []string{fmt.Sprintf("logbook sessions --json: %v: %.500s", err, stdout)}
		}
		for _, e := range list {
			listed[e.ID] = true
			if e.Error != "" {
				problems = append(problems, fmt.Sprintf("logbook sessions: session %s cannot be read: %s", e.ID, e.Error))
			}
		}
	}
	for _, r := range h.records() {
		if _, acked := r.snapshot(); len(acked) > 0 && !listed[r.id] {
			problems = append(problems, fmt.Sprintf("logbook sessions does not list session %s", r.id))
		}
	}
	return problems
}
