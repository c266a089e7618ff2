package session

import (
	"context"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// opTurn is one whole turn with two surface messages: an operation may
// hold many surface appends.
func opTurn(turn int64, text string) []AppendInput {
	reply := AppendInput{Type: TypeAssistantMessage, Data: tcRaw(dataAsst(turn, 1, "a"+text, blockText("re: "+text))), SurfaceOp: opAppend()}
	return []AppendInput{evTurnStart(turn), evU("u"+text, text), evStepStart(turn, 1), reply, evStepEnd(turn, 1), evTurnEnd(turn)}
}

func appendOp(t testing.TB, s *Session, id string, ins []AppendInput) ([]Event, bool) {
	t.Helper()
	evs, replayed, err := s.AppendOperation(context.Background(), id, -1, ins)
	if err != nil {
		t.Fatalf("AppendOperation(%q): %v", id, err)
	}
	return evs, replayed
}

// The first event of an operation stores the id and the count as the
// envelope's last member; the others store nothing more.
func TestOperationIsStoredOnItsFirstEvent(t *testing.T) {
	s, _ := newTestSession(t)
	evs, replayed := appendOp(t, s, `op "1"`, opTurn(1, "hi"))
	if replayed || len(evs) != 6 || feedLen(s) != 6 {
		t.Fatalf("appended %d events (replayed %v), feed %d; want 6 new ones in one commit", len(evs), replayed, feedLen(s))
	}
	if env := string(evs[0].Envelope()); !strings.HasSuffix(env, `,"operation":{"id":"op \"1\"","count":6}}`) {
		t.Fatalf("first envelope %s has no operation member", env)
	}
	for _, e := range evs[1:] {
		if strings.Contains(string(e.Envelope()), `"operation"`) {
			t.Fatalf("event %d carries the operation member: %s", e.Seq(), e.Envelope())
		}
	}
}

// The same id with byte-equal events appends nothing and returns the
// original events, whatever the expected seq; other events, another count
// or a different member are OPERATION_CONFLICT naming the original, and
// nothing changes.
func TestOperationReplayAndConflict(t *testing.T) {
	s, clock := newTestSession(t)
	orig, _ := appendOp(t, s, "t1", opTurn(1, "hi"))
	mustAppendAll(t, s, opTurn(2, "next")...)
	clock.Advance(1000) // a retry comes later: time is not compared
	before := stateOf(t, s)
	evs, replayed, err := s.AppendOperation(context.Background(), "t1", 99, opTurn(1, "hi"))
	if err != nil || !replayed || len(evs) != 6 {
		t.Fatalf("replay = %d events, replayed %v, %v", len(evs), replayed, err)
	}
	for i := range evs {
		if evs[i] != orig[i] {
			t.Fatalf("replay event %d is not the original", i)
		}
	}
	requireUnchanged(t, before, s)
	for name, ins := range map[string][]AppendInput{
		"other text":   opTurn(1, "ho"),
		"fewer events": opTurn(1, "hi")[:5],
		"other type":   {evTurnStart(3)},
		"ignorable":    append(opTurn(1, "hi")[:5], AppendInput{Type: "x-test/note", Data: tcRaw(`{}`), Ignorable: true}),
	} {
		_, replayed, err := s.AppendOperation(context.Background(), "t1", -1, ins)
		e := requireCode(t, err, sdk.CodeOperationConflict)
		if replayed || e.Meta["operationId"] != "t1" || e.Meta["firstSeq"] != "0" || e.Meta["count"] != "6" {
			t.Fatalf("%s: replayed %v, meta %v", name, replayed, e.Meta)
		}
		requireUnchanged(t, before, s)
	}
}

// The order of checks (docs/format.md): A5–A9 on every member come before
// the operation id check, which comes before expectedSeq and the loop
// rules; a bad id is OPERATION_ID_INVALID; no events is USAGE.
func TestOperationOrderOfChecks(t *testing.T) {
	s, _ := newTestSession(t)
	appendOp(t, s, "t1", opTurn(1, "hi"))
	before := stateOf(t, s)
	ctx := context.Background()
	// A9 of the second member beats the conflict of the held id.
	_, _, err := s.AppendOperation(ctx, "t1", -1, []AppendInput{evTurnStart(2), evRaw(TypeTurnStart, `{"turn":"x"}`)})
	if e := requireCode(t, err, sdk.CodePayloadInvalid); e.Index == nil || *e.Index != 1 {
		t.Fatalf("want the member's index 1: %v", e)
	}
	// A9 also beats a malformed id (all but the empty one, which is no id).
	_, _, err = s.AppendOperation(ctx, "tab\there", -1, []AppendInput{evRaw(TypeTurnStart, `{}`)})
	requireCode(t, err, sdk.CodePayloadInvalid)
	for _, bad := range []string{"", strings.Repeat("x", 129), "tab\there", "é"} {
		_, _, err = s.AppendOperation(ctx, bad, -1, opTurn(2, "x"))
		requireDetail(t, requireCode(t, err, sdk.CodeOperationIDInvalid), "printable ASCII")
	}
	// The conflict beats expectedSeq and the loop rules.
	_, _, err = s.AppendOperation(ctx, "t1", 3, []AppendInput{evTurnEnd(7)})
	requireCode(t, err, sdk.CodeOperationConflict)
	// A new id: expectedSeq, then the loop rules.
	_, _, err = s.AppendOperation(ctx, "t2", 3, []AppendInput{evTurnEnd(7)})
	requireCode(t, err, sdk.CodeSeqConflict)
	_, _, err = s.AppendOperation(ctx, "t2", 6, []AppendInput{evTurnStart(2), evTurnEnd(7)})
	if e := requireCode(t, err, sdk.CodeTurnNotOpen); e.Index == nil || *e.Index != 1 {
		t.Fatalf("want the member's index 1: %v", e)
	}
	_, _, err = s.AppendOperation(ctx, "t2", -1, nil)
	requireCode(t, err, sdk.CodeUsage)
	requireUnchanged(t, before, s)
	// A refused id is not held: it appends afterwards.
	if _, replayed := appendOp(t, s, "t2", opTurn(2, "x")); replayed {
		t.Fatal("a refused operation was held")
	}
}

// A replace, a projection or a developer/message must be an operation's
// only surface or projection event; surface appends may be many.
func TestOperationSurfaceMembers(t *testing.T) {
	s, _ := newTestSession(t)
	appendOp(t, s, "t1", opTurn(1, "hi"))
	_, _, err := s.AppendOperation(context.Background(), "t2", -1, []AppendInput{evTurnStart(2), evU("u2", "x"), replacing(evU("u3", "y"), 1, 1, 1)})
	e := requireCode(t, err, sdk.CodeSurfaceOpNotAllowed)
	requireDetail(t, e, "member 2", "member 1")
}

// The index is rebuilt from the stored envelopes: after a restore (with
// and without a checkpoint) and in an Extend, a replay finds the original
// events, and a restored log that opens one id twice is CORRUPT_LOG.
func TestOperationSurvivesRestore(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppend(t, s, evHeader("initial", plainHeader))
	appendOp(t, s, "t1", opTurn(1, "hi"))
	appendOp(t, s, "h2", []AppendInput{evHeader("change", plainHeader)})
	envs := envelopesOf(s)
	ck, _, ok := s.Checkpoint()
	if !ok {
		t.Fatal("no checkpoint")
	}
	restored, err := Restore(context.Background(), restoreOpts(), RestoreOptions{}, envs)
	if err != nil {
		t.Fatal(err)
	}
	viaCheckpoint, err := restoreWithCheckpoint(t, restoreOpts(), ck, envs)
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*Session{"restore": restored, "checkpoint": viaCheckpoint} {
		evs, replayed, err := r.AppendOperation(context.Background(), "t1", -1, opTurn(1, "hi"))
		if err != nil || !replayed || evs[0].Seq() != 1 {
			t.Fatalf("%s: replay = %v, %v", name, replayed, err)
		}
		// A header replayed as of its own position: change needs the
		// header before it, which the log has.
		if _, replayed, err := r.AppendOperation(context.Background(), "h2", -1, []AppendInput{evHeader("change", plainHeader)}); err != nil || !replayed {
			t.Fatalf("%s: header replay = %v, %v", name, replayed, err)
		}
	}
	dup := append(append([][]byte{}, envs...), envLine(len(envs), "x-test/note", `{}`, `,"ignorable":true,"operation":{"id":"t1","count":1}`))
	rejectRestore(t, restoreOpts(), RestoreOptions{}, dup, sdk.CodeCorruptLog, sdk.CodeEnvelopeInvalid, len(envs), `"t1"`, "seq 1")
	bad := append(append([][]byte{}, envs...), envLine(len(envs), "x-test/note", `{}`, `,"ignorable":true,"operation":{"id":"t9","count":0}`))
	rejectRestore(t, restoreOpts(), RestoreOptions{}, bad, sdk.CodeCorruptLog, sdk.CodeEnvelopeInvalid, len(envs), "operation")
}

// A replayed operation whose first event is the initial request/header is
// checked as of its own position, not against the header it now follows.
func TestOperationReplayOfTheInitialHeader(t *testing.T) {
	s, _ := newTestSession(t)
	first := []AppendInput{evHeader("initial", plainHeader), evTurnStart(1)}
	appendOp(t, s, "start", first)
	if _, replayed := appendOp(t, s, "start", first); !replayed {
		t.Fatal("not replayed")
	}
}

// A fork child keeps the ids of its prefix; an operation the fork point
// cut is still held there, and a retry is OPERATION_CONFLICT.
func TestOperationInAFork(t *testing.T) {
	s, _ := newTestSession(t)
	appendOp(t, s, "t1", opTurn(1, "hi"))
	appendOp(t, s, "t2", opTurn(2, "ho"))
	fork := func(boundary int64) *Session {
		child, err := Fork(context.Background(), Options{Header: ForkHeader(s.Header(), "c", boundary+1, tT0)}, s, boundary, tT0)
		if err != nil {
			t.Fatal(err)
		}
		return child
	}
	whole := fork(11)
	if _, replayed := appendOp(t, whole, "t2", opTurn(2, "ho")); !replayed {
		t.Fatal("the whole fork does not replay t2")
	}
	cut := fork(8) // t2 is seqs 6–11: cut after its step/start
	_, _, err := cut.AppendOperation(context.Background(), "t2", -1, opTurn(2, "ho"))
	requireCode(t, err, sdk.CodeOperationConflict)
	if _, replayed := appendOp(t, cut, "t1", opTurn(1, "hi")); !replayed {
		t.Fatal("the cut fork does not replay t1")
	}
}

// An Extend (a repair batch) indexes the operations it carries.
func TestOperationIndexedByExtend(t *testing.T) {
	src, _ := newTestSession(t)
	appendOp(t, src, "t1", opTurn(1, "hi"))
	ctl := &Control{}
	s, err := New(testOptions(newFakeClock(tT0), &commitFeed{}, func(o *Options) { o.Control = ctl }))
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Extend(context.Background(), src.Events().Slice(), FromStorage); err != nil {
		t.Fatal(err)
	}
	if _, replayed := appendOp(t, s, "t1", opTurn(1, "hi")); !replayed {
		t.Fatal("not replayed after Extend")
	}
}
