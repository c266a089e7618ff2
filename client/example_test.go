package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// exampleSession is the set-up of the examples after the first: a client
// of the daemon and a new session; done releases the session and closes
// the client.
func exampleSession(ctx context.Context) (*client.Client, *client.Session, func()) {
	c := client.New(daemon, client.Options{})
	s, err := c.Create(ctx, "", events.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	return c, s, func() {
		_ = c.Session(s.ID()).Release(ctx)
		c.Close()
	}
}

// A turn appended to `logbook serve` with the events builders, then read
// back: the derived messages the next model call gets, the transcript and
// the surface. The code is the embedder's, with a context and an error on
// every call that crosses the network.
func Example() {
	ctx := context.Background()
	c := client.New(daemon, client.Options{}) // e.g. "127.0.0.1:7420"
	defer c.Close()

	s, err := c.Create(ctx, "", events.CreateOptions{}) // "": the server names it
	if err != nil {
		log.Fatal(err)
	}
	model := events.Model{Provider: "anthropic", Name: "claude-sonnet-4"}
	evs, err := s.Append(ctx,
		events.TurnStart(1),
		events.UserText(events.TextMessage{ID: "u1", Text: "list the files"}),
		events.StepStart(1, 1),
		events.AssistantText(1, 1, model, events.TextMessage{ID: "a1", Text: "There are two files."}),
		events.StepEnd(1, 1),
		events.TurnEnd(1, events.Completed()),
	)
	if err != nil {
		log.Fatal(err)
	}
	for _, ev := range evs {
		fmt.Println(ev.Seq, ev.Type)
	}
	if err := s.Flush(ctx); err != nil { // durable on every backend
		log.Fatal(err)
	}

	msgs, err := s.Messages(ctx, client.ViewOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Println(string(m))
	}
	transcript, err := s.Transcript(ctx)
	if err != nil {
		log.Fatal(err)
	}
	surface, err := s.Surface(ctx, client.ViewOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(transcript), "transcript entries; surface", surface)
	if err := s.Release(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 0 turn/start
	// 1 user/message
	// 2 step/start
	// 3 assistant/message
	// 4 step/end
	// 5 turn/end
	// {"id":"u1","role":"user","content":[{"type":"text","text":"list the files"}],"source":{"kind":"prompt"}}
	// {"id":"a1","role":"assistant","content":[{"type":"text","text":"There are two files."}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4"}}
	// 2 transcript entries; surface [1 3]
}

// AppendGroup is all or nothing: a rejected member leaves the log as it
// was, and the error names the member.
func ExampleSession_AppendGroup() {
	ctx := context.Background()
	_, s, done := exampleSession(ctx) // New on the daemon's address, then Create, as in Example
	defer done()

	// A group holds at most one surface event: the second user message is
	// refused, and with it the whole group.
	_, err := s.AppendGroup(ctx, events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "hi"}), events.UserText(events.TextMessage{ID: "u2", Text: "again"}))
	var e *sdk.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code+":", e.Detail)
	}
	evs, err := s.Events(ctx)
	fmt.Println(len(evs), "events", err)

	evs, err = s.AppendGroup(ctx, events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "hi"}))
	fmt.Println(len(evs), "events appended", err)
	// Output:
	// SURFACE_OP_NOT_ALLOWED: an atomic group may hold one surface or projection event; member 2 (user/message) follows member 1
	// 0 events <nil>
	// 2 events appended <nil>
}

// Resume repairs a session whose turn was left open: the closers it
// appends are in the report.
func ExampleClient_Resume() {
	ctx := context.Background()
	c, s, done := exampleSession(ctx) // New on the daemon's address, then Create, as in Example
	defer done()
	if _, err := s.Append(ctx, events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "list the files"}), events.StepStart(1, 1)); err != nil {
		log.Fatal(err)
	}
	if err := s.Release(ctx); err != nil { // the harness stopped mid-turn
		log.Fatal(err)
	}

	s, rep, err := c.Resume(ctx, s.ID())
	if err != nil {
		log.Fatal(err)
	}
	for _, ev := range rep.Repaired {
		fmt.Println(ev.Seq, ev.Type, string(ev.Data))
	}
	fmt.Println("next seq", rep.NextSeq)
	// Output:
	// 3 step/end {"turn":1,"step":1}
	// 4 turn/end {"turn":1,"reason":{"kind":"interrupted"}}
	// next seq 6
}

// AppendRetry appends at an expected log length and retries what may pass;
// a second attempt with the same events finds them stored and returns them
// instead of appending them again.
func ExampleSession_AppendRetry() {
	ctx := context.Background()
	_, s, done := exampleSession(ctx) // New on the daemon's address, then Create, as in Example
	defer done()

	turn := []events.Input{events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "hi"})}
	first, err := s.AppendRetry(ctx, 0, turn, client.RetryOptions{Flush: true, MaxAttempts: 5})
	if err != nil {
		log.Fatal(err)
	}
	again, err := s.AppendRetry(ctx, 0, turn, client.RetryOptions{Flush: true, MaxAttempts: 5}) // as after a lost reply
	if err != nil {
		log.Fatal(err)
	}
	all, err := s.Events(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(first), len(again), len(all), string(first[1].Envelope) == string(again[1].Envelope))
	// Output:
	// 2 2 2 true
}

// Read streams a range of the log (or, with Follow, the events other
// clients append as they come, until ctx ends).
func ExampleSession_Read() {
	ctx := context.Background()
	_, s, done := exampleSession(ctx) // New on the daemon's address, then Create, as in Example
	defer done()
	if _, err := s.Append(ctx, events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "hi"}), events.TurnEnd(1, events.Completed())); err != nil {
		log.Fatal(err)
	}

	to := sdk.Offset(3)
	for ev, err := range s.Read(ctx, client.ReadOptions{From: 1, To: &to}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ev.Seq, ev.Type, string(ev.Data))
	}
	// Output:
	// 1 user/message {"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"prompt"}}
	// 2 turn/end {"turn":1,"reason":{"kind":"completed"}}
}

// Every derived view takes ViewOptions: the zero value is the view now,
// At the view as it was right after that event.
func ExampleSession_Messages() {
	ctx := context.Background()
	_, s, done := exampleSession(ctx) // New on the daemon's address, then Create, as in Example
	defer done()

	if _, err := s.Append(ctx, events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "first"}),
		events.UserText(events.TextMessage{ID: "u2", Text: "second"})); err != nil {
		log.Fatal(err)
	}
	now, err := s.Messages(ctx, client.ViewOptions{})
	if err != nil {
		log.Fatal(err)
	}
	at := sdk.Seq(1)
	then, err := s.Messages(ctx, client.ViewOptions{At: &at})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(now), "messages now,", len(then), "right after seq 1")
	// Output:
	// 2 messages now, 1 right after seq 1
}

// Hold takes the audit reason in AuditOptions, on a handle that needs no
// call (Client.Session); Delete then refuses the session until
// ReleaseHold.
func ExampleSession_Hold() {
	ctx := context.Background()
	c, s, done := exampleSession(ctx) // New on the daemon's address, then Create, as in Example
	defer done()
	if err := s.Release(ctx); err != nil { // stored, no longer live in the server
		log.Fatal(err)
	}

	stored := c.Session(s.ID())
	rec, changed, err := stored.Hold(ctx, client.AuditOptions{Reason: "LEGAL-1"})
	fmt.Println(changed, rec.Op, rec.Reason, rec.By, err)
	err = stored.Delete(ctx, client.AuditOptions{Reason: "cleanup"})
	fmt.Println(sdk.CodeOf(err))
	_, changed, err = stored.ReleaseHold(ctx, client.AuditOptions{})
	fmt.Println(changed, err)
	fmt.Println(stored.Delete(ctx, client.AuditOptions{Reason: "cleanup"}))
	// Output:
	// true hold LEGAL-1 api <nil>
	// SESSION_HELD
	// true <nil>
	// <nil>
}
