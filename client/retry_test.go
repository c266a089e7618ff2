package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Append with an expected seq: a stale one is SEQ_CONFLICT with both
// lengths, in an *AppendError saying nothing was appended at the length
// found.
func TestAppendExpectedSeq(t *testing.T) {
	c := serve(t, headless, "")
	ctx := context.Background()
	if _, err := c.Create(ctx, "e", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Session("e").AppendAt(ctx, 0, events.TurnStart(0), user(0), user(1)); err != nil {
		t.Fatal(err)
	}
	_, err := c.Session("e").AppendAt(ctx, 2, user(2))
	want, got, ok := client.SeqConflictOf(err)
	var ae *client.AppendError
	if !ok || want != 2 || got != 3 || !errors.As(err, &ae) || ae.Appended != 0 || ae.FirstSeq != 3 {
		t.Fatalf("a stale expected seq: %v (expected %d, actual %d, %v)", err, want, got, ok)
	}
	// A failed flush or rejection reports where the appended events went.
	_, err = c.Session("e").AppendAt(ctx, 3, user(2), events.Input{Type: "no/such-type", Data: []byte(`{}`)})
	if !errors.As(err, &ae) || ae.Appended != 1 || ae.FirstSeq != 3 || !errors.Is(err, sdk.CodeUnknownEventType) {
		t.Fatalf("a rejected second event: %v", err)
	}
	if _, err = c.Session("missing").Append(ctx, user(0)); !errors.As(err, &ae) || ae.FirstSeq != -1 || !errors.Is(err, sdk.CodeSessionNotFound) {
		t.Fatalf("a missing session: %v", err)
	}
}

// AppendRetry after an attempt whose reply was lost (the events are in the
// log already) returns the stored events instead of appending them again;
// after one that appended only some, it appends the rest; another writer's
// events at the expected seq are a SEQ_CONFLICT.
func TestAppendRetryNeverDuplicates(t *testing.T) {
	c := serve(t, headless, "")
	ctx := context.Background()
	if _, err := c.Create(ctx, "r", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	batch := []events.Input{events.TurnStart(0), user(0), user(1)}
	first, err := c.Session("r").AppendRetry(ctx, 0, batch, client.RetryOptions{Flush: true})
	if err != nil || len(first) != 3 {
		t.Fatalf("first attempt: %+v, %v", first, err)
	}
	again, err := c.Session("r").AppendRetry(ctx, 0, batch, client.RetryOptions{Flush: true})
	if err != nil || len(again) != 3 {
		t.Fatalf("the retry of an appended batch: %+v, %v", again, err)
	}
	for i := range first {
		if string(first[i].Envelope) != string(again[i].Envelope) {
			t.Fatalf("envelope %d: retry returned %s, the first attempt stored %s", i, again[i].Envelope, first[i].Envelope)
		}
	}
	// Half of the next batch made it.
	if _, err := c.Session("r").Append(ctx, user(3)); err != nil {
		t.Fatal(err)
	}
	rest, err := c.Session("r").AppendRetry(ctx, 3, []events.Input{user(3), user(4)}, client.RetryOptions{})
	if err != nil || len(rest) != 2 {
		t.Fatalf("a half-appended batch: %+v, %v", rest, err)
	}
	// All of a batch, then another writer's event after it: the batch is
	// there, the retry succeeds.
	if _, err := c.Session("r").Append(ctx, user(60)); err != nil {
		t.Fatal(err)
	}
	if again, err := c.Session("r").AppendRetry(ctx, 3, []events.Input{user(3), user(4)}, client.RetryOptions{}); err != nil || len(again) != 2 {
		t.Fatalf("a stored batch followed by another writer's event: %+v, %v", again, err)
	}
	// Another writer's event at seq 6.
	if _, err := c.Session("r").Append(ctx, user(50)); err != nil {
		t.Fatal(err)
	}
	_, err = c.Session("r").AppendRetry(ctx, 6, []events.Input{user(6)}, client.RetryOptions{})
	var ae *client.AppendError
	if _, actual, ok := client.SeqConflictOf(err); !ok || actual != 7 || !errors.As(err, &ae) || ae.Appended != 0 {
		t.Fatalf("another writer's event: %v", err)
	}
	if n, err := c.Session("r").Len(ctx); err != nil || n != 7 {
		t.Fatalf("%d events (%v), want 7", n, err)
	}
}

// AppendStream.SendExpected: the held events go first, then the checked
// message; a stale one ends the stream with SEQ_CONFLICT.
func TestAppendStreamSendExpected(t *testing.T) {
	c := serve(t, headless, "")
	ctx := context.Background()
	if _, err := c.Create(ctx, "s", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st := c.Session("s").AppendStream(ctx)
	if err := st.Send([]events.Input{events.TurnStart(0), user(0)}, false); err != nil {
		t.Fatal(err)
	}
	if err := st.SendExpected(2, []events.Input{user(1)}, false); err != nil {
		t.Fatal(err)
	}
	if res, err := st.CloseAndReceive(); err != nil || res.Appended != 3 || res.NextSeq != 3 {
		t.Fatalf("stream: %+v, %v", res, err)
	}
	st = c.Session("s").AppendStream(ctx)
	_ = st.SendExpected(2, []events.Input{user(2)}, false)
	_, err := st.CloseAndReceive()
	var ae *client.AppendError
	if _, actual, ok := client.SeqConflictOf(err); !ok || actual != 3 || !errors.As(err, &ae) || ae.Appended != 0 || ae.FirstSeq != 3 {
		t.Fatalf("a stale message: %v", err)
	}
}

// AppendRetry gives up at once on a refusal a retry would meet again: a
// wrong token.
func TestAppendRetryGivesUpOnAWrongToken(t *testing.T) {
	_, addr := serveAt(t, headless, t.TempDir(), "a-token-of-16-bytes")
	bad := client.New(addr, client.Options{Token: "wrong"})
	defer bad.Close()
	attempts := 0
	_, err := bad.Session("x").AppendRetry(context.Background(), 0, []events.Input{user(0)}, client.RetryOptions{OnRetry: func(error) { attempts++ }})
	if connect.CodeOf(err) != connect.CodeUnauthenticated || attempts != 0 {
		t.Fatalf("a wrong token: %v after %d retries", err, attempts)
	}
}

// AppendRetry knows its own event in the log also when the event's data
// nests as deep as allowed (512 levels of its own, inside the envelope):
// the retry after a lost reply returns the stored event, not SEQ_CONFLICT.
func TestAppendRetryFindsItsEventAtTheDepthLimit(t *testing.T) {
	c := serve(t, headless, "")
	ctx := context.Background()
	if _, err := c.Create(ctx, "d", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deep := events.Input{Type: "x-test/deep", Data: []byte(strings.Repeat("[", 512) + "1" + strings.Repeat("]", 512)), Ignorable: true}
	first, err := c.Session("d").AppendAt(ctx, 0, deep)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Session("d").AppendRetry(ctx, 0, []events.Input{deep}, client.RetryOptions{})
	if err != nil || len(again) != 1 || string(again[0].Envelope) != string(first[0].Envelope) {
		t.Fatalf("the retry of a stored event 512 deep: %+v, %v", again, err)
	}
}
