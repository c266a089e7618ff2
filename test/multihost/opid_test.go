package multihost

import (
	"bytes"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Operation ids hold across hosts: host A appends two operations under
// ids and flushes them (the second leaves its turn open) and dies by
// SIGKILL; host B takes the session over (its open closes that turn), and
// there the retry of each operation is a replay with A's envelopes, byte
// for byte, through AppendOnce and through AppendRetry with an operation
// id alike; other events under a held id are OPERATION_CONFLICT naming
// the original's first seq and count; and the log holds every event once.
func TestOperationReplayOnAnotherHost(t *testing.T) {
	start := time.Now()
	ctx := t.Context()
	cl := newCluster(t)
	a, b := cl.start("a"), cl.start("b")
	s, err := a.c.Create(ctx, "ops", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	turn1 := []events.Input{events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "list the files"}), events.TurnEnd(1, events.Completed())}
	open2 := []events.Input{events.TurnStart(2), events.UserText(events.TextMessage{ID: "u2", Text: "and the tests"})}
	op1, err := s.AppendOnce(ctx, "op-1", turn1...)
	if err != nil || op1.Replayed || len(op1.Events) != len(turn1) {
		t.Fatalf("op-1 on host A: %+v, %v", op1, err)
	}
	// With its flush, which makes op-1 durable too.
	op2, err := s.AppendRetry(ctx, sdk.Offset(len(turn1)), open2, client.RetryOptions{Flush: true, MaxAttempts: 3, OperationID: "op-2"})
	if err != nil || len(op2) != len(open2) {
		t.Fatalf("op-2 on host A: %d events, %v", len(op2), err)
	}
	killed := time.Now()
	a.kill(t)

	sb := b.c.Session("ops")
	var again client.Appended
	for { // until the database has dropped the dead host's claim
		again, err = sb.AppendOnce(ctx, "op-1", turn1...)
		if sdk.CodeOf(err) != sdk.CodeAlreadyOwned || time.Since(killed) > takeOverLimit {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err != nil || !again.Replayed {
		t.Fatalf("op-1 again on host B: replayed %v, %v", again.Replayed, err)
	}
	sameEnvelopes(t, "op-1", again.Events, op1.Events)
	// AppendRetry at the log's length on B (past B's closers): a replay
	// is not checked against it.
	_, in, err := b.c.Inspect(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := sb.AppendRetry(ctx, in.Events, open2, client.RetryOptions{Flush: true, MaxAttempts: 3, OperationID: "op-2"})
	if err != nil {
		t.Fatalf("op-2 again on host B: %v", err)
	}
	sameEnvelopes(t, "op-2", evs, op2)

	other := []events.Input{events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "list the files, please"}), events.TurnEnd(1, events.Completed())}
	_, err = sb.AppendOnce(ctx, "op-1", other...)
	var ae *client.AppendError
	e := sdk.ErrorOf(err)
	if !errors.As(err, &ae) || e == nil || e.Code != sdk.CodeOperationConflict || ae.Appended != 0 || ae.FirstSeq != int64(op1.Events[0].Seq) ||
		e.Meta["operationId"] != "op-1" || e.Meta["firstSeq"] != strconv.FormatInt(int64(op1.Events[0].Seq), 10) || e.Meta["count"] != "3" {
		t.Fatalf("other events under op-1 on host B: %v (%+v); want OPERATION_CONFLICT naming op-1, first seq %d and count 3, nothing appended", err, ae, op1.Events[0].Seq)
	}

	all, err := sb.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	texts, ops := map[string]int{}, map[string]int{}
	for _, ev := range all {
		for _, text := range []string{"list the files", "and the tests"} {
			if bytes.Contains(ev.Data, []byte(`"`+text+`"`)) {
				texts[text]++
			}
		}
		for _, op := range []string{"op-1", "op-2"} {
			if bytes.Contains(ev.Envelope, []byte(`"operation":{"id":"`+op+`"`)) {
				ops[op]++
			}
		}
	}
	if texts["list the files"] != 1 || texts["and the tests"] != 1 || ops["op-1"] != 1 || ops["op-2"] != 1 {
		t.Fatalf("the log holds the messages %v times and the operations %v times; want each once:\n%s", texts, ops, envelopes(all))
	}
	t.Logf("%s", time.Since(start).Round(time.Millisecond))
}

// sameEnvelopes fails unless got are want's envelopes, byte for byte.
func sameEnvelopes(t *testing.T, op string, got, want []events.Event) {
	t.Helper()
	if envelopes(got) != envelopes(want) {
		t.Fatalf("the replay of %s answers\n%s\nnot the original envelopes\n%s", op, envelopes(got), envelopes(want))
	}
}

// envelopes renders evs' envelopes, one a line.
func envelopes(evs []events.Event) string {
	var b bytes.Buffer
	for _, ev := range evs {
		b.Write(ev.Envelope)
		b.WriteByte('\n')
	}
	return b.String()
}
