package session

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// The inputs of the loop tests, each carrying the turn and step given.
func lpSys(turn, step int64) AppendInput {
	return AppendInput{Type: TypeSystemMessage, SurfaceOp: opAppend(),
		Data: tcRaw(fmt.Sprintf(`{"turn":%d,"step":%d,"message":{"id":"s","role":"system","content":[{"type":"text","text":"sys"}],"source":{"kind":"system-prompt"}}}`, turn, step))}
}

func lpDev(turn, step int64) AppendInput {
	return AppendInput{Type: TypeDeveloperMessage, SurfaceOp: opAppend(),
		Data: tcRaw(fmt.Sprintf(`{"turn":%d,"step":%d,"message":{"id":"d","role":"developer","content":[{"type":"tool-removal","toolName":"read"}],"source":{"kind":"tools"}}}`, turn, step))}
}

func lpResult(turn, step int64, callID string) AppendInput {
	return AppendInput{Type: TypeToolResult, SurfaceOp: opAppend(),
		Data: tcRaw(fmt.Sprintf(`{"turn":%d,"step":%d,"message":%s}`, turn, step, msgTool("r-"+callID, callID, "out")))}
}

func lpAttempt(turn, step int64) AppendInput {
	return evRaw(TypeAssistantAttempt, fmt.Sprintf(`{"turn":%d,"step":%d,"stream":[{"error":"overloaded"}]}`, turn, step))
}

// lpAborted is the error result of a call the harness never dispatched.
func lpAborted(callID string) AppendInput {
	m := `{"id":"r-` + callID + `","role":"tool","toolCallId":` + tcQuote(callID) + `,"isError":true,"content":[{"type":"text","text":"not run"}],"source":{"kind":"tool","callId":` + tcQuote(callID) + `}}`
	return AppendInput{Type: TypeToolResult, SurfaceOp: opAppend(),
		Data: tcRaw(`{"turn":1,"step":1,"message":` + m + `,"error":{"name":"Aborted","code":"` + sdk.ToolErrorAbortedBeforeDispatch + `"}}`)}
}

func isSurface(typ string) bool { cls, _ := coreClass(typ); return cls == classS }

func lpTodo() AppendInput { return evRaw(TypeTodoWrite, `{"todos":[]}`) }

// The prefixes the cases start from.
var (
	lpOpen    = []AppendInput{evTurnStart(1), evStepStart(1, 1)}
	lpPending = append(lpOpen[:2:2], evACalls(1, 1, "a", "c1", "c2"))
)

func lpWith(prefix []AppendInput, more ...AppendInput) []AppendInput {
	return append(prefix[:len(prefix):len(prefix)], more...)
}

// loopCases are the loop rules of docs/format.md, one refusal each: the
// events before, the refused event, its code and its Meta.
var loopCases = []struct {
	name  string
	setup []AppendInput
	in    AppendInput
	code  sdk.Code
	meta  map[string]string
}{
	{"turn/start while a turn is open", lpWith(nil, evTurnStart(1)), evTurnStart(2), sdk.CodeTurnAlreadyOpen, map[string]string{"open": "1", "turn": "2"}},
	{"turn/start not above the last turn", lpWith(nil, evTurnStart(2), evTurnEnd(2)), evTurnStart(2), sdk.CodeTurnNotIncreasing, map[string]string{"turn": "2", "last": "2"}},
	{"turn/end with no turn open", nil, evTurnEnd(1), sdk.CodeTurnNotOpen, map[string]string{"turn": "1"}},
	{"turn/end of another turn", lpWith(nil, evTurnStart(1)), evTurnEnd(7), sdk.CodeTurnNotOpen, map[string]string{"turn": "7", "open": "1"}},
	{"step/start with no turn open", lpWith(nil, evTurnStart(1), evTurnEnd(1)), evStepStart(1, 1), sdk.CodeTurnNotOpen, map[string]string{"turn": "1"}},
	{"user/message with no turn open", nil, evU("u", "hi"), sdk.CodeTurnNotOpen, nil},
	{"step/start while a step is open", lpOpen, evStepStart(1, 2), sdk.CodeStepAlreadyOpen, map[string]string{"step": "1"}},
	{"turn/end while a step is open", lpOpen, evTurnEnd(1), sdk.CodeStepAlreadyOpen, map[string]string{"step": "1"}},
	{"step/end with no step open", lpWith(nil, evTurnStart(1)), evStepEnd(1, 1), sdk.CodeStepNotOpen, map[string]string{"step": "1"}},
	{"step/end of another step", lpOpen, evStepEnd(1, 2), sdk.CodeStepNotOpen, map[string]string{"step": "2", "open": "1"}},
	{"assistant/message with no step open", lpWith(nil, evTurnStart(1)), evA("a", "hi"), sdk.CodeStepNotOpen, map[string]string{"step": "1"}},
	{"assistant/attempt with no step open", lpWith(nil, evTurnStart(1)), lpAttempt(1, 1), sdk.CodeStepNotOpen, map[string]string{"step": "1"}},
	{"tool/call with no step open", lpWith(nil, evTurnStart(1)), evToolCall(1, 1, "c1"), sdk.CodeStepNotOpen, map[string]string{"step": "1"}},
	{"tool/result with no step open", lpWith(nil, evTurnStart(1)), lpResult(1, 1, "c1"), sdk.CodeStepNotOpen, map[string]string{"step": "1"}},
	{"step/start not above the turn's steps", lpWith(nil, evTurnStart(1), evStepStart(1, 3), evStepEnd(1, 3)), evStepStart(1, 2), sdk.CodeStepNotIncreasing, map[string]string{"step": "2", "last": "3"}},
	{"step/start of step 0 (outside any step)", lpWith(nil, evTurnStart(1)), evStepStart(1, 0), sdk.CodeStepNotIncreasing, map[string]string{"step": "0", "last": "0"}},
	{"step/start of another turn", lpWith(nil, evTurnStart(1)), evStepStart(2, 1), sdk.CodeTurnStepMismatch, map[string]string{"turn": "2", "step": "1", "openTurn": "1"}},
	{"step/end of another turn", lpOpen, evStepEnd(2, 1), sdk.CodeTurnStepMismatch, map[string]string{"turn": "2", "step": "1", "openTurn": "1", "openStep": "1"}},
	{"assistant/message of another step", lpOpen, AppendInput{Type: TypeAssistantMessage, SurfaceOp: opAppend(), Data: tcRaw(dataAsst(1, 2, "a", blockText("x")))}, sdk.CodeTurnStepMismatch, map[string]string{"turn": "1", "step": "2", "openTurn": "1", "openStep": "1"}},
	{"tool/call of another turn", lpPending, evToolCall(2, 1, "c1"), sdk.CodeTurnStepMismatch, map[string]string{"turn": "2", "step": "1", "openTurn": "1", "openStep": "1"}},
	{"tool/result of another step", lpPending, lpResult(1, 2, "c1"), sdk.CodeTurnStepMismatch, map[string]string{"turn": "1", "step": "2", "openTurn": "1", "openStep": "1"}},
	{"assistant/attempt of another step", lpOpen, lpAttempt(1, 0), sdk.CodeTurnStepMismatch, map[string]string{"turn": "1", "step": "0", "openTurn": "1", "openStep": "1"}},
	{"system/message of a turn before the first", nil, lpSys(1, 0), sdk.CodeTurnStepMismatch, map[string]string{"turn": "1", "step": "0"}},
	{"developer/message of a step outside any", lpWith(nil, evTurnStart(1)), lpDev(1, 3), sdk.CodeTurnStepMismatch, map[string]string{"turn": "1", "step": "3", "openTurn": "1"}},
	{"system/message of another turn", lpOpen, lpSys(2, 0), sdk.CodeTurnStepMismatch, map[string]string{"turn": "2", "step": "0", "openTurn": "1", "openStep": "1"}},
	{"tool/call of a call not announced", lpPending, evToolCall(1, 1, "zz"), sdk.CodeToolCallNotAnnounced, map[string]string{"callId": "zz"}},
	{"tool/call recorded twice", lpWith(lpPending, evToolCall(1, 1, "c1")), evToolCall(1, 1, "c1"), sdk.CodeToolCallRepeated, map[string]string{"callId": "c1"}},
	{"a call announced twice in a step", lpWith(lpPending, lpResult(1, 1, "c1"), lpResult(1, 1, "c2")), evACalls(1, 1, "a2", "c3", "c1"), sdk.CodeToolCallRepeated, map[string]string{"callId": "c1"}},
	{"tool/result of a call not announced", lpPending, lpResult(1, 1, "zz"), sdk.CodeToolResultUnmatched, map[string]string{"callId": "zz"}},
	{"tool/result of a call answered", lpWith(lpPending, lpResult(1, 1, "c1")), lpResult(1, 1, "c1"), sdk.CodeToolResultRepeated, map[string]string{"callId": "c1", "resultSeq": "3"}},
	{"step/end with a call unanswered", lpWith(lpPending, lpResult(1, 1, "c2")), evStepEnd(1, 1), sdk.CodeToolCallsUnanswered, map[string]string{"callIds": `["c1"]`}},
	{"user/message with calls unanswered", lpPending, evU("u", "hi"), sdk.CodeToolCallsUnanswered, map[string]string{"callIds": `["c1","c2"]`}},
	{"assistant/message with calls unanswered", lpWith(lpPending, lpResult(1, 1, "c1")), evA("a2", "x"), sdk.CodeToolCallsUnanswered, map[string]string{"callIds": `["c2"]`}},
	{"system/message with calls unanswered", lpPending, lpSys(1, 0), sdk.CodeToolCallsUnanswered, map[string]string{"callIds": `["c1","c2"]`}},
	{"developer/message with calls unanswered", lpPending, lpDev(1, 1), sdk.CodeToolCallsUnanswered, map[string]string{"callIds": `["c1","c2"]`}},
}

// sameLoop reports whether two loop states are equal (an empty list of
// calls equals none; call ids compare by their bytes, not by where they
// are kept).
func sameLoop(a, b loopState) bool {
	return a.turn == b.turn && a.lastTurn == b.lastTurn && a.step == b.step && a.lastStep == b.lastStep &&
		slices.EqualFunc(a.calls, b.calls, func(x, y loopCall) bool {
			xid, yid := x.id, y.id
			x.id, y.id = nil, nil
			return bytes.Equal(xid, yid) && reflect.DeepEqual(x, y)
		})
}

// requireLoopError checks a loop refusal: its code, exactly its Meta, and
// a Detail that names the values.
func requireLoopError(t *testing.T, err error, code sdk.Code, meta map[string]string) *sdk.Error {
	t.Helper()
	e := requireCode(t, err, code)
	if len(meta) == 0 && len(e.Meta) != 0 || len(meta) > 0 && !reflect.DeepEqual(e.Meta, meta) {
		t.Errorf("%s Meta = %v, want %v", code, e.Meta, meta)
	}
	for _, v := range meta {
		requireDetail(t, e, v)
	}
	return e
}

// Each rule refuses its event, alone or as a group member that follows
// the event it depends on, and the refusal changes nothing: no seq, no
// log, surface or feed change, no loop state change.
func TestLoopRulesRefuseAndChangeNothing(t *testing.T) {
	for _, c := range loopCases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newTestSession(t)
			mustAppendAll(t, s, c.setup...)
			before, loop := stateOf(t, s), s.loop.clone()
			_, err := s.Append(context.Background(), c.in)
			requireLoopError(t, err, c.code, c.meta)
			requireUnchanged(t, before, s)
			if !sameLoop(s.loop, loop) {
				t.Errorf("a refusal changed the loop state: %+v, was %+v", s.loop, loop)
			}
		})
		t.Run(c.name+"/group member", func(t *testing.T) {
			s, _ := newTestSession(t)
			// The member before it is the last event of the setup, unless
			// both are surface events (a group holds one).
			first, setup := lpTodo(), c.setup
			if n := len(setup); n > 0 {
				if !isSurface(setup[n-1].Type) || !isSurface(c.in.Type) {
					first, setup = setup[n-1], setup[:n-1]
				}
			}
			mustAppendAll(t, s, setup...)
			before, loop := stateOf(t, s), s.loop.clone()
			evs, err := s.AppendGroup(context.Background(), []AppendInput{first, c.in})
			if evs != nil {
				t.Errorf("a refused group returned %d events", len(evs))
			}
			e := requireLoopError(t, err, c.code, c.meta)
			if e.Index == nil || *e.Index != 1 {
				t.Errorf("Index = %v, want 1", e.Index)
			}
			requireUnchanged(t, before, s)
			if !sameLoop(s.loop, loop) {
				t.Errorf("a refused group changed the loop state: %+v, was %+v", s.loop, loop)
			}
		})
	}
}

// The legal patterns: system and developer messages at step 0 before the
// first turn, between turns and within the open turn; parallel calls
// answered in any order, one of them never dispatched; an attempt in a
// step; a second message once every call is answered; a rewrite after
// step/end; a compaction checkpoint while calls wait.
func TestLoopLegalPatternsAreAccepted(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppendAll(t, s,
		lpSys(0, 0),                           // 0
		lpDev(0, 0),                           // 1
		evTurnStart(1),                        // 2
		evU("u", "go"),                        // 3
		lpSys(1, 0),                           // 4
		evStepStart(1, 1),                     // 5
		lpDev(1, 1),                           // 6
		lpDev(1, 0),                           // 7
		lpAttempt(1, 1),                       // 8
		evACalls(1, 1, "a", "c1", "c2", "c3"), // 9
		evToolCall(1, 1, "c2"),                // 10
		lpResult(1, 1, "c3"),                  // 11
		AppendInput{Type: TypeUserMessage, SurfaceOp: opReplace(3, 3), SourceEventSeqs: seqList(3),
			Data: tcRaw(`{"id":"k","role":"user","content":[{"type":"text","text":"summary"}],"source":{"kind":"compact-checkpoint","compactionId":"k"}}`)}, // 12
		evRaw(TypeCompactionStart, `{"compactionId":"k2","turn":null}`), // 13
		evRaw(TypeCompactionEnd, `{"compactionId":"k2","turn":null}`),   // 14
		lpAborted("c1"),            // 15
		evToolCall(1, 1, "c1"),     // 16: recorded after its result: the harness's business
		lpResult(1, 1, "c2"),       // 17
		evACalls(1, 1, "a2", "c4"), // 18
		lpResult(1, 1, "c4"),       // 19
		evA("a3", "done"),          // 20
		evStepEnd(1, 1),            // 21
		AppendInput{Type: TypeToolResult, SurfaceOp: opReplace(17, 17), SourceEventSeqs: seqList(17),
			Data: tcRaw(`{"turn":1,"step":1,"message":` + msgTool("r-c2", "c2", "(pruned)") + `}`)}, // 22
		evStepStart(1, 3), // 23
		evACalls(1, 3, "a4", "c1"),
		lpResult(1, 3, "c1"),
		evStepEnd(1, 3),
		evTurnEnd(1),
		lpSys(0, 0),
		lpDev(0, 0),
		evTurnStart(5),
		evStepStart(5, 1),
		evStepEnd(5, 1),
		evTurnEnd(5),
	)
	if err := checkLoopLog(s.Events().Slice()); err != nil {
		t.Fatalf("the accepted log does not replay through the loop rules: %v", err)
	}
}

// A group's members see the members before them: a turn opened, a step
// begun and a call announced by earlier members let the later ones in.
func TestLoopGroupMembersSeeEarlierMembers(t *testing.T) {
	s, _ := newTestSession(t)
	if _, err := s.AppendGroup(context.Background(), []AppendInput{
		evTurnStart(1), evStepStart(1, 1), evACalls(1, 1, "a", "c1"), evToolCall(1, 1, "c1"),
	}); err != nil {
		t.Fatal(err)
	}
	// The committed group's state is the session's: the call waits.
	rejectAppend(t, s, evStepEnd(1, 1), sdk.CodeToolCallsUnanswered, `["c1"]`)
	mustAppendAll(t, s, lpResult(1, 1, "c1"), evStepEnd(1, 1), evTurnEnd(1))
}

// A lenient session skips the loop rules, never the payload rules; it
// folds the loop state all the same.
func TestLenientSessionTakesAForeignLoop(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	mustAppendAll(t, s,
		evU("u", "no turn"),
		evTurnStart(1),
		evA("a", "no step"),
		lpResult(1, 1, "never-announced"),
		evTurnEnd(7),
		evTurnStart(1),
		evStepEnd(3, 3),
	)
	rejectAppend(t, s, lpResult(1, 1, ""), sdk.CodePayloadInvalid)
	if err := checkLoopLog(s.Events().Slice()); err == nil {
		t.Fatal("the checker passed a foreign loop")
	}
	// A strict session restores the same log (stored logs are read as they are).
	mustRestoreEvents(t, restoreOpts(), RestoreOptions{}, s.Events().Slice())
}

// The loop state of a restored log is the live one, so a resumed session
// continues where it stopped: checkpointed, extended and restored.
func TestLoopStateSurvivesRestore(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppendAll(t, s, lpWith(lpPending, evToolCall(1, 1, "c1"), lpResult(1, 1, "c2"))...)
	r := mustRestoreEvents(t, restoreOpts(), RestoreOptions{}, s.Events().Slice())
	if !sameLoop(r.loop, s.loop) {
		t.Fatalf("restored loop state %+v, live %+v", r.loop, s.loop)
	}
	rejectAppend(t, r, evStepEnd(1, 1), sdk.CodeToolCallsUnanswered, `["c1"]`)
	mustAppendAll(t, r, lpResult(1, 1, "c1"), evStepEnd(1, 1), evTurnEnd(1))
}

// checkLoopLog checks a whole log against the loop rules, as if each event
// were appended in turn: the test oracle of "every log the runtime writes
// keeps the rules".
func checkLoopLog(events []Event) error {
	l := newLoopState()
	for _, e := range events {
		if err := l.check(e.r); err != nil {
			return fmt.Errorf("seq %d (%s): %w", e.r.seq, e.r.typ, err)
		}
		l.fold(e.r)
	}
	return nil
}

// Random strict logs, cut at every seq: the crash repair of every prefix
// and the fork at every seq give logs (prefix, closers, marker) that keep
// the loop rules, and a session restored from them appends on strictly.
// Every prefix, repaired log and fork is judged twice, by the
// implementation (check and fold) and by the test's own model of the
// docs/format.md table (refLoop), which must agree.
func TestPropertyRepairAndForkKeepTheLoopRules(t *testing.T) {
	const seeds, length = 40, 60
	t.Logf("seeds 7000 … %d, %d events each", 7000+seeds-1, length)
	for seed := range uint64(seeds) {
		g := newLogGen(t, seed+7000)
		for range length {
			g.next()
		}
		events := g.s.Events().Slice()
		if err := requireOraclesAgree(t, fmt.Sprintf("seed %d", seed+7000), events); err != nil {
			t.Fatalf("seed %d: the generated log breaks the loop rules: %v", seed+7000, err)
		}
		for k := range len(events) + 1 {
			requireOraclesAgree(t, fmt.Sprintf("seed %d, the prefix of %d events", seed+7000, k), events[:k])
			repaired := append(events[:k:k], ResumeBatch(events[:k], sdk.Torn{}, tT0)...)
			if err := requireOraclesAgree(t, fmt.Sprintf("seed %d, the repair of the prefix of %d events", seed+7000, k), repaired); err != nil {
				t.Fatalf("seed %d: the repair of the prefix of %d events breaks the loop rules: %v", seed+7000, k, err)
			}
			if k == len(events) {
				break
			}
			b := sdk.Seq(k)
			seed2, _, err := ForkSeed(events, &b, tT0)
			if err != nil {
				t.Fatal(err)
			}
			if err := requireOraclesAgree(t, fmt.Sprintf("seed %d, the fork at seq %d", seed+7000, k), seed2); err != nil {
				t.Fatalf("seed %d: the fork at seq %d breaks the loop rules: %v", seed+7000, k, err)
			}
		}
	}
}

// The check of an accepted event allocates nothing: it reads the parse
// the append made and compares call ids in place.
func TestLoopCheckDoesNotAllocate(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppendAll(t, s, lpWith(lpPending, lpResult(1, 1, "c1"))...)
	for _, in := range []AppendInput{lpResult(1, 1, "c2"), evToolCall(1, 1, "c2"), lpAttempt(1, 1), lpTodo()} {
		r, err := s.prepare(in, s.nextSeq(), nil, s.folds.header != nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() {
			if err := s.checkLoop(&s.loop, r); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("checking %s allocates %.0f times", in.Type, n)
		}
	}
}

// Folding an assistant/message that announces calls keeps each id as a
// view into the record's envelope: it does not allocate (once the calls'
// slice has room), and the ids read back as announced.
func TestLoopFoldDoesNotAllocate(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppendAll(t, s, lpOpen...)
	r, err := s.prepare(evACalls(1, 1, "a", "c1", "c\"q"), s.nextSeq(), nil, s.folds.header != nil)
	if err != nil {
		t.Fatal(err)
	}
	l := s.loop.clone()
	if n := testing.AllocsPerRun(100, func() {
		l.dropCalls()
		l.fold(r)
	}); n != 0 {
		t.Errorf("folding an assistant/message with two calls allocates %.0f times", n)
	}
	if len(l.calls) != 2 || l.calls[0].idString() != "c1" || l.calls[1].idString() != "c\"q" {
		t.Errorf("calls after the fold: %+v", l.calls)
	}
}

// A fork or salvage child keeps its source's protocol: a lenient source
// gives a lenient child, whose loop rules stay off.
func TestForkHeaderInheritsTheProtocol(t *testing.T) {
	for _, p := range []string{"", sdk.ProtocolLenient} {
		if h := ForkHeader(sdk.Header{ID: "src", Protocol: p}, "child", 3, tT0); h.Protocol != p {
			t.Errorf("ForkHeader of a %q source has protocol %q", p, h.Protocol)
		}
	}
	src, _ := newTestSession(t, bareMessages)
	mustAppendAll(t, src, evU("u", "no turn"))
	seed, inherited, err := ForkSeed(src.Events().Slice(), nil, tT0)
	if err != nil {
		t.Fatal(err)
	}
	child := mustRestoreEvents(t, restoreOpts(func(o *Options) { o.Header = ForkHeader(src.Header(), "child", inherited, tT0) }), RestoreOptions{}, seed)
	mustAppend(t, child, evU("u2", "still no turn"))
}
