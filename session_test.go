package logbook_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook"
	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// openMemory opens a runtime over the bundled memory backend, headless,
// closed when the test ends.
func openMemory(t *testing.T) *logbook.Runtime {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Parse([]byte("data_dir = "+strconv.Quote(dir)+"\npersistence \"memory\" {}\n"), filepath.Join(dir, "logbook.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := logbook.Open(context.Background(), logbook.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return rt
}

func requireCode(t *testing.T, err error, code sdk.Code) *sdk.Error {
	t.Helper()
	var e *sdk.Error
	if !errors.Is(err, code) || !errors.As(err, &e) {
		t.Fatalf("error %v; want %s", err, code)
	}
	return e
}

// Append keeps the inputs before the first rejected one and says how many
// it appended; AppendGroup appends all or nothing.
func TestAppendStopsAtTheFirstRejectedInput(t *testing.T) {
	ctx := context.Background()
	s, err := openMemory(t).Create(ctx, "s1", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := events.Input{Type: "turn/start", Data: []byte(`{"turn":"one"}`)}
	evs, err := s.Append(ctx, events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "hi"}), bad, events.TurnEnd(1, events.Completed()))
	e := requireCode(t, err, sdk.CodePayloadInvalid)
	if e.Index == nil || *e.Index != 2 || e.Meta["appended"] != "2" || e.Meta["firstSeq"] != "0" {
		t.Errorf("error %v, meta %v; want index 2, appended 2, firstSeq 0", e, e.Meta)
	}
	if len(evs) != 2 || evs[0].Seq != 0 || evs[1].Type != "user/message" || s.Len() != 2 {
		t.Fatalf("returned %d events, log %d; want the 2 before the rejected one", len(evs), s.Len())
	}
	_, err = s.AppendGroup(ctx, events.StepStart(1, 1), bad)
	if e := requireCode(t, err, sdk.CodePayloadInvalid); e.Index == nil || *e.Index != 1 || s.Len() != 2 {
		t.Errorf("group: error %v, log %d; want index 1 and nothing appended", e, s.Len())
	}
	evs, err = s.AppendGroup(ctx, events.StepStart(1, 1), events.StepEnd(1, 1))
	if err != nil || len(evs) != 2 || evs[1].Seq != 3 {
		t.Fatalf("group: %v, %v", evs, err)
	}
}

// AppendAt appends only to a log of the expected length.
func TestAppendAtRefusesAnotherLength(t *testing.T) {
	ctx := context.Background()
	s, err := openMemory(t).Create(ctx, "s1", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendAt(ctx, 0, events.TurnStart(1)); err != nil {
		t.Fatal(err)
	}
	_, err = s.AppendAt(ctx, 0, events.UserText(events.TextMessage{ID: "u1", Text: "again"}))
	if e := requireCode(t, err, sdk.CodeSeqConflict); e.Meta["expected"] != "0" || e.Meta["actual"] != "1" || e.Meta["appended"] != "0" {
		t.Errorf("meta %v", e.Meta)
	}
	_, err = s.AppendGroupAt(ctx, 0, events.UserText(events.TextMessage{ID: "u1", Text: "again"}))
	requireCode(t, err, sdk.CodeSeqConflict)
	if s.Len() != 1 {
		t.Fatalf("log %d after two refused appends; want 1", s.Len())
	}
	if _, err := s.AppendGroupAt(ctx, 1, events.UserText(events.TextMessage{ID: "u1", Text: "hi"})); err != nil {
		t.Fatal(err)
	}
}

// The read results are the stored bytes in the events package's types.
func TestReadsShareTheStoredEvents(t *testing.T) {
	ctx := context.Background()
	s, err := openMemory(t).Create(ctx, "s1", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "hi"})); err != nil {
		t.Fatal(err)
	}
	evs := s.Events()
	if len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	for _, ev := range evs {
		parsed, err := events.ParseEvent(ev.Envelope)
		if err != nil {
			t.Fatal(err)
		}
		if parsed.Seq != ev.Seq || parsed.Type != ev.Type || !bytes.Equal(parsed.Data, ev.Data) || (parsed.SurfaceOp == nil) != (ev.SurfaceOp == nil) {
			t.Errorf("event %d: %+v; its envelope says %+v", ev.Seq, ev, parsed)
		}
	}
	msgs, err := s.Messages()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("messages %s, %v", msgs, err)
	}
	tr := s.Transcript()
	if len(tr) != 1 || tr[0].Seq != 1 || !bytes.Equal(tr[0].Message, msgs[0]) {
		t.Errorf("transcript %+v; want the user message at seq 1", tr)
	}
	if surf, err := s.Surface(); err != nil || len(surf) != 1 || surf[0] != 1 {
		t.Errorf("surface %v, %v", surf, err)
	}
	if h := s.Header(); h.ID != "s1" || s.ID() != "s1" {
		t.Errorf("header %+v", h)
	}
}

// Release ends the session; Resume makes it live again with what was
// flushed; Inspect reads without writing and refuses writes.
func TestReleaseResumeInspect(t *testing.T) {
	ctx := context.Background()
	rt := openMemory(t)
	s, err := rt.Create(ctx, "s1", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "hi"})); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = s.Append(ctx, events.TurnEnd(1, events.Completed()))
	requireCode(t, err, sdk.CodeSessionClosed)

	v, irep, err := rt.Inspect(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if irep.Live || v.Len() != 3 { // the stored 2, then the turn/end a resume would close the turn with
		t.Errorf("inspect: live %v, %d events; want a stored view of 3", irep.Live, v.Len())
	}
	_, err = v.Append(ctx, events.TurnEnd(1, events.Completed()))
	requireCode(t, err, sdk.CodeSessionReadOnly)
	requireCode(t, v.Flush(ctx), sdk.CodeSessionReadOnly)
	if err := v.Release(ctx); err != nil {
		t.Errorf("a view's Release: %v", err)
	}

	r, rep, err := rt.Resume(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Closers != 1 || r.Len() != 4 {
		t.Errorf("resume: %d closers, %d events; want the interrupted turn closed and the marker, 4 events", rep.Closers, r.Len())
	}
	_, _, err = rt.Resume(ctx, "s1")
	requireCode(t, err, sdk.CodeAlreadyOwned)

	f, err := rt.Fork(ctx, "s1", nil, "s2")
	if err != nil {
		t.Fatal(err)
	}
	if h := f.Header(); h.ID != "s2" || !h.IsSeeded {
		t.Errorf("fork header %+v", h)
	}
	list, err := rt.List(ctx)
	if err != nil || len(list) != 2 {
		t.Errorf("list %+v, %v; want s1 and s2", list, err)
	}
}

// Create writes the caller's header fields and refuses bad ones.
func TestCreateWithHeaderFields(t *testing.T) {
	ctx := context.Background()
	rt := openMemory(t)
	s, err := rt.Create(ctx, "sub", events.CreateOptions{CWD: "/work", Origin: "subagent", DelegationDepth: 1, ParentSession: "top", AgentPreset: "review"})
	if err != nil {
		t.Fatal(err)
	}
	if h := s.Header(); h.CWD != "/work" || h.Origin != "subagent" || h.DelegationDepth != 1 || h.ParentSession != "top" || h.AgentPreset != "review" {
		t.Errorf("header %+v", h)
	}
	_, err = rt.Create(ctx, "rel", events.CreateOptions{CWD: "work"})
	requireCode(t, err, sdk.CodeSeedInvalid)
	_, err = rt.Create(ctx, "sub", events.CreateOptions{})
	requireCode(t, err, sdk.CodeSessionAlreadyExists)
}

// Compact replaces the head of the surface by a checkpoint with the
// configured summarizer (here the bundled one, offline); a headless
// configuration has none.
func TestCompact(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "logbook.hcl")
	src := `persistence "memory" {}
compaction { summarizer = "compactor-summary" }
plugin "compactor-summary" {
  config { mode = "extractive" }
}
`
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	rt, err := logbook.Open(ctx, logbook.Options{ConfigFile: file, DataDir: filepath.Join(dir, "data")})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	s, err := rt.Create(ctx, "s1", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	model := events.Model{Provider: "mock", Name: "m"}
	for turn := 1; turn <= 4; turn++ {
		id := strconv.Itoa(turn)
		call := events.ToolCallBlock(events.Call{ID: "c" + id, Name: "ls", Arguments: `{"path":"."}`})
		if _, err := s.Append(ctx, events.TurnStart(turn), events.UserText(events.TextMessage{ID: "u" + id, Text: "request " + id}), events.StepStart(turn, 1),
			events.Assistant(turn, 1, events.Reply{ID: "a" + id, Model: model, Content: []events.Block{call}}),
			events.ToolCall(turn, 1, events.Call{ID: "c" + id, Name: "ls", Arguments: `{"path":"."}`}),
			events.ToolResult(turn, 1, events.ToolText{ID: "r" + id, CallID: "c" + id, Text: strings.Repeat("file "+id+"\n", 400)}),
			events.StepEnd(turn, 1), events.TurnEnd(turn, events.Completed())); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := s.Messages()
	evs, err := s.Compact(ctx, service.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 4 || evs[0].Type != "compaction/start" || evs[len(evs)-1].Type != "compaction/end" {
		t.Fatalf("Compact appended %d events: %v", len(evs), evs)
	}
	after, _ := s.Messages()
	if len(after) >= len(before) {
		t.Errorf("%d messages after compaction, %d before", len(after), len(before))
	}

	h, err := openMemory(t).Create(ctx, "s1", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.Compact(ctx, service.CompactOptions{})
	requireCode(t, err, sdk.CodeConfigInvalid)
	_, err = s.Compact(ctx, service.CompactOptions{Start: new(sdk.Seq(1))})
	requireCode(t, err, sdk.CodeUsage)
}
