package session_test

import (
	"context"
	"fmt"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// A checkpoint of a session lets a later restore of the same stored
// envelopes fold them without checking each one again; the result is the
// session a full restore builds.
func ExampleSession_Checkpoint() {
	ctx := context.Background()
	opts := session.Options{Header: sdk.Header{ID: "demo", FormatVersion: sdk.FormatVersion}}
	s, err := session.New(opts)
	if err != nil {
		panic(err)
	}
	for _, in := range []events.Input{events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "hello"}), events.TurnEnd(1, events.Completed())} {
		if _, err := s.Append(ctx, in); err != nil {
			panic(err)
		}
	}
	data, covered, ok := s.Checkpoint()
	fmt.Println("checkpoint covers", covered, "events:", ok)

	var stored [][]byte // what a backend would read back
	for _, e := range s.Events().All() {
		stored = append(stored, e.Envelope())
	}
	ck, err := session.DecodeCheckpoint(data, opts)
	if err != nil {
		panic(err) // another version, other options, damaged: restore without it
	}
	r, err := session.NewRestorer(ctx, opts, session.RestoreOptions{Events: len(stored)})
	if err != nil {
		panic(err)
	}
	r.UseCheckpoint(ck)
	if err := r.Add(stored); err != nil {
		panic(err) // a restore through a checkpoint that fails is run again without it
	}
	restored, err := r.Finish()
	if err != nil {
		panic(err)
	}
	msgs, _ := restored.Messages()
	fmt.Println(restored.Len(), "events,", msgs.Len(), "message:", string(msgs.At(0).JSON()))
	// Output:
	// checkpoint covers 3 events: true
	// 3 events, 1 message: {"id":"u1","role":"user","content":[{"type":"text","text":"hello"}],"source":{"kind":"prompt"}}
}
