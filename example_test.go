package logbook_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/seed-e5e476df/logbook"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The whole story: open a runtime on the embedded default configuration
// (JSONL files under the data directory), record one turn, make it
// durable, read the model messages back, release the session, resume it
// as after a restart and fork it. The bundled plugins run from this
// program; its main calls logbook.ServePlugins first (here the test
// binary's TestMain does).
func Example() {
	dir, err := os.MkdirTemp("", "logbook-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	rt, err := logbook.Open(ctx, logbook.Options{DataDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)

	s, err := rt.Create(ctx, "s1", events.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	model := events.Model{Provider: "anthropic", Name: "claude-sonnet-4"}
	if _, err := s.Append(ctx,
		events.TurnStart(1),
		events.UserText(events.TextMessage{ID: "u1", Text: "list the files"}),
		events.StepStart(1, 1),
		events.AssistantText(1, 1, model, events.TextMessage{ID: "a1", Text: "README.md and go.mod"}),
		events.StepEnd(1, 1),
		events.TurnEnd(1, events.Completed())); err != nil {
		log.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil { // durable on every backend
		log.Fatal(err)
	}
	msgs, err := s.Messages()
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Println(string(m))
	}
	if err := s.Release(ctx); err != nil {
		log.Fatal(err)
	}

	s, rep, err := rt.Resume(ctx, "s1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("resumed %s: %d events, %d closers\n", s.ID(), s.Len(), rep.Closers)

	at := sdk.Seq(1) // up to and including the user message
	f, err := rt.Fork(ctx, "s1", &at, "s1-retry")
	if err != nil {
		log.Fatal(err)
	}
	for _, ev := range f.Events() { // the prefix, the fork's marker, and the cut turn closed
		fmt.Println(ev.Seq, ev.Type)
	}
	// Output:
	// {"id":"u1","role":"user","content":[{"type":"text","text":"list the files"}],"source":{"kind":"prompt"}}
	// {"id":"a1","role":"assistant","content":[{"type":"text","text":"README.md and go.mod"}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4"}}
	// resumed s1: 7 events, 0 closers
	// 0 turn/start
	// 1 user/message
	// 2 session/end-seed
	// 3 turn/end
}

// Append appends in order and stops at the first input the rules reject;
// the events before it stay.
func ExampleSession_Append() {
	ctx := context.Background()
	s, done := exampleSession(ctx) // Open on a temporary directory, then Create "s1", as in Example
	defer done()

	evs, err := s.Append(ctx, events.TurnStart(1), events.UserText(events.TextMessage{ID: "", Text: "a message needs an id"}), events.UserText(events.TextMessage{ID: "u2", Text: "hi"}))
	var e *sdk.Error
	if errors.As(err, &e) && e.Index != nil {
		fmt.Println(e.Code, "at input", *e.Index, "- appended:", e.Meta["appended"])
	}
	fmt.Println(len(evs), s.Len())
	// Output:
	// PAYLOAD_INVALID at input 1 - appended: 1
	// 1 1
}

// AppendAt appends only when the log has the length the caller planned
// for, so a retry after a lost reply never appends twice.
func ExampleSession_AppendAt() {
	ctx := context.Background()
	s, done := exampleSession(ctx) // Open on a temporary directory, then Create "s1", as in Example
	defer done()

	turn := []events.Input{events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "hi"})}
	for range 2 { // the second try finds the turn appended already
		_, err := s.AppendAt(ctx, 0, turn...)
		fmt.Println(err == nil, errors.Is(err, sdk.CodeSeqConflict), s.Len())
	}
	// Output:
	// true false 2
	// false true 2
}

// AppendOnce appends an operation's events once: a retry with the same id
// and events, even after a restart, gets the original events back, and
// other events under the id are refused.
func ExampleSession_AppendOnce() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "logbook-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	rt, err := logbook.Open(ctx, logbook.Options{DataDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	s, err := rt.Create(ctx, "s1", events.CreateOptions{Labels: map[string]string{"framework": "example"}})
	if err != nil {
		log.Fatal(err)
	}
	model := events.Model{Provider: "anthropic", Name: "claude-sonnet-4"}
	turn := []events.Input{events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "hi"}),
		events.StepStart(1, 1), events.AssistantText(1, 1, model, events.TextMessage{ID: "a1", Text: "hello"}),
		events.StepEnd(1, 1), events.TurnEnd(1, events.Completed())}
	a, err := s.AppendOnce(ctx, "turn-1", turn...)
	fmt.Println(len(a.Events), a.Replayed, err)
	if err := rt.Close(ctx); err != nil { // a restart: the id is stored with its events
		log.Fatal(err)
	}

	rt, err = logbook.Open(ctx, logbook.Options{DataDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
	s, _, err = rt.Resume(ctx, "s1")
	if err != nil {
		log.Fatal(err)
	}
	a, err = s.AppendOnce(ctx, "turn-1", turn...) // the retry, after the resume's own event
	fmt.Println(a.Events[0].Seq, len(a.Events), a.Replayed, err, s.Len())
	_, err = s.AppendOnce(ctx, "turn-1", events.TurnStart(2))
	var e *sdk.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code, "first seq", e.Meta["firstSeq"], "count", e.Meta["count"])
	}
	fmt.Println(s.Header().Labels["framework"])
	// Output:
	// 6 false <nil>
	// 0 6 true <nil> 7
	// OPERATION_CONFLICT first seq 0 count 6
	// example
}

// exampleSession opens a runtime on a temporary directory and creates
// session "s1" in it; done closes the runtime and removes the directory.
func exampleSession(ctx context.Context) (s *logbook.Session, done func()) {
	dir, err := os.MkdirTemp("", "logbook-example")
	if err != nil {
		log.Fatal(err)
	}
	rt, err := logbook.Open(ctx, logbook.Options{DataDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	if s, err = rt.Create(ctx, "s1", events.CreateOptions{}); err != nil {
		log.Fatal(err)
	}
	return s, func() {
		rt.Close(ctx)
		os.RemoveAll(dir)
	}
}
