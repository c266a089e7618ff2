package multihost

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// agent is one client writing turns to its own session with flush and an
// expected seq, from whichever host holds the session, and remembering
// what it saw acknowledged.
type agent struct {
	id    string
	s     *client.Session
	next  sdk.Offset // the log length its next append expects
	turn  int
	phase int // 0: the turn's opening batch is next, 1: its reply, 2: its close
	n     int // texts written

	acked     map[sdk.Seq][]byte // seq → the envelope it was acknowledged with
	accounted map[sdk.Seq]bool   // seqs stored by a resume or by a batch whose reply was lost
	failed    int                // inputs of the batch that failed (it may be stored), 0 if none
	closers   int                // events resumes appended
}

func newAgent(id string, s *client.Session) *agent {
	return &agent{id: id, s: s, turn: 1, acked: map[sdk.Seq][]byte{}, accounted: map[sdk.Seq]bool{}}
}

// text returns a text no other event of the test carries.
func (a *agent) text() string {
	a.n++
	return fmt.Sprintf("%s text %d", a.id, a.n)
}

// textPattern finds the texts of text in an event's data.
var textPattern = regexp.MustCompile(`agent-[0-9]+ text [0-9]+`)

// batch is the agent's next batch: a turn opens with a prompt, the model
// answers in a step, the turn closes.
func (a *agent) batch() []events.Input {
	model := events.Model{Provider: "test", Name: "m"}
	switch a.phase {
	case 0:
		t := a.text()
		return []events.Input{events.TurnStart(a.turn), events.UserText(events.TextMessage{ID: fmt.Sprintf("u%d", a.n), Text: t})}
	case 1:
		t := a.text()
		return []events.Input{events.StepStart(a.turn, 1), events.AssistantText(a.turn, 1, model, events.TextMessage{ID: fmt.Sprintf("a%d", a.n), Text: t})}
	}
	return []events.Input{events.StepEnd(a.turn, 1), events.TurnEnd(a.turn, events.Completed())}
}

// write appends batches until stop closes or an append fails (the host
// died or fenced the session): the failed batch may or may not be stored.
func (a *agent) write(ctx context.Context, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		ins := a.batch()
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		evs, err := a.s.AppendRetry(cctx, a.next, ins, client.RetryOptions{Flush: true, MaxAttempts: 1})
		cancel()
		if err != nil {
			a.failed = len(ins)
			return
		}
		for _, e := range evs {
			a.acked[e.Seq] = e.Envelope
		}
		a.next += sdk.Offset(len(evs))
		if a.phase = (a.phase + 1) % 3; a.phase == 0 {
			a.turn++
		}
	}
}

// resumeOn opens the agent's session on host h, retrying ALREADY_OWNED
// (the dead host's lock is not gone yet) until limit after since, verifies
// the log and returns how long after since the open succeeded. The repair
// must close a turn the failed host left open.
func (a *agent) resumeOn(ctx context.Context, h *host, since time.Time, limit time.Duration) (time.Duration, error) {
	start := since
	for {
		s, rep, err := h.c.Resume(ctx, a.id)
		if err == nil {
			took := time.Since(start)
			a.s = s
			a.closers += len(rep.Repaired)
			return took, a.verify(ctx, rep)
		}
		if sdk.CodeOf(err) != sdk.CodeAlreadyOwned || time.Since(start) > limit {
			return 0, fmt.Errorf("resuming %s on host %s: %w after %s", a.id, h.name, err, time.Since(start))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// verify checks the stored log after a resume: every acknowledged event
// is there exactly at its seq, byte for byte; no text is stored twice;
// every event is the agent's own or the resumes'; a turn left open was
// closed. It moves the agent past what is stored.
func (a *agent) verify(ctx context.Context, rep client.RepairReport) error {
	evs, err := a.s.Events(ctx)
	if err != nil {
		return fmt.Errorf("reading %s: %w", a.id, err)
	}
	for seq, env := range a.acked {
		if int(seq) >= len(evs) {
			return fmt.Errorf("%s: acknowledged seq %d lost: the log holds %d events", a.id, seq, len(evs))
		}
		if string(evs[seq].Envelope) != string(env) {
			return fmt.Errorf("%s: seq %d stored as %s; acknowledged as %s", a.id, seq, evs[seq].Envelope, env)
		}
	}
	repaired := map[sdk.Seq]bool{}
	for _, e := range rep.Repaired {
		repaired[e.Seq] = true
	}
	seen := map[string]bool{}
	openTurn := false
	for _, e := range evs {
		switch {
		case a.acked[e.Seq] != nil || a.accounted[e.Seq]:
		case e.Seq >= sdk.Seq(a.next) && e.Seq < sdk.Seq(a.next)+sdk.Seq(a.failed):
			a.accounted[e.Seq] = true // the failed batch was stored before its reply was lost
		case repaired[e.Seq] || (e.Seq == sdk.Seq(rep.NextSeq)-1 && strings.HasPrefix(e.Type, "session/")):
			a.accounted[e.Seq] = true // the resume's closers and its lifecycle marker
		default:
			return fmt.Errorf("%s: seq %d %s was written by none of the agent's hosts' acknowledged appends, its lost batch or the resume", a.id, e.Seq, e.Envelope)
		}
		for _, text := range textPattern.FindAllString(string(e.Data), -1) {
			if seen[text] {
				return fmt.Errorf("%s: %q stored twice (again at seq %d)", a.id, text, e.Seq)
			}
			seen[text] = true
		}
		switch e.Type {
		case "turn/start":
			openTurn = true
		case "turn/end":
			openTurn = false
		}
	}
	if openTurn {
		return fmt.Errorf("%s: the resume on a new host left turn %d open", a.id, a.turn)
	}
	a.next = sdk.Offset(len(evs))
	if a.phase != 0 || a.failed > 0 {
		a.turn++ // the resume closed it, or the closing batch was lost with the host
	}
	a.phase, a.failed = 0, 0
	return nil
}
