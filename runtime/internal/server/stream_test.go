package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
	"github.com/seed-e5e476df/logbook/sdk"
)

// storedLen opens a second engine on dir and returns how many events of
// id are in storage, read-only, beside the server's writer.
func storedLen(t *testing.T, dir, id string) int {
	t.Helper()
	e := startEngine(t, headless(dir))
	v, _, err := e.Store.Inspect(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return int(v.Len()) - v.PendingRepair()
}

// A stream of appends with flush checkpoints; at a rejected event the
// stream ends with an AppendError counting what it appended, and that is
// flushed.
func TestAppendStream(t *testing.T) {
	dir := t.TempDir()
	e := startEngine(t, headless(dir))
	r := serve(t, e, server.Options{})
	c := newClient(t, r, "")
	ctx := context.Background()
	if _, err := c.Create(ctx, "st", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := c.Session("st").AppendStream(ctx)
	for i := range 1000 {
		in := kib(i, 1024)
		if i == 0 {
			in = events.TurnStart(1) // the turn of the user messages
		}
		if err := s.Send([]events.Input{in}, i == 499); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.CloseAndReceive()
	if err != nil {
		t.Fatal(err)
	}
	if res.Appended != 1000 || res.NextSeq != 1000 || res.Flush.Backends[0].DurableSeq != 999 {
		t.Fatalf("result %+v", res)
	}
	if n := storedLen(t, dir, "st"); n != 1000 {
		t.Fatalf("%d events stored after the stream's final flush", n)
	}

	s = c.Session("st").AppendStream(ctx)
	if err := s.Send([]events.Input{kib(1000, 100), kib(1001, 100)}, false); err != nil {
		t.Fatal(err)
	}
	_ = s.Send([]events.Input{{Type: "user/message", Data: json.RawMessage(`{"id":"bad"}`), SurfaceOp: events.Append()}}, false)
	_, err = s.CloseAndReceive()
	var ae *client.AppendError
	if !errors.As(err, &ae) || ae.Appended != 2 || !errors.Is(err, sdk.CodePayloadInvalid) {
		t.Fatalf("rejected event: %v", err)
	}
	if n := storedLen(t, dir, "st"); n != 1002 {
		t.Fatalf("%d events stored after the rejected event; the 2 before it should be flushed", n)
	}
}

// Events with follow: the log, then live events as they are appended,
// also across a release and a resume, until the client cancels.
func TestEventsFollow(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})
	c := newClient(t, r, "")
	ctx := context.Background()
	if _, err := c.Create(ctx, "f", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Session("f").Append(ctx, events.TurnStart(1), kib(1, 100), kib(2, 100)); err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithCancel(ctx)
	got := make(chan events.Event, 100)
	ended := make(chan error, 1)
	go func() {
		var err error
		for env, e := range c.Session("f").Read(fctx, client.ReadOptions{From: 1, Follow: true}) {
			if e != nil {
				err = e
				break
			}
			got <- env
		}
		ended <- err
	}()
	next := 1
	expect := func(n int, typ string) {
		t.Helper()
		for range n {
			select {
			case ev := <-got:
				if ev.Seq != sdk.Seq(next) || (typ != "" && ev.Type != typ) {
					t.Fatalf("event %s; want seq %d of type %q", ev.Envelope, next, typ)
				}
				next++
			case <-time.After(30 * time.Second):
				t.Fatalf("no event %d within 30 s", next)
			}
		}
	}
	expect(2, "user/message")
	if _, err := c.Session("f").Append(ctx, kib(3, 100), events.TurnEnd(1, events.Completed())); err != nil {
		t.Fatal(err)
	}
	expect(1, "user/message")
	expect(1, "turn/end")
	if err := c.Session("f").Release(ctx); err != nil {
		t.Fatal(err)
	}
	// Append resumes the session: its lifecycle marker, then the events.
	if _, err := c.Session("f").Append(ctx, events.TurnStart(2), kib(4, 100), events.TurnEnd(2, events.Completed())); err != nil {
		t.Fatal(err)
	}
	expect(1, "session/end-seed")
	expect(1, "turn/start")
	expect(1, "user/message")
	expect(1, "turn/end")
	cancel()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("follow ended with %v after cancel", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("follow did not end after cancel")
	}

	// A follow that starts on a stored session sees it go live.
	if err := c.Session("f").Release(ctx); err != nil {
		t.Fatal(err)
	}
	to := sdk.Offset(11)
	var seqs []int
	done := make(chan error, 1)
	go func() {
		for env, err := range c.Session("f").Read(ctx, client.ReadOptions{From: 8, To: &to, Follow: true}) {
			if err != nil {
				done <- err
				return
			}
			var ev struct{ Seq int }
			_ = json.Unmarshal(env.Envelope, &ev)
			seqs = append(seqs, ev.Seq)
		}
		done <- nil
	}()
	if _, err := c.Session("f").Append(ctx, events.TurnStart(3), kib(6, 100)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil || len(seqs) != 3 || seqs[0] != 8 || seqs[2] != 10 {
			t.Fatalf("follow of a stored session: %v (%v)", seqs, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("follow to 11 did not end")
	}
}

// Shutdown flushes and releases every session the server holds: with a
// write window of a minute nothing is written unless flushed, yet after
// the server stops another engine opens the sessions for write (the
// ownership is free) and finds every event. A live tail ends with
// Unavailable instead of holding the shutdown up.
func TestShutdownFlushesAndReleases(t *testing.T) {
	dir := t.TempDir()
	e := startEngine(t, headless(dir))
	r := serve(t, e, server.Options{})
	c := newClient(t, r, "")
	ctx := context.Background()
	if _, err := c.Create(ctx, "a", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		in := kib(i, 200)
		if i == 0 {
			in = events.TurnStart(1) // the turn of the user messages
		}
		if _, err := c.Session("a").Append(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Fork(ctx, "a", nil, "b"); err != nil {
		t.Fatal(err)
	}
	tail, following := make(chan error, 1), make(chan struct{})
	go func() {
		for env, err := range c.Session("a").Read(ctx, client.ReadOptions{Follow: true}) {
			if err != nil {
				tail <- err
				return
			}
			if env.Seq == 49 {
				close(following) // read to the end: now it waits for live events
			}
		}
		tail <- nil
	}()
	select {
	case <-following:
	case err := <-tail:
		t.Fatalf("tail: %v", err)
	}
	if err := r.stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	select {
	case err := <-tail:
		if connect.CodeOf(err) != connect.CodeUnavailable {
			t.Errorf("tail ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the tail did not end at shutdown")
	}
	if _, ok := e.Store.Get("a"); ok {
		t.Fatal("session a is still live in the server's store")
	}
	other := startEngine(t, headless(dir))
	for id, want := range map[string]int{"a": 50, "b": 51} { // b: a's 50 and the inherited marker
		s, _, err := other.Store.Open(ctx, id)
		if err != nil {
			t.Fatalf("open %s after shutdown: %v", id, err)
		}
		if n := int(s.Len()); n < want {
			t.Fatalf("%s: %d events after shutdown; want at least %d", id, n, want)
		}
	}
}
