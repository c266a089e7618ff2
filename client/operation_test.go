package client_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// envelopes returns the envelope text of each event.
func envelopes(evs []events.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Envelope)
	}
	return out
}

// AppendOnce appends once: the same id and inputs replay the original
// events byte for byte, other inputs under the id are OPERATION_CONFLICT
// naming the original, and a malformed id is refused before any call.
func TestAppendOnce(t *testing.T) {
	c := client.New("http://"+daemon, client.Options{})
	t.Cleanup(c.Close)
	ctx := context.Background()
	s, err := c.Create(ctx, "once-append", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	turn := []events.Input{events.TurnStart(1), user(1)}
	first, err := s.AppendOnce(ctx, "turn-1", turn...)
	if err != nil || first.Replayed || len(first.Events) != 2 || first.Events[0].Seq != 0 {
		t.Fatalf("first AppendOnce: %+v (%v)", first, err)
	}
	again, err := s.AppendOnce(ctx, "turn-1", turn...)
	if err != nil || !again.Replayed || !slices.Equal(envelopes(again.Events), envelopes(first.Events)) {
		t.Fatalf("the retry: %+v (%v); want a replay of %q", again, err, envelopes(first.Events))
	}

	_, err = s.AppendOnce(ctx, "turn-1", events.TurnStart(1), user(2))
	var ae *client.AppendError
	var se *sdk.Error
	if !errors.As(err, &ae) || ae.Appended != 0 || !errors.As(err, &se) || se.Code != sdk.CodeOperationConflict {
		t.Fatalf("other inputs under the id: %v; want OPERATION_CONFLICT in an AppendError that appended nothing", err)
	}
	if se.Meta["operationId"] != "turn-1" || se.Meta["firstSeq"] != "0" || se.Meta["count"] != "2" || ae.FirstSeq != 0 {
		t.Fatalf("the conflict's details: Meta %v, FirstSeq %d", se.Meta, ae.FirstSeq)
	}

	for _, id := range []string{"", "tab\there", string(make([]byte, 129))} {
		_, err := s.AppendOnce(ctx, id, user(3))
		if !errors.As(err, &ae) || ae.Appended != 0 || !errors.Is(err, sdk.CodeOperationIDInvalid) {
			t.Fatalf("id %q: %v; want OPERATION_ID_INVALID", id, err)
		}
	}
	if n, err := s.Len(ctx); err != nil || n != 2 {
		t.Fatalf("the log holds %d events (%v), want 2", n, err)
	}
}

// AppendRetry with an OperationID: a retry after an attempt that got
// through (here: a second call, as after a lost reply, with the log longer
// since) is answered with the original events; another id at a stale
// expected length is SEQ_CONFLICT, without a read-back.
func TestAppendRetryOperationID(t *testing.T) {
	c := client.New("http://"+daemon, client.Options{})
	t.Cleanup(c.Close)
	ctx := context.Background()
	s, err := c.Create(ctx, "once-retry", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := client.RetryOptions{Flush: true, MaxAttempts: 3, OperationID: "t1"}
	evs, err := s.AppendRetry(ctx, 0, []events.Input{events.TurnStart(1), user(1)}, o)
	if err != nil || len(evs) != 2 {
		t.Fatalf("first AppendRetry: %v (%v)", evs, err)
	}
	if _, err := s.Append(ctx, user(2)); err != nil {
		t.Fatal(err)
	}
	again, err := s.AppendRetry(ctx, 0, []events.Input{events.TurnStart(1), user(1)}, o)
	if err != nil || !slices.Equal(envelopes(again), envelopes(evs)) {
		t.Fatalf("the retry: %v (%v); want the original events", envelopes(again), err)
	}
	o.OperationID = "t2"
	_, err = s.AppendRetry(ctx, 2, []events.Input{user(3)}, o)
	if exp, act, ok := client.SeqConflictOf(err); !ok || exp != 2 || act != 3 {
		t.Fatalf("another id at a stale length: %v; want SEQ_CONFLICT 2/3", err)
	}
	o.OperationID = "bad\x00id"
	if _, err := s.AppendRetry(ctx, 3, []events.Input{user(3)}, o); !errors.Is(err, sdk.CodeOperationIDInvalid) {
		t.Fatalf("a malformed id: %v", err)
	}
	if n, err := s.Len(ctx); err != nil || n != 3 {
		t.Fatalf("the log holds %d events (%v), want 3", n, err)
	}
}

// Create keeps the labels in the header; labels the rules refuse are
// USAGE and create nothing.
func TestCreateLabels(t *testing.T) {
	c := client.New("http://"+daemon, client.Options{})
	t.Cleanup(c.Close)
	ctx := context.Background()
	labels := map[string]string{"framework": "openai-agents", "key": "app/user-7/chat 3"}
	s, err := c.Create(ctx, "labelled", events.CreateOptions{Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	if h, err := c.Session(s.ID()).Header(ctx); err != nil || !maps.Equal(h.Labels, labels) {
		t.Fatalf("the stored header's labels: %v (%v), want %v", h.Labels, err, labels)
	}
	if _, err := c.Create(ctx, "badly-labelled", events.CreateOptions{Labels: map[string]string{"Upper": "x"}}); !errors.Is(err, sdk.CodeUsage) {
		t.Fatalf("a key with an upper-case letter: %v; want USAGE", err)
	}
	if _, err := c.Session("badly-labelled").Header(ctx); !errors.Is(err, sdk.CodeSessionNotFound) {
		t.Fatalf("the refused create left a session: %v", err)
	}
}

// SendOnce in an append stream: each call is its own operation, appended
// once; a replay is not counted in the stream's result, and a malformed id
// ends the stream without sending any of its events.
func TestAppendStreamSendOnce(t *testing.T) {
	c := client.New("http://"+daemon, client.Options{})
	t.Cleanup(c.Close)
	ctx := context.Background()
	s, err := c.Create(ctx, "once-stream", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := s.AppendStream(ctx)
	for _, send := range []func() error{
		func() error { return st.SendOnce("turn-1", []events.Input{events.TurnStart(1), user(1)}, false) },
		func() error { return st.Send([]events.Input{user(2)}, false) },
		func() error { return st.SendOnce("turn-1", []events.Input{events.TurnStart(1), user(1)}, true) }, // a replay
	} {
		if err := send(); err != nil {
			t.Fatal(err)
		}
	}
	res, err := st.CloseAndReceive()
	if err != nil || res.Appended != 3 || res.NextSeq != 3 {
		t.Fatalf("the stream: %+v (%v); want 3 appended, next seq 3", res, err)
	}

	st = s.AppendStream(ctx)
	if err := st.Send([]events.Input{user(3)}, false); err != nil {
		t.Fatal(err)
	}
	if err := st.SendOnce("", []events.Input{user(4)}, false); !errors.Is(err, sdk.CodeOperationIDInvalid) {
		t.Fatalf("SendOnce with an empty id: %v", err)
	}
	_, err = st.CloseAndReceive()
	var ae *client.AppendError
	if !errors.As(err, &ae) || ae.Appended != 1 || !errors.Is(err, sdk.CodeOperationIDInvalid) {
		t.Fatalf("the stream after a malformed id: %v; want OPERATION_ID_INVALID after 1 appended", err)
	}
	if n, err := s.Len(ctx); err != nil || n != 4 {
		t.Fatalf("the log holds %d events (%v), want 4", n, err)
	}
}
