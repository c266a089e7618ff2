package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook"
	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// toolTurn is a whole turn written with the events builders: the model
// calls a tool, gets its result and answers.
func toolTurn(turn int) []events.Input {
	model := events.Model{Provider: "anthropic", Name: "claude-sonnet-4"}
	call := fmt.Sprintf("c%d", turn)
	return []events.Input{
		events.TurnStart(turn),
		events.UserText(events.TextMessage{ID: fmt.Sprintf("u%d", turn), Text: "list the files, é \"quoted\" 😀"}),
		events.StepStart(turn, 1),
		events.Assistant(turn, 1, events.Reply{ID: fmt.Sprintf("a%d-1", turn), Model: model,
			Content: []events.Block{events.ToolCallBlock(events.Call{ID: call, Name: "ls", Arguments: `{"path":"."}`})}}),
		events.ToolCall(turn, 1, events.Call{ID: call, Name: "ls", Arguments: `{"path":"."}`}),
		events.ToolResult(turn, 1, events.ToolText{ID: fmt.Sprintf("r%d", turn), CallID: call, Text: "README.md\ngo.mod"}),
		events.StepEnd(turn, 1),
		events.StepStart(turn, 2),
		events.AssistantText(turn, 2, model, events.TextMessage{ID: fmt.Sprintf("a%d-2", turn), Text: "There are two files."}),
		events.StepEnd(turn, 2),
		events.TurnEnd(turn, events.Completed()),
	}
}

// daemonClient returns a client of the daemon, closed when the test ends.
func daemonClient(t *testing.T) *client.Client {
	t.Helper()
	c := client.New(daemon, client.Options{})
	t.Cleanup(c.Close)
	return c
}

// sameInput reports whether a stored event is the input, byte for byte.
func sameInput(ev events.Event, in events.Input) bool {
	return ev.Type == in.Type && string(ev.Data) == string(in.Data) && ev.Ignorable == in.Ignorable &&
		(ev.SurfaceOp == nil) == (in.SurfaceOp == nil) && (ev.SurfaceOp == nil || *ev.SurfaceOp == *in.SurfaceOp) &&
		slices.Equal(ev.SourceEventSeqs, in.SourceEventSeqs)
}

// inProcess appends the same inputs to a session of an embedded runtime
// (package logbook, headless, over its own data directory), plain ones one
// by one, then each group as a group, and returns its messages, transcript
// and surface: the reads the daemon must answer identically.
func inProcess(t *testing.T, id string, plain []events.Input, groups ...[]events.Input) (msgs, transcript []string, surface []sdk.Seq) {
	t.Helper()
	ctx := context.Background()
	rt, err := logbook.Open(ctx, logbook.Options{Config: config.Headless(config.Overrides{DataDir: t.TempDir()}), PluginBinary: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := rt.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	s, err := rt.Create(ctx, id, events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range plain {
		if _, err := s.Append(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range groups {
		if _, err := s.AppendGroup(ctx, g...); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		msgs = append(msgs, string(m))
	}
	for _, e := range s.Transcript() {
		transcript = append(transcript, fmt.Sprintf("%d %s %s", e.Seq, e.Type, e.Message))
	}
	surface, err = s.Surface()
	if err != nil {
		t.Fatal(err)
	}
	return msgs, transcript, surface
}

// checkReads compares the daemon's reads of s with the in-process ones.
func checkReads(t *testing.T, what string, s *client.Session, msgs, transcript []string, surface []sdk.Seq) {
	t.Helper()
	ctx := context.Background()
	gotMsgs, err := s.Messages(ctx, client.ViewOptions{})
	if err != nil {
		t.Fatalf("%s: messages: %v", what, err)
	}
	var got []string
	for _, m := range gotMsgs {
		got = append(got, string(m))
	}
	if !slices.Equal(got, msgs) {
		t.Errorf("%s: messages\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(msgs, "\n"))
	}
	entries, err := s.Transcript(ctx)
	if err != nil {
		t.Fatalf("%s: transcript: %v", what, err)
	}
	got = nil
	for _, e := range entries {
		got = append(got, fmt.Sprintf("%d %s %s", e.Seq, e.Type, e.Message))
	}
	if !slices.Equal(got, transcript) {
		t.Errorf("%s: transcript\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(transcript, "\n"))
	}
	nodes, err := s.Surface(ctx, client.ViewOptions{})
	if err != nil || !slices.Equal(nodes, surface) {
		t.Errorf("%s: surface %v (%v), want %v", what, nodes, err, surface)
	}
}

// The handle against a real `logbook serve`: what the events builders
// make is stored and read back byte for byte; AppendGroup is all or
// nothing; the derived reads (messages, transcript, surface) are the
// in-process session's; Release, reads of the stored session and Resume
// with its repair.
func TestSessionHandleAgainstServe(t *testing.T) {
	c := daemonClient(t)
	ctx := context.Background()
	s, err := c.Create(ctx, "", events.CreateOptions{CWD: "/repo", AgentPreset: "coder"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Header(ctx)
	if err != nil || h.ID != s.ID() || s.ID() == "" || h.CWD != "/repo" || h.AgentPreset != "coder" || h.FormatVersion != sdk.FormatVersion {
		t.Fatalf("header %+v (%v)", h, err)
	}

	turn1 := toolTurn(1)
	evs, err := s.Append(ctx, turn1...)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if ev.Seq != sdk.Seq(i) || !sameInput(ev, turn1[i]) {
			t.Fatalf("event %d: %s, built %s %s", i, ev.Envelope, turn1[i].Type, turn1[i].Data)
		}
	}

	// A rejected member: nothing of the group is stored.
	_, err = s.AppendGroup(ctx, events.TurnStart(2), events.UserText(events.TextMessage{ID: "u2", Text: "a"}), events.UserText(events.TextMessage{ID: "u3", Text: "b"}))
	var ae *client.AppendError
	var se *sdk.Error
	if !errors.As(err, &ae) || ae.Appended != 0 || !errors.Is(err, sdk.CodeSurfaceOpNotAllowed) || !errors.As(err, &se) || !strings.Contains(se.Detail, "member 2") {
		t.Fatalf("a group with two surface members: %v", err)
	}
	// A stale expected length: SEQ_CONFLICT with both lengths, nothing stored.
	stale := sdk.Offset(3)
	_, err = s.AppendGroupAt(ctx, stale, events.TurnStart(2))
	if want, got, ok := client.SeqConflictOf(err); !ok || want != 3 || got != sdk.Offset(len(turn1)) {
		t.Fatalf("a group at a stale length: %v", err)
	}
	// Invalid UTF-8 in a member: refused by the client, nothing sent.
	bad := events.Input{Type: "x-test/bad", Data: json.RawMessage("\"a\xffb\""), Ignorable: true}
	if _, err = s.AppendGroup(ctx, events.TurnStart(2), bad); !errors.As(err, &ae) || ae.Appended != 0 || !errors.Is(err, sdk.CodeJSONInvalidUTF8) {
		t.Fatalf("a group with invalid UTF-8: %v", err)
	}
	stored, err := s.Events(ctx)
	if err != nil || len(stored) != len(turn1) {
		t.Fatalf("%d events after the refused groups (%v), want %d", len(stored), err, len(turn1))
	}
	for i, ev := range stored {
		if string(ev.Envelope) != string(evs[i].Envelope) {
			t.Fatalf("event %d reads back as %s, appended as %s", i, ev.Envelope, evs[i].Envelope)
		}
	}

	open := []events.Input{events.TurnStart(2), events.UserText(events.TextMessage{ID: "u2", Text: "and now?"})}
	group, err := s.AppendGroupAt(ctx, sdk.Offset(len(turn1)), open...)
	if err != nil || len(group) != 2 || group[0].Seq != sdk.Seq(len(turn1)) || !sameInput(group[1], open[1]) {
		t.Fatalf("group: %v (%v)", group, err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	msgs, transcript, surface := inProcess(t, s.ID(), turn1, open)
	checkReads(t, "live", s, msgs, transcript, surface)

	// Released, the session is read from storage through a fresh handle.
	if err := s.Release(ctx); err != nil {
		t.Fatal(err)
	}
	stored2 := c.Session(s.ID())
	checkReads(t, "stored", stored2, msgs, transcript, surface)
	if h2, err := stored2.Header(ctx); err != nil || !h2.Equal(h) {
		t.Fatalf("stored header %+v (%v), want %+v", h2, err, h)
	}

	// Resume closes the open turn 2.
	r, rep, err := c.Resume(ctx, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	n := len(turn1) + len(open)
	if rep.AlreadyLive || len(rep.Repaired) != 1 || rep.Repaired[0].Type != "turn/end" || rep.Repaired[0].Seq != sdk.Seq(n) ||
		!strings.Contains(string(rep.Repaired[0].Data), `"interrupted"`) || rep.NextSeq != sdk.Offset(n+2) || rep.Torn.Bytes != 0 {
		t.Fatalf("resume: %+v", rep)
	}
	all, err := r.Events(ctx)
	if err != nil || len(all) != n+2 || string(all[n].Envelope) != string(rep.Repaired[0].Envelope) {
		t.Fatalf("%d events after the resume (%v)", len(all), err)
	}
	if err := r.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// The reads of a session that does not exist say so.
func TestSessionReadsOfAMissingSession(t *testing.T) {
	s := daemonClient(t).Session("no-such-session")
	ctx := context.Background()
	_, err1 := s.Header(ctx)
	_, err2 := s.Transcript(ctx)
	_, err3 := s.Surface(ctx, client.ViewOptions{})
	_, err4 := s.Messages(ctx, client.ViewOptions{})
	_, err5 := s.Events(ctx)
	for i, err := range []error{err1, err2, err3, err4, err5} {
		if !errors.Is(err, sdk.CodeSessionNotFound) {
			t.Errorf("read %d: %v", i, err)
		}
	}
}
