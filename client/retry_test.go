package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/sdk"
)

func offset(n sdk.Offset) *sdk.Offset { return &n }

// Append with an expected seq: a stale one is SEQ_CONFLICT with both
// lengths, in an *AppendError saying nothing was appended at the length
// found.
func TestAppendExpectedSeq(t *testing.T) {
	c := serve(t, headless(t), "")
	ctx := context.Background()
	if _, err := c.Create(ctx, client.CreateOptions{ID: "e"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, "e", []client.Input{user(0), user(1)}, client.AppendOptions{ExpectedSeq: offset(0)}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Append(ctx, "e", []client.Input{user(2)}, client.AppendOptions{ExpectedSeq: offset(1), Flush: true})
	want, got, ok := client.SeqConflictOf(err)
	var ae *client.AppendError
	if !ok || want != 1 || got != 2 || !errors.As(err, &ae) || ae.Appended != 0 || ae.FirstSeq != 2 {
		t.Fatalf("a stale expected seq: %v (expected %d, actual %d, %v)", err, want, got, ok)
	}
	// A failed flush or rejection reports where the appended events went.
	_, err = c.Append(ctx, "e", []client.Input{user(2), {Type: "no/such-type", Data: []byte(`{}`)}}, client.AppendOptions{ExpectedSeq: offset(2)})
	if !errors.As(err, &ae) || ae.Appended != 1 || ae.FirstSeq != 2 || !errors.Is(err, sdk.ErrUnknownEventType) {
		t.Fatalf("a rejected second event: %v", err)
	}
	if _, err = c.Append(ctx, "missing", []client.Input{user(0)}, client.AppendOptions{}); !errors.As(err, &ae) || ae.FirstSeq != -1 || !errors.Is(err, sdk.ErrSessionNotFound) {
		t.Fatalf("a missing session: %v", err)
	}
}

// AppendRetry after an attempt whose reply was lost (the events are in the
// log already) returns the stored events instead of appending them again;
// after one that appended only some, it appends the rest; another writer's
// events at the expected seq are a SEQ_CONFLICT.
func TestAppendRetryNeverDuplicates(t *testing.T) {
	c := serve(t, headless(t), "")
	ctx := context.Background()
	if _, err := c.Create(ctx, client.CreateOptions{ID: "r"}); err != nil {
		t.Fatal(err)
	}
	batch := []client.Input{user(0), user(1), user(2)}
	first, err := c.AppendRetry(ctx, "r", 0, batch, client.RetryOptions{Flush: true})
	if err != nil || len(first.Envelopes) != 3 || first.Flush == nil {
		t.Fatalf("first attempt: %+v, %v", first, err)
	}
	again, err := c.AppendRetry(ctx, "r", 0, batch, client.RetryOptions{Flush: true})
	if err != nil || len(again.Envelopes) != 3 || again.Flush == nil || again.Flush.Backends[0].DurableSeq != 2 {
		t.Fatalf("the retry of an appended batch: %+v, %v", again, err)
	}
	for i := range first.Envelopes {
		if string(first.Envelopes[i]) != string(again.Envelopes[i]) {
			t.Fatalf("envelope %d: retry returned %s, the first attempt stored %s", i, again.Envelopes[i], first.Envelopes[i])
		}
	}
	// Half of the next batch made it.
	if _, err := c.Append(ctx, "r", []client.Input{user(3)}, client.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	rest, err := c.AppendRetry(ctx, "r", 3, []client.Input{user(3), user(4)}, client.RetryOptions{})
	if err != nil || len(rest.Envelopes) != 2 {
		t.Fatalf("a half-appended batch: %+v, %v", rest, err)
	}
	// All of a batch, then another writer's event after it: the batch is
	// there, the retry succeeds.
	if _, err := c.Append(ctx, "r", []client.Input{user(60)}, client.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if again, err := c.AppendRetry(ctx, "r", 3, []client.Input{user(3), user(4)}, client.RetryOptions{}); err != nil || len(again.Envelopes) != 2 {
		t.Fatalf("a stored batch followed by another writer's event: %+v, %v", again, err)
	}
	// Another writer's event at seq 6.
	if _, err := c.Append(ctx, "r", []client.Input{user(50)}, client.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.AppendRetry(ctx, "r", 6, []client.Input{user(6)}, client.RetryOptions{})
	var ae *client.AppendError
	if _, actual, ok := client.SeqConflictOf(err); !ok || actual != 7 || !errors.As(err, &ae) || ae.Appended != 0 {
		t.Fatalf("another writer's event: %v", err)
	}
	in, err := c.Inspect(ctx, "r")
	if err != nil || in.Events != 7 {
		t.Fatalf("%d events (%v), want 7", in.Events, err)
	}
}

// AppendStream.SendExpected: the held events go first, then the checked
// message; a stale one ends the stream with SEQ_CONFLICT.
func TestAppendStreamSendExpected(t *testing.T) {
	c := serve(t, headless(t), "")
	ctx := context.Background()
	if _, err := c.Create(ctx, client.CreateOptions{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	st := c.AppendStream(ctx, "s")
	if err := st.Send([]client.Input{user(0)}, false); err != nil {
		t.Fatal(err)
	}
	if err := st.SendExpected(1, []client.Input{user(1)}, false); err != nil {
		t.Fatal(err)
	}
	if res, err := st.CloseAndReceive(); err != nil || res.Appended != 2 || res.NextSeq != 2 {
		t.Fatalf("stream: %+v, %v", res, err)
	}
	st = c.AppendStream(ctx, "s")
	_ = st.SendExpected(1, []client.Input{user(2)}, false)
	_, err := st.CloseAndReceive()
	var ae *client.AppendError
	if _, actual, ok := client.SeqConflictOf(err); !ok || actual != 2 || !errors.As(err, &ae) || ae.Appended != 0 || ae.FirstSeq != 2 {
		t.Fatalf("a stale message: %v", err)
	}
}

// AppendRetry gives up at once on a refusal a retry would meet again: a
// wrong token.
func TestAppendRetryGivesUpOnAWrongToken(t *testing.T) {
	_, addr := serveAt(t, headless(t), "a-token-of-16-bytes")
	bad := client.New(addr, client.Options{Token: "wrong"})
	defer bad.Close()
	attempts := 0
	_, err := bad.AppendRetry(context.Background(), "x", 0, []client.Input{user(0)}, client.RetryOptions{OnRetry: func(error) { attempts++ }})
	if connect.CodeOf(err) != connect.CodeUnauthenticated || attempts != 0 {
		t.Fatalf("a wrong token: %v after %d retries", err, attempts)
	}
}

// AppendRetry knows its own event in the log also when the event's data
// nests as deep as allowed (512 levels of its own, inside the envelope):
// the retry after a lost reply returns the stored event, not SEQ_CONFLICT.
func TestAppendRetryFindsItsEventAtTheDepthLimit(t *testing.T) {
	c := serve(t, headless(t), "")
	ctx := context.Background()
	if _, err := c.Create(ctx, client.CreateOptions{ID: "d"}); err != nil {
		t.Fatal(err)
	}
	deep := client.Input{Type: "x-test/deep", Data: []byte(strings.Repeat("[", 512) + "1" + strings.Repeat("]", 512)), Ignorable: true}
	first, err := c.Append(ctx, "d", []client.Input{deep}, client.AppendOptions{ExpectedSeq: offset(0)})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.AppendRetry(ctx, "d", 0, []client.Input{deep}, client.RetryOptions{})
	if err != nil || len(again.Envelopes) != 1 || string(again.Envelopes[0]) != string(first.Envelopes[0]) {
		t.Fatalf("the retry of a stored event 512 deep: %+v, %v", again, err)
	}
}
