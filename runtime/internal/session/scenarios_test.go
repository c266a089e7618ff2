package session

// The acceptance tests of the session core, each named after the rule it
// checks. Store-level parts (Create, Open, Fork
// requests, the feed, backends) are exercised through the pure functions the
// store composes them from (ResumeBatch, OpenTurnClosers, ForkSeed,
// ForkHeader, SeedWithMarker, RestoreEvents); the commit feed is Options.OnCommit.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// The recovery texts (docs/architecture.md), spelled out here so that the
// wording itself is checked.
const (
	specInterruptedUnknown = "The session stopped after this tool call started and before its result was saved, so the outcome is unknown. Only repeat it when repeating is harmless (read-only or idempotent work); for anything with side effects, first confirm what actually happened or ask the user. Never repeat it blindly."
	specInterruptedNotRun  = "The session stopped before this tool call started. Run it again if you still need it."
	specForkedUnknown      = "This branch was copied from another session after this tool call started but before its result; the original session may have finished it since. Only repeat it when repeating is harmless (read-only or idempotent work); for anything with side effects, first confirm what actually happened or ask the user. Never repeat it blindly."
	specForkedNotRun       = "This branch was copied from another session before this tool call started; the original session may have run it since. Only repeat it when repeating is harmless (read-only or idempotent work); for anything with side effects, first confirm what actually happened or ask the user. Never repeat it blindly."
)

func requireNodes(t testing.TB, s *Session, want ...sdk.Seq) SurfaceView {
	t.Helper()
	sv, err := s.Surface()
	if err != nil {
		t.Fatalf("Surface: %v", err)
	}
	if got := sv.Nodes(); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("surface nodes = %v, want %v", got, want)
	}
	return sv
}

func requireGenerations(t testing.TB, s *Session, replace, content uint64) {
	t.Helper()
	sv, err := s.Surface()
	if err != nil {
		t.Fatalf("Surface: %v", err)
	}
	if sv.ReplaceGeneration() != replace || sv.ContentGeneration() != content {
		t.Errorf("generations = (replace %d, content %d), want (%d, %d)", sv.ReplaceGeneration(), sv.ContentGeneration(), replace, content)
	}
	ml, err := s.Messages()
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	if ml.Generation() != content {
		t.Errorf("Messages().Generation() = %d, want %d", ml.Generation(), content)
	}
}

// requireMessages asserts that Messages() yields exactly the messages of the
// given node seqs, each equal to the message that node's event records.
func requireMessages(t testing.TB, s *Session, nodes ...sdk.Seq) MessageList {
	t.Helper()
	ml, err := s.Messages()
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	if ml.Len() != len(nodes) {
		t.Fatalf("Messages().Len() = %d (%s), want %d (nodes %v)", ml.Len(), messagesJSON(ml), len(nodes), nodes)
	}
	for i, n := range nodes {
		m := ml.At(i)
		if m.NodeSeq() != n {
			t.Errorf("message %d belongs to node %d, want %d", i, m.NodeSeq(), n)
		}
		e, ok := s.Event(n)
		if !ok {
			t.Fatalf("Event(%d) missing", n)
		}
		want, ok := MessageOf(e, nil)
		if !ok {
			t.Fatalf("MessageOf(%d) yields none", n)
		}
		if !bytes.Equal(m.JSON(), want.JSON()) {
			t.Errorf("message %d = %s, want %s", i, m.JSON(), want.JSON())
		}
	}
	return ml
}

func TestAppendAssignsContiguousSeqs(t *testing.T) {
	s, clock := newTestSession(t)
	if s.Len() != 0 || s.FirstLiveSeq() != 0 || s.InheritedEventCount() != 0 || s.PendingRepair() != 0 || s.ReadOnly() || s.Closed() || s.Fenced() != nil || s.ID() != "s1" || s.Header().ID != "s1" {
		t.Errorf("a new session is not empty and live")
	}
	if ml, err := s.Messages(); err != nil || ml.Len() != 0 {
		t.Errorf("Messages() of an empty session = %d, %v", ml.Len(), err)
	}
	e0 := mustAppend(t, s, evTurnStart(1))
	clock.Advance(7)
	e1 := mustAppend(t, s, evU("u1", "hello"))
	if e0.Seq() != 0 || e1.Seq() != 1 {
		t.Fatalf("seqs = %d, %d; want 0, 1", e0.Seq(), e1.Seq())
	}
	if e0.Time() != tT0 || e1.Time() != tT0+7 {
		t.Errorf("times = %d, %d; want the fake clock's %d, %d", e0.Time(), e1.Time(), tT0, tT0+7)
	}
	if s.Len() != 2 {
		t.Errorf("Len() = %d, want 2", s.Len())
	}
	requireNodes(t, s, 1)
	requireMessages(t, s, 1)
	requireGenerations(t, s, 0, 0)
	ml, _ := s.Messages()
	if got, want := string(ml.At(0).JSON()), dataUser("u1", "hello"); got != want {
		t.Errorf("message 1 = %s, want %s", got, want)
	}
	if ml.At(0).ID() != "u1" || ml.At(0).Role() != "user" {
		t.Errorf("message id/role = %q/%q", ml.At(0).ID(), ml.At(0).Role())
	}
	wantEnv := fmt.Sprintf(`{"seq":1,"time":%d,"type":"user/message","data":%s,"surfaceOp":"append"}`, tT0+7, dataUser("u1", "hello"))
	if got := string(e1.Envelope()); got != wantEnv {
		t.Errorf("envelope = %s\nwant %s", got, wantEnv)
	}
	if got, ok := s.Event(1); !ok || !bytes.Equal(got.Envelope(), e1.Envelope()) {
		t.Errorf("Event(1) = %v, %v", got, ok)
	}
	if _, ok := s.Event(2); ok {
		t.Errorf("Event(2) exists before it was appended")
	}
	if tr := s.Transcript(); tr.Len() != 1 || tr.At(0).Seq != 1 || tr.At(0).Type != TypeUserMessage {
		t.Errorf("transcript = %+v, want the user message at 1", tr)
	}
	if feedLen(s) != 2 {
		t.Errorf("commit feed delivered %d events, want 2", feedLen(s))
	}
	requireReplayEqual(t, s)
}

func TestSurfaceEventWithoutMarkerIsRefused(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppendAll(t, s, evTurnStart(1), evStepStart(1, 1))
	for _, in := range []AppendInput{
		{Type: TypeUserMessage, Data: tcRaw(dataUser("u1", "x"))},
		{Type: TypeAssistantMessage, Data: tcRaw(dataAsst(1, 1, "a1", blockText("x")))},
		{Type: TypeSystemMessage, Data: lpSys(1, 0).Data},
	} {
		t.Run(in.Type, func(t *testing.T) {
			rejectAppend(t, s, in, sdk.CodeSurfaceMarkerRequired, in.Type)
		})
	}
	mustAppend(t, s, evACalls(1, 1, "a2", "c1"))
	t.Run(TypeToolResult, func(t *testing.T) {
		rejectAppend(t, s, AppendInput{Type: TypeToolResult, Data: tcRaw(dataResult("r1", "c1", "x"))}, sdk.CodeSurfaceMarkerRequired, TypeToolResult)
	})
	// The same rule on restore.
	rejectRestore(t, restoreOpts(), RestoreOptions{}, [][]byte{envLine(0, TypeUserMessage, dataUser("u1", "x"), "")},
		sdk.CodeCorruptLog, sdk.CodeSurfaceMarkerRequired, 0, "user/message")
}

func TestSeedRefusesASurfaceOpOnALogOnlyEvent(t *testing.T) {
	envs := [][]byte{envLine(0, TypeTurnStart, `{"turn":1}`, `,"surfaceOp":"append"`)}
	rejectRestore(t, restoreOpts(), RestoreOptions{Source: FromSeed}, envs, sdk.CodeSeedInvalid, sdk.CodeSurfaceOpNotAllowed, 0, "turn/start")
	// The same seed given as parsed events.
	ev, err := ParseEnvelope(envs[0], 0)
	if err != nil {
		t.Fatalf("ParseEnvelope: %v", err)
	}
	_, err = RestoreEvents(context.Background(), restoreOpts(), RestoreOptions{Source: FromSeed}, []Event{ev})
	w := requireCode(t, err, sdk.CodeSeedInvalid)
	if (w.Index == nil || *w.Index != 0) || sdk.CodeOf(err) != sdk.CodeSeedInvalid {
		t.Errorf("SEED_INVALID %v names the wrong index, outer %s", w, sdk.CodeOf(err))
	}
	requireDetail(t, requireCode(t, err, sdk.CodeSurfaceOpNotAllowed), "turn/start")
	// And from storage: CORRUPT_LOG.
	rejectRestore(t, restoreOpts(), RestoreOptions{}, envs, sdk.CodeCorruptLog, sdk.CodeSurfaceOpNotAllowed, 0, "turn/start")
}

func TestReplaceSwapsASurfaceRange(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	mustAppend(t, s, evU("u0", "first"))
	mustAppend(t, s, evA("a1", "answer"))
	requireGenerations(t, s, 0, 0)
	e2 := mustAppend(t, s, replacing(evU("u2", "summary"), 0, 1, 0, 1))
	requireNodes(t, s, 2)
	requireGenerations(t, s, 1, 1)
	requireMessages(t, s, 2)
	if op, ok := e2.SurfaceOp(); !ok || op != (SurfaceOp{Replace: true, StartSeq: 0, EndSeq: 1}) {
		t.Errorf("SurfaceOp() = %+v, %v", op, ok)
	}
	if got := e2.SourceEventSeqs(); !slices.Equal(got, []sdk.Seq{0, 1}) {
		t.Errorf("SourceEventSeqs() = %v", got)
	}
	wantEnv := fmt.Sprintf(`{"seq":2,"time":%d,"type":"user/message","data":%s,"surfaceOp":{"op":"replace","startSeq":0,"endSeq":1},"sourceEventSeqs":[0,1]}`, tT0, dataUser("u2", "summary"))
	if got := string(e2.Envelope()); got != wantEnv {
		t.Errorf("envelope = %s\nwant %s", got, wantEnv)
	}
	f, err := Fold(context.Background(), s.Events().Slice(), nil)
	if err != nil {
		t.Fatalf("Fold: %v", err)
	}
	want := []Replacement{{Seq: 2, StartSeq: 0, EndSeq: 1, Shadowed: []sdk.Seq{0, 1}}}
	if !slices.EqualFunc(f.Replacements, want, func(a, b Replacement) bool {
		return a.Seq == b.Seq && a.StartSeq == b.StartSeq && a.EndSeq == b.EndSeq && slices.Equal(a.Shadowed, b.Shadowed)
	}) {
		t.Errorf("Fold().Replacements = %+v, want %+v", f.Replacements, want)
	}
	if !slices.Equal(f.Nodes, []sdk.Seq{2}) {
		t.Errorf("Fold().Nodes = %v", f.Nodes)
	}
	// The transcript keeps the shadowed originals and never shows the replacement.
	tr := s.Transcript()
	var trSeqs []sdk.Seq
	for _, e := range tr.All() {
		trSeqs = append(trSeqs, e.Seq)
	}
	if !slices.Equal(trSeqs, []sdk.Seq{0, 1}) {
		t.Errorf("transcript seqs = %v, want [0 1]", trSeqs)
	}
	sv, _ := s.Surface()
	if sv.Contains(0) || sv.Contains(1) || !sv.Contains(2) {
		t.Errorf("Contains: 0=%v 1=%v 2=%v", sv.Contains(0), sv.Contains(1), sv.Contains(2))
	}
	if i, ok := sv.IndexOf(2); !ok || i != 0 {
		t.Errorf("IndexOf(2) = %d, %v", i, ok)
	}
	requireReplayEqual(t, s)
}

func TestReplaceMustCoverEveryShadowedNode(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	mustAppend(t, s, evU("u0", "first"))
	mustAppend(t, s, evA("a1", "answer"))
	e := rejectAppend(t, s, replacing(evU("u2", "summary"), 0, 1, 0), sdk.CodeReplaceCoverage, "missing 1")
	if (e.Seq == nil || *e.Seq != 2) || e.SessionID != "s1" {
		t.Errorf("error %v; want seq 2, session s1", e)
	}
	// Several missing nodes are listed ascending, whatever the sources' order.
	mustAppend(t, s, evU("u2", "x"))
	mustAppend(t, s, evU("u3", "y"))
	rejectAppend(t, s, replacing(evU("u4", "s"), 0, 3, 2, 0), sdk.CodeReplaceCoverage, "missing 1, 3")
	// No sources at all: every shadowed node is missing.
	rejectAppend(t, s, replacing(evU("u4", "s"), 1, 2), sdk.CodeReplaceCoverage, "missing 1, 2")
}

func TestReplaceEndpointsMustBeOnTheSurface(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	mustAppendAll(t, s, evU("u0", "a"), evA("a1", "b"), replacing(evU("u2", "c"), 0, 1, 0, 1))
	rejectAppend(t, s, replacing(evU("u3", "d"), 0, 0, 0), sdk.CodeReplaceStartNotFound, "startSeq 0")
	rejectAppend(t, s, replacing(evU("u3", "d"), 2, 1, 2, 1), sdk.CodeReplaceEndNotFound, "endSeq 1")
}

func TestReplaceRefusesAReversedSpan(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	mustAppendAll(t, s, evU("u0", "a"), evA("a1", "b"), evU("u2", "c"))
	rejectAppend(t, s, replacing(evU("u3", "d"), 2, 0, 0, 1, 2), sdk.CodeReplaceReversed,
		"startSeq 2 at position 2", "endSeq 0 at position 0")
}

func TestReplaceSpanFollowsSurfaceOrderNotSeqOrder(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	mustAppendAll(t, s, evU("u0", "a"), evA("a1", "b"), evU("u2", "c"))
	mustAppend(t, s, replacing(evU("u3", "d"), 0, 0, 0))
	requireNodes(t, s, 3, 1, 2)
	// Numerically ascending but reversed on the surface.
	rejectAppend(t, s, replacing(evU("u4", "e"), 1, 3, 1, 3), sdk.CodeReplaceReversed,
		"startSeq 1 at position 1", "endSeq 3 at position 0")
	mustAppend(t, s, replacing(evU("u4", "e"), 3, 1, 3, 1))
	requireNodes(t, s, 4, 2)
	requireMessages(t, s, 4, 2)
	requireGenerations(t, s, 2, 2)
	requireReplayEqual(t, s)
}

func TestSourcesAndEndpointsMustBeEarlier(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	mustAppendAll(t, s, evU("u0", "a"), evA("a1", "b"), evU("u2", "c"))
	rejectAppend(t, s, withSources(evU("u3", "d"), 5), sdk.CodeSourcesNotEarlier, "element 5", "seq 3")
	rejectAppend(t, s, withSources(evU("u3", "d"), 3), sdk.CodeSourcesNotEarlier, "element 3", "seq 3")
	rejectAppend(t, s, replacing(evU("u3", "d"), 3, 3, 2), sdk.CodeReplaceEndpointNotEarlier, "seq 3", "startSeq 3", "endSeq 3")
	rejectAppend(t, s, replacing(evU("u3", "d"), 0, 4, 0), sdk.CodeReplaceEndpointNotEarlier, "seq 3", "startSeq 0", "endSeq 4")
}

func TestSourcesMustBeDistinctAndNonEmpty(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	mustAppendAll(t, s, evU("u0", "a"), evA("a1", "b"), evU("u2", "c"))
	rejectAppend(t, s, withSources(evU("u3", "d"), 1, 1), sdk.CodeSourcesDuplicate, "1")
	rejectAppend(t, s, replacing(evU("u3", "d"), 1, 2, 1, 2, 1), sdk.CodeSourcesDuplicate, "lists 1")
	rejectAppend(t, s, withSources(evU("u3", "d")), sdk.CodeSourcesEmpty, "seq 3")
	// Sources on an append are allowed when they are valid (a checkpoint cites).
	e := mustAppend(t, s, withSources(evU("u3", "d"), 0, 2))
	if e.Seq() != 3 {
		t.Errorf("after rejections the next seq is %d, want 3: a rejection consumed a seq", e.Seq())
	}
	if !slices.Equal(e.SourceEventSeqs(), []sdk.Seq{0, 2}) {
		t.Errorf("SourceEventSeqs() = %v", e.SourceEventSeqs())
	}
	requireNodes(t, s, 0, 1, 2, 3)
}

func TestAssistantMessagesTakeNoSources(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppendAll(t, s, evTurnStart(1), evStepStart(1, 1), evU("u2", "a"))
	rejectAppend(t, s, withSources(evA("a3", "b"), 2), sdk.CodeAssistantSourcesForbidden, "seq 3")
	rejectAppend(t, s, withSources(evA("a3", "b")), sdk.CodeAssistantSourcesForbidden, "seq 3")
	rejectAppend(t, s, replacing(evA("a3", "b"), 2, 2, 2), sdk.CodeAssistantSourcesForbidden, "seq 3")
}

// toolResultFull is a tool/result with error and meta, as a crash closer or a
// failing tool writes it.
func toolResultFull(id, callID, text, meta string, turn int64, errCode string) string {
	return fmt.Sprintf(`{"turn":%d,"step":1,"message":{"id":%s,"role":"tool","toolCallId":%s,"isError":true,"content":[%s],"source":{"kind":"tool","callId":%s}},"error":{"name":"ToolError","code":%s},"meta":%s}`,
		turn, tcQuote(id), tcQuote(callID), blockText(text), tcQuote(callID), tcQuote(errCode), meta)
}

func TestToolResultRewriteRules(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	mustAppend(t, s, evU("u0", "go"))
	mustAppend(t, s, evACalls(1, 1, "a1", "c1", "c2"))
	orig := toolResultFull("r2", "c1", strings.Repeat("long output ", 20), `{"k":1,"files":["a","b"]}`, 1, "E1")
	mustAppend(t, s, AppendInput{Type: TypeToolResult, Data: tcRaw(orig), SurfaceOp: opAppend()})
	requireNodes(t, s, 0, 1, 2)

	rewrite := func(data string, start, end sdk.Seq, sources ...sdk.Seq) AppendInput {
		return replacing(AppendInput{Type: TypeToolResult, Data: tcRaw(data)}, start, end, sources...)
	}
	t.Run("only content may change", func(t *testing.T) {
		for _, c := range []struct{ name, data, ptr string }{
			{"meta", toolResultFull("r2", "c1", "short", `{"k":2,"files":["a","b"]}`, 1, "E1"), "/meta/k"},
			{"meta removed element", toolResultFull("r2", "c1", "short", `{"k":1,"files":["a"]}`, 1, "E1"), "/meta/files"},
			{"error", toolResultFull("r2", "c1", "short", `{"k":1,"files":["a","b"]}`, 1, "E2"), "/error/code"},
			{"turn", toolResultFull("r2", "c1", "short", `{"k":1,"files":["a","b"]}`, 2, "E1"), "/turn"},
			{"message id", toolResultFull("r9", "c1", "short", `{"k":1,"files":["a","b"]}`, 1, "E1"), "/message/id"},
		} {
			t.Run(c.name, func(t *testing.T) {
				rejectAppend(t, s, rewrite(c.data, 2, 2, 2), sdk.CodeToolResultRewriteOnlyContent, c.ptr)
			})
		}
	})
	// Value-equal (members reordered, 1 vs 1.0) and only content changed: accepted.
	short := fmt.Sprintf(`{"step":1,"turn":1,"meta":{"files":["a","b"],"k":1.0},"error":{"code":"E1","name":"ToolError"},"message":{"role":"tool","id":"r2","toolCallId":"c1","isError":true,"content":[%s],"source":{"callId":"c1","kind":"tool"}}}`, blockText("short"))
	mustAppend(t, s, rewrite(short, 2, 2, 2))
	requireNodes(t, s, 0, 1, 3)
	ml := requireMessages(t, s, 0, 1, 3)
	if !strings.Contains(string(ml.At(2).JSON()), `"text":"short"`) {
		t.Errorf("rewritten message = %s", ml.At(2).JSON())
	}
	requireGenerations(t, s, 1, 1)

	mustAppend(t, s, evR("r4", "c2", "second"))
	requireNodes(t, s, 0, 1, 3, 4)
	rejectAppend(t, s, rewrite(dataResult("r4", "c2", "x"), 3, 4, 3, 4), sdk.CodeToolResultRewriteSingle, "shadows 2")
	rejectAppend(t, s, rewrite(dataResult("r4", "c2", "x"), 0, 0, 0), sdk.CodeToolResultRewriteTarget, "seq 0", "user/message")
	rejectAppend(t, s, rewrite(dataResult("a1", "c2", "x"), 1, 1, 1), sdk.CodeToolResultRewriteTarget, "assistant/message")
	// A rewrite of a rewrite is a rewrite of the current node.
	mustAppend(t, s, rewrite(dataResult("r4", "c2", "2nd"), 4, 4, 4))
	requireNodes(t, s, 0, 1, 3, 5)
	requireReplayEqual(t, s)
}

func TestSystemNode0IsProtected(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	mustAppendAll(t, s, evSys("s0", "be brief"), evU("u1", "a"), evA("a2", "b"))
	rejectAppend(t, s, replacing(evU("u3", "sum"), 0, 2, 0, 1, 2), sdk.CodeSystemNode0Protected, "user/message", "0..2")
	rejectAppend(t, s, replacing(evSys("s3", "new"), 0, 1, 0, 1), sdk.CodeSystemNode0Protected, "system/message", "0..1")
	rejectAppend(t, s, replacing(evU("u3", "sum"), 0, 0, 0), sdk.CodeSystemNode0Protected, "user/message", "0..0")
	mustAppend(t, s, replacing(evSys("s3", "new prompt"), 0, 0, 0))
	requireNodes(t, s, 3, 1, 2)
	// The replacing system message is node 0 now, and protected in turn.
	rejectAppend(t, s, replacing(evU("u4", "sum"), 3, 3, 3), sdk.CodeSystemNode0Protected, "user/message")
	// A system message at position ≥ 1 is unprotected.
	mustAppend(t, s, evSys("s4", "late"))
	mustAppend(t, s, replacing(evU("u5", "compacted"), 2, 4, 2, 4))
	requireNodes(t, s, 3, 1, 5)
	// Span starting at node 0 when node 0 is not a system message: allowed.
	s2, _ := newTestSession(t, bareMessages)
	mustAppendAll(t, s2, evU("u0", "a"), evSys("s1", "b"))
	mustAppend(t, s2, replacing(evU("u2", "c"), 0, 1, 0, 1))
	requireNodes(t, s2, 2)
	requireReplayEqual(t, s)
}

func TestEmptyAssistantContentDerivesNoMessage(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	mustAppend(t, s, evU("u0", "a"))
	e1 := mustAppend(t, s, evAEmpty("a1"))
	mustAppend(t, s, evU("u2", "b"))
	requireNodes(t, s, 0, 1, 2)
	requireMessages(t, s, 0, 2)
	if m, ok := MessageOf(e1, nil); ok || !m.IsZero() {
		t.Errorf("MessageOf(empty assistant) = %v, %v; want none", m, ok)
	}
	// The transcript records it, with its empty message.
	tr := s.Transcript()
	if tr.Len() != 3 || tr.At(1).Seq != 1 || tr.At(1).Message.IsZero() || tr.At(1).Message.ID() != "a1" {
		t.Errorf("transcript = %+v", tr)
	}
	// A tool result with empty content, and a user message with empty content, still yield a message.
	e3 := mustAppend(t, s, AppendInput{Type: TypeToolResult, SurfaceOp: opAppend(),
		Data: tcRaw(`{"turn":1,"step":1,"message":{"id":"r3","role":"tool","toolCallId":"c","content":[],"source":{"kind":"tool","callId":"c"}}}`)})
	e4 := mustAppend(t, s, AppendInput{Type: TypeUserMessage, SurfaceOp: opAppend(),
		Data: tcRaw(`{"id":"u4","role":"user","content":[],"source":{"kind":"prompt"}}`)})
	for _, e := range []Event{e3, e4} {
		if _, ok := MessageOf(e, nil); !ok {
			t.Errorf("MessageOf(%s with empty content) yields none", e.Type())
		}
	}
	requireMessages(t, s, 0, 2, 3, 4)
	// An empty node keeps its position: it can be an endpoint of a replace.
	mustAppend(t, s, replacing(evU("u5", "s"), 1, 1, 1))
	requireNodes(t, s, 0, 5, 2, 3, 4)
	requireReplayEqual(t, s)
}

func TestEventJSONIsKeptLossless(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppend(t, s, evTurnStart(1))
	todo := func(v string) AppendInput { return evRaw(TypeTodoWrite, `{"todos":[],"plugin:v":`+v+`}`) }
	for _, c := range []struct {
		lit   string
		code  sdk.Code
		parts []string
	}{
		{"-0", sdk.CodeJSONNegativeZero, []string{`"-0"`, "/plugin:v"}},
		{"-0.0e3", sdk.CodeJSONNegativeZero, []string{`"-0.0e3"`}},
		{"-1e-400", sdk.CodeJSONNegativeZero, []string{`"-1e-400"`}},
		{"1e400", sdk.CodeJSONNumberNotFinite, []string{`"1e400"`, "/plugin:v"}},
		{"9007199254740992", sdk.CodeJSONUnsafeInteger, []string{`"9007199254740992"`, "/plugin:v"}},
		{"-9007199254740992", sdk.CodeJSONUnsafeInteger, []string{`"-9007199254740992"`}},
		{`{"a":1,"\u0061":2}`, sdk.CodeJSONDuplicateKey, []string{`"a"`, "/plugin:v"}},
		{"NaN", sdk.CodeJSONSyntax, []string{"NaN"}},
		{"Infinity", sdk.CodeJSONSyntax, []string{"Infinity"}},
		{"+1", sdk.CodeJSONSyntax, []string{"+1"}},
		{"01", sdk.CodeJSONSyntax, []string{"01"}},
		{"\"\xff\"", sdk.CodeJSONInvalidUTF8, []string{"offset"}},
		{`"\ud800"`, sdk.CodeJSONInvalidUTF8, []string{"offset"}},
	} {
		t.Run(c.lit, func(t *testing.T) {
			rejectAppend(t, s, todo(c.lit), c.code, c.parts...)
		})
	}
	for _, lit := range []string{"9007199254740991", "-9007199254740991", "9007199254740992.0", "1e-400", "1E3", "1.50"} {
		e := mustAppend(t, s, todo(lit))
		if got, want := string(e.Data()), `{"todos":[],"plugin:v":`+lit+`}`; got != want {
			t.Errorf("stored %s, want %s", got, want)
		}
	}

	// Nesting: 512 accepted, 513 rejected (the outermost container of data is depth 1).
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	blob := func(data string) AppendInput {
		return AppendInput{Type: "ext/blob", Data: tcRaw(data), Ignorable: true}
	}
	mustAppend(t, s, blob(nest(512)))
	rejectAppend(t, s, blob(nest(513)), sdk.CodeJSONTooDeep, strings.Repeat("/0", 512))

	// Size: over MaxEventBytes (1 KiB here) after canonical encoding.
	small, _ := newTestSession(t, func(o *Options) { o.MaxEventBytes = sdk.MinMaxEventBytes })
	fits := `"` + strings.Repeat("x", 900) + `"`
	mustAppend(t, small, blob(fits))
	tooBig := `"` + strings.Repeat("x", 1024) + `"`
	rejectAppend(t, small, blob(tooBig), sdk.CodeEventTooLarge, "1024", "ext/blob")

	// Exact preservation; neither the caller's slice nor Data()'s copy aliases the log.
	input := []byte(`{"b":1,"a":1.50}`)
	e := mustAppend(t, s, AppendInput{Type: "ext/blob", Data: input, Ignorable: true})
	if string(e.Data()) != `{"b":1,"a":1.50}` {
		t.Fatalf("stored %s", e.Data())
	}
	envBefore := e.Envelope()
	for i := range input {
		input[i] = 'X'
	}
	d := e.Data()
	for i := range d {
		d[i] = 'Y'
	}
	env := e.Envelope()
	env[0] = 'Z'
	got, _ := s.Event(e.Seq())
	if !bytes.Equal(got.Envelope(), envBefore) || string(got.Data()) != `{"b":1,"a":1.50}` {
		t.Errorf("mutating caller or returned slices changed the log: %s", got.Envelope())
	}
	if !strings.Contains(string(envBefore), `"data":{"b":1,"a":1.50}`) {
		t.Errorf("envelope %s does not keep the data bytes", envBefore)
	}
	// Escapes are normalized; the canonical form is idempotent.
	e = mustAppend(t, s, AppendInput{Type: "ext/blob", Ignorable: true, Data: tcRaw(` { "s" : "\u0041\/\u00e9\n\u2028\u001f" } `)})
	if got, want := string(e.Data()), "{\"s\":\"A/é\\n\u2028\\u001f\"}"; got != want {
		t.Errorf("canonical data = %q, want %q", got, want)
	}
	e = mustAppend(t, s, AppendInput{Type: "ext/blob", Ignorable: true, Data: tcRaw(`"\u0008\u000c\u000d\u0009\"\\\u007f\u003c&>"`)})
	if got, want := string(e.Data()), "\"\\b\\f\\r\\t\\\"\\\\\x7f<&>\""; got != want {
		t.Errorf("canonical escapes = %q, want %q", got, want)
	}
	again := mustAppend(t, s, AppendInput{Type: "ext/blob", Ignorable: true, Data: e.Data()})
	if !bytes.Equal(again.Data(), e.Data()) {
		t.Errorf("canonical form is not idempotent: %q → %q", e.Data(), again.Data())
	}
	requireReplayEqual(t, s)
}

// ---- crash repair ----

// closerResult is the closed shape of a closer tool/result's data (docs/architecture.md).
type closerResult struct {
	Turn    int64 `json:"turn"`
	Step    int64 `json:"step"`
	Message struct {
		ID         string `json:"id"`
		Role       string `json:"role"`
		ToolCallID string `json:"toolCallId"`
		IsError    *bool  `json:"isError"`
		Source     struct {
			Kind   string `json:"kind"`
			CallID string `json:"callId"`
		} `json:"source"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"message"`
	Error struct {
		Name string `json:"name"`
		Code string `json:"code"`
	} `json:"error"`
}

func requireCloserResult(t testing.TB, e Event, seq sdk.Seq, time, turn, step int64, callID, cause string, started bool, callSeq sdk.Seq) {
	t.Helper()
	if e.Type() != TypeToolResult || e.Seq() != seq || e.Time() != time {
		t.Fatalf("closer = %s seq %d time %d; want tool/result seq %d time %d", e.Type(), e.Seq(), e.Time(), seq, time)
	}
	if op, ok := e.SurfaceOp(); !ok || op.Replace {
		t.Errorf("closer surfaceOp = %+v, %v; want append", op, ok)
	}
	dec := json.NewDecoder(bytes.NewReader(e.Data()))
	dec.DisallowUnknownFields()
	var d closerResult
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("closer data %s: %v", e.Data(), err)
	}
	wantID := fmt.Sprintf("%s-tool-result-%s-%d", cause, callID, seq)
	code, name := "TOOL_NOT_STARTED", "ToolNotStartedError"
	text := map[string]string{"interrupted": specInterruptedNotRun, "forked": specForkedNotRun}[cause]
	if started {
		code, name = "TOOL_OUTCOME_UNKNOWN", "ToolOutcomeUnknownError"
		text = map[string]string{"interrupted": specInterruptedUnknown, "forked": specForkedUnknown}[cause]
	}
	m := d.Message
	if d.Turn != turn || d.Step != step || m.ID != wantID || m.Role != "tool" || m.ToolCallID != callID ||
		m.IsError == nil || !*m.IsError || m.Source.Kind != "tool" || m.Source.CallID != callID {
		t.Errorf("closer %d data = %s; want turn %d step %d id %s", seq, e.Data(), turn, step, wantID)
	}
	if len(m.Content) != 1 || m.Content[0].Type != "text" || m.Content[0].Text != text {
		t.Errorf("closer %d content = %+v, want the %s text %q", seq, m.Content, cause, text)
	}
	if d.Error.Code != code || d.Error.Name != name {
		t.Errorf("closer %d error = %+v, want %s/%s", seq, d.Error, name, code)
	}
	src := e.SourceEventSeqs()
	if started && !slices.Equal(src, []sdk.Seq{callSeq}) {
		t.Errorf("closer %d sources = %v, want [%d]", seq, src, callSeq)
	}
	if !started && src != nil {
		t.Errorf("closer %d sources = %v, want absent", seq, src)
	}
}

func requireEvent(t testing.TB, e Event, seq sdk.Seq, time int64, typ, data string) {
	t.Helper()
	if e.Seq() != seq || e.Time() != time || e.Type() != typ || string(e.Data()) != data {
		t.Errorf("event = seq %d time %d %s %s; want seq %d time %d %s %s", e.Seq(), e.Time(), e.Type(), e.Data(), seq, time, typ, data)
	}
	if _, ok := e.SurfaceOp(); ok && typ != TypeToolResult {
		t.Errorf("event %d carries a surfaceOp", seq)
	}
}

// crashRepairLog builds the stored log of the crash-repair mix
// (TestCrashRepairClosesEveryOpenCall) and returns it with T5.
func crashRepairLog(t *testing.T) ([]Event, int64) {
	s, clock := newTestSession(t)
	mustAppend(t, s, evTurnStart(1))
	clock.Advance(1000)
	mustAppend(t, s, evU("u1", "read a and b"))
	mustAppend(t, s, evStepStart(1, 1))
	mustAppend(t, s, evHeader("initial", `{"config":{"provider":"p","model":"m"},"tools":[{"name":"read","description":"r","parameters":{"type":"object"}}]}`))
	clock.Advance(1000)
	mustAppend(t, s, evACalls(1, 1, "a4", "a", "b"))
	t5 := tT0 + 5000
	clock.Set(t5)
	mustAppend(t, s, evToolCall(1, 1, "a"))
	return s.Events().Slice(), t5
}

func TestCrashRepairClosesEveryOpenCall(t *testing.T) {
	stored, t5 := crashRepairLog(t)
	now := t5 + 60_000
	closers := OpenTurnClosers(stored, Interrupted)
	if len(closers) != 4 {
		t.Fatalf("OpenTurnClosers returned %d events, want 4", len(closers))
	}
	again := InterruptedTurnClosers(stored)
	if !equalBytesList(envs(closers), envs(again)) {
		t.Errorf("InterruptedTurnClosers differs from OpenTurnClosers(interrupted); repair must be deterministic")
	}
	batch := ResumeBatch(stored, sdk.Torn{}, now)
	if len(batch) != 5 {
		t.Fatalf("ResumeBatch returned %d events, want 5", len(batch))
	}
	if !equalBytesList(envs(batch[:4]), envs(closers)) {
		t.Errorf("ResumeBatch closers differ from OpenTurnClosers")
	}
	requireCloserResult(t, batch[0], 6, t5, 1, 1, "a", "interrupted", true, 5)
	requireCloserResult(t, batch[1], 7, t5, 1, 1, "b", "interrupted", false, 0)
	requireEvent(t, batch[2], 8, t5, TypeStepEnd, `{"turn":1,"step":1}`)
	requireEvent(t, batch[3], 9, t5, TypeTurnEnd, `{"turn":1,"reason":{"kind":"interrupted"}}`)
	requireEvent(t, batch[4], 10, now, TypeSessionEndSeed, `{}`)
	if m, ok := MessageOf(batch[0], nil); !ok || m.ID() != "interrupted-tool-result-a-6" || m.Role() != "tool" || m.NodeSeq() != 6 {
		t.Errorf("MessageOf(closer) = %v, %v", m, ok)
	}
	if _, ok := MessageOf(batch[2], nil); ok {
		t.Errorf("MessageOf(step/end) yields a message")
	}

	// The store restores stored + batch: the batch is part of the replayed log,
	// FirstLiveSeq is 11, and nothing reaches the commit feed.
	feed := &commitFeed{}
	opts := testOptions(newFakeClock(now), feed)
	all := append(slices.Clone(stored), batch...)
	s := mustRestoreEvents(t, opts, RestoreOptions{}, all)
	if s.FirstLiveSeq() != 11 || s.Len() != 11 {
		t.Errorf("FirstLiveSeq, Len = %d, %d; want 11, 11", s.FirstLiveSeq(), s.Len())
	}
	if feed.len() != 0 {
		t.Errorf("restore delivered %d events on the commit feed, want none", feed.len())
	}
	requireNodes(t, s, 1, 4, 6, 7)
	ml := requireMessages(t, s, 1, 4, 6, 7)
	if ml.At(2).ID() != "interrupted-tool-result-a-6" || ml.At(3).ID() != "interrupted-tool-result-b-7" {
		t.Errorf("closer messages = %s", messagesJSON(ml))
	}
	if s.InheritedEventCount() != 0 {
		t.Errorf("InheritedEventCount = %d", s.InheritedEventCount())
	}
	// The same from envelopes, as a backend would return them.
	var raws [][]byte
	for _, e := range all {
		raws = append(raws, e.Envelope())
	}
	r, err := Restore(context.Background(), opts, RestoreOptions{}, raws)
	if err != nil {
		t.Fatalf("Restore(stored + batch): %v", err)
	}
	requireSameState(t, "Restore vs RestoreEvents", stateOfNoFeed(t, s), stateOfNoFeed(t, r))
	// A resumed session is closed: a second resume appends nothing.
	if more := ResumeBatch(all, sdk.Torn{}, now+1); len(more) != 0 {
		t.Errorf("second ResumeBatch = %d events, want none", len(more))
	}
	// Appending continues at 11.
	if e := mustAppend(t, s, evTurnStart(2)); e.Seq() != 11 {
		t.Errorf("next live seq = %d, want 11", e.Seq())
	}
	// An inspect view of the same log is read-only and counts the closers.
	ro := mustRestoreEvents(t, opts, RestoreOptions{ReadOnly: true, PendingRepair: 4}, append(slices.Clone(stored), closers...))
	if ro.PendingRepair() != 4 || !ro.ReadOnly() {
		t.Errorf("inspect view PendingRepair %d ReadOnly %v", ro.PendingRepair(), ro.ReadOnly())
	}
}

func TestCrashRepairAfterATornTail(t *testing.T) {
	stored, t5 := crashRepairLog(t)
	now := t5 + 1
	batch := ResumeBatch(stored, sdk.Torn{Bytes: 17, FromSeq: 6, Artifact: "/x/torn"}, now)
	if len(batch) != 6 {
		t.Fatalf("ResumeBatch = %d events, want recovered + 4 closers + marker", len(batch))
	}
	requireEvent(t, batch[0], 6, now, TypeSessionRecovered, `{"tornBytes":17,"tornFromSeq":6,"artifact":"/x/torn"}`)
	requireCloserResult(t, batch[1], 7, now, 1, 1, "a", "interrupted", true, 5)
	requireCloserResult(t, batch[2], 8, now, 1, 1, "b", "interrupted", false, 0)
	requireEvent(t, batch[5], 11, now, TypeSessionEndSeed, `{}`)
	s := mustRestoreEvents(t, restoreOpts(), RestoreOptions{}, append(slices.Clone(stored), batch...))
	if s.FirstLiveSeq() != 12 {
		t.Errorf("FirstLiveSeq = %d, want 12", s.FirstLiveSeq())
	}
	// A recovered marker is always followed by an end-seed, even with nothing to close.
	closed := append(slices.Clone(stored), batch...)
	b2 := ResumeBatch(closed, sdk.Torn{Bytes: 3, FromSeq: 12}, now)
	if len(b2) != 2 || b2[0].Type() != TypeSessionRecovered || b2[1].Type() != TypeSessionEndSeed || b2[1].Seq() != 13 {
		t.Errorf("ResumeBatch after a torn tail of a closed log = %v", typesOf(b2))
	}
}

func envs(events []Event) [][]byte {
	out := make([][]byte, len(events))
	for i, e := range events {
		out[i] = e.Envelope()
	}
	return out
}

func typesOf(events []Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = fmt.Sprintf("%d:%s", e.Seq(), e.Type())
	}
	return out
}

func TestCrashRepairOfAClosedLogAppendsOnlyTheMarker(t *testing.T) {
	now := tT0 + 99
	t.Run("empty log", func(t *testing.T) {
		if c := OpenTurnClosers(nil, Interrupted); len(c) != 0 {
			t.Errorf("closers of an empty log = %v", typesOf(c))
		}
		if b := ResumeBatch(nil, sdk.Torn{}, now); len(b) != 0 {
			t.Fatalf("ResumeBatch(empty) = %v, want nothing (the first event is the caller's, at seq 0)", typesOf(b))
		}
		b := ResumeBatch(nil, sdk.Torn{Bytes: 5}, now)
		if len(b) != 2 || b[0].Type() != TypeSessionRecovered || b[1].Type() != TypeSessionEndSeed || b[1].Seq() != 1 {
			t.Fatalf("ResumeBatch(empty, torn) = %v, want session/recovered then the marker at 1", typesOf(b))
		}
		s := mustRestoreEvents(t, restoreOpts(), RestoreOptions{}, b)
		if s.Len() != 2 || s.FirstLiveSeq() != 2 {
			t.Errorf("resumed empty session Len %d FirstLiveSeq %d", s.Len(), s.FirstLiveSeq())
		}
	})
	t.Run("closed turn", func(t *testing.T) {
		s, _ := newTestSession(t)
		mustAppendAll(t, s, evTurnStart(1), evU("u", "a"), evStepStart(1, 1), evACalls(1, 1, "a", "x"), evR("r", "x", "ok"), evStepEnd(1, 1), evTurnEnd(1))
		if c := OpenTurnClosers(s.Events().Slice(), Interrupted); len(c) != 0 {
			t.Errorf("closers = %v", typesOf(c))
		}
		b := ResumeBatch(s.Events().Slice(), sdk.Torn{}, now)
		if len(b) != 1 || b[0].Type() != TypeSessionEndSeed || b[0].Seq() != 7 {
			t.Errorf("ResumeBatch = %v, want only the marker at 7", typesOf(b))
		}
	})
	t.Run("open turn without step", func(t *testing.T) {
		s, clock := newTestSession(t)
		mustAppend(t, s, evTurnStart(3))
		clock.Advance(10)
		mustAppend(t, s, evU("u", "a"))
		c := OpenTurnClosers(s.Events().Slice(), Interrupted)
		if len(c) != 1 {
			t.Fatalf("closers = %v, want only turn/end", typesOf(c))
		}
		requireEvent(t, c[0], 2, tT0+10, TypeTurnEnd, `{"turn":3,"reason":{"kind":"interrupted"}}`)
	})
	t.Run("call of a closed step", func(t *testing.T) {
		s, _ := newTestSession(t)
		mustAppendAll(t, s, evTurnStart(1), evStepStart(1, 1), evACalls(1, 1, "a", "x"), evToolCall(1, 1, "x"), evR("r", "x", "ok"), evStepEnd(1, 1))
		c := OpenTurnClosers(s.Events().Slice(), Interrupted)
		if len(c) != 1 {
			t.Fatalf("closers = %v, want only turn/end", typesOf(c))
		}
		requireEvent(t, c[0], 6, tT0, TypeTurnEnd, `{"turn":1,"reason":{"kind":"interrupted"}}`)
	})
	t.Run("answered calls", func(t *testing.T) {
		s, _ := newTestSession(t)
		mustAppendAll(t, s, evTurnStart(1), evStepStart(1, 1), evACalls(1, 1, "a", "x", "y"), evToolCall(1, 1, "x"), evR("rx", "x", "ok"), evR("ry", "y", "ok"))
		c := OpenTurnClosers(s.Events().Slice(), Interrupted)
		if got := typesOf(c); !slices.Equal(got, []string{"6:step/end", "7:turn/end"}) {
			t.Errorf("closers = %v", got)
		}
	})
	t.Run("log ending in a marker", func(t *testing.T) {
		s, _ := newTestSession(t)
		mustAppendAll(t, s, evTurnStart(1), evTurnEnd(1))
		log := append(s.Events().Slice(), ResumeBatch(s.Events().Slice(), sdk.Torn{}, now)...)
		if b := ResumeBatch(log, sdk.Torn{}, now); len(b) != 0 {
			t.Errorf("ResumeBatch of a log ending in a marker = %v", typesOf(b))
		}
	})
}

// openCutSource builds the source of TestForkAtAnOpenCutClosesTheChild.
func openCutSource(t *testing.T) (*Session, int64) {
	s, clock := newTestSession(t, func(o *Options) {
		o.Header.ID = "src"
		o.Header.CWD = "/work/src"
		o.Header.Origin = "subagent"
		o.Header.DelegationDepth = 2
		o.Header.AgentPreset = "preset"
	})
	mustAppendAll(t, s, evTurnStart(1), evU("u1", "hi"), evTurnEnd(1))
	clock.Advance(100)
	mustAppendAll(t, s, evTurnStart(2), evStepStart(2, 1))
	t5 := tT0 + 500
	clock.Set(t5)
	mustAppend(t, s, evACalls(2, 1, "a5", "x"))
	clock.Set(t5 + 10_000)
	return s, t5
}

func TestForkAtAnOpenCutClosesTheChild(t *testing.T) {
	src, t5 := openCutSource(t)
	before := stateOf(t, src)
	now := t5 + 86_400_000
	b := sdk.Seq(5)
	seed, inherited, err := ForkSeed(src.Events().Slice(), &b, now)
	if err != nil {
		t.Fatalf("ForkSeed: %v", err)
	}
	if inherited != 6 || len(seed) != 10 {
		t.Fatalf("ForkSeed = %d events, inherited %d; want 10, 6", len(seed), inherited)
	}
	for i := range 6 {
		orig, _ := src.Event(sdk.Seq(i))
		if !bytes.Equal(seed[i].Envelope(), orig.Envelope()) {
			t.Errorf("seed event %d = %s, want byte-identical %s", i, seed[i].Envelope(), orig.Envelope())
		}
	}
	requireEvent(t, seed[6], 6, t5, TypeSessionEndSeed, `{"inherited":true}`)
	requireCloserResult(t, seed[7], 7, t5, 2, 1, "x", "forked", false, 0)
	requireEvent(t, seed[8], 8, t5, TypeStepEnd, `{"turn":2,"step":1}`)
	requireEvent(t, seed[9], 9, t5, TypeTurnEnd, `{"turn":2,"reason":{"kind":"forked"}}`)

	h := ForkHeader(src.Header(), "c", inherited, now)
	want := sdk.Header{FormatVersion: sdk.FormatVersion, ID: "c", CreatedAt: now, CWD: "/work/src", ParentSession: "src", IsSeeded: true, InheritedEventCount: 6}
	if !h.Equal(want) {
		t.Errorf("ForkHeader = %+v\nwant %+v", h, want)
	}
	feed := &commitFeed{}
	child := mustRestoreEvents(t, testOptions(newFakeClock(now), feed, func(o *Options) { o.Header = h }), RestoreOptions{Source: FromSeed}, seed)
	if child.FirstLiveSeq() != 10 || child.Len() != 10 || child.InheritedEventCount() != 6 || child.ID() != "c" {
		t.Errorf("child FirstLiveSeq %d Len %d inherited %d id %q", child.FirstLiveSeq(), child.Len(), child.InheritedEventCount(), child.ID())
	}
	if child.IsOwnSeq(5) || !child.IsOwnSeq(6) || !child.IsOwnSeq(9) || child.IsOwnSeq(10) {
		t.Errorf("IsOwnSeq(5,6,9,10) = %v %v %v %v", child.IsOwnSeq(5), child.IsOwnSeq(6), child.IsOwnSeq(9), child.IsOwnSeq(10))
	}
	ml := requireMessages(t, child, 1, 5, 7)
	last := ml.At(ml.Len() - 1)
	var lm struct {
		IsError bool `json:"isError"`
	}
	if err := last.Decode(&lm); err != nil || last.Role() != "tool" || last.ID() != "forked-tool-result-x-7" || !lm.IsError {
		t.Errorf("last child message = %s (%v)", last.JSON(), err)
	}
	if feed.len() != 0 {
		t.Errorf("child restore delivered %d events on the feed", feed.len())
	}
	// Source and child are independent.
	mustAppend(t, child, evTurnStart(3))
	requireUnchanged(t, before, src)
	mustAppend(t, src, evToolCall(2, 1, "x"))
	if child.Len() != 11 {
		t.Errorf("child Len = %d after a source append", child.Len())
	}
	// A started call at the cut gets the forked "outcome unknown" closer.
	b = 6
	seed2, inh2, err := ForkSeed(src.Events().Slice(), &b, now)
	if err != nil || inh2 != 7 {
		t.Fatalf("ForkSeed(6) = %d, %v", inh2, err)
	}
	requireCloserResult(t, seed2[8], 8, src.Events().At(6).Time(), 2, 1, "x", "forked", true, 6)
	// A cut at a closed turn needs no closers.
	b = 2
	seed3, inh3, err := ForkSeed(src.Events().Slice(), &b, now)
	if err != nil || inh3 != 3 || len(seed3) != 4 {
		t.Errorf("ForkSeed(2) = %v, %d, %v", typesOf(seed3), inh3, err)
	}
	// Without a boundary the last event is the cut.
	seed4, inh4, err := ForkSeed(src.Events().Slice(), nil, now)
	if err != nil || inh4 != int64(src.Len()) || seed4[inh4].Type() != TypeSessionEndSeed {
		t.Errorf("ForkSeed(nil) = %v, %d, %v", typesOf(seed4), inh4, err)
	}
	// A fork of a fork: the last inherited marker counts.
	b = 9
	gseed, ginh, err := ForkSeed(seed, &b, now)
	if err != nil || ginh != 10 {
		t.Fatalf("ForkSeed of the child = %d, %v", ginh, err)
	}
	gh := ForkHeader(h, "g", ginh, now)
	g := mustRestoreEvents(t, restoreOpts(func(o *Options) { o.Header = gh }), RestoreOptions{Source: FromSeed}, gseed)
	if g.InheritedEventCount() != 10 || gh.ParentSession != "c" {
		t.Errorf("grandchild inherited %d parent %q", g.InheritedEventCount(), gh.ParentSession)
	}
}

func TestForkRefusesABadCut(t *testing.T) {
	// Only the boundary rules of docs/architecture.md step 3 live in this package
	// (ForkSeed). SESSION_NOT_FOUND, SESSION_ALREADY_EXISTS and
	// SESSION_NOT_LIVE are decided by Store.Fork (docs/architecture.md) and are out of scope.
	now := tT0 + 42
	bnd := func(v int64) *sdk.Seq { b := sdk.Seq(v); return &b }
	t.Run("empty source, boundary 0", func(t *testing.T) {
		_, _, err := ForkSeed(nil, bnd(0), now)
		requireDetail(t, requireCode(t, err, sdk.CodeInvalidBoundary), "boundary 0", "none")
	})
	src, _ := newTestSession(t)
	mustAppendAll(t, src, evTurnStart(1), evU("u", "a"))
	events := src.Events().Slice()
	for _, c := range []struct {
		name  string
		b     int64
		parts []string
	}{
		{"past the end", 2, []string{"boundary 2", "(1)"}},
		{"far past the end", 1 << 40, []string{"1099511627776", "(1)"}},
		{"negative", -1, []string{"-1"}},
		{"beyond MaxSeq", sdk.MaxSeq + 1, []string{"9007199254740992"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			seed, inh, err := ForkSeed(events, bnd(c.b), now)
			if seed != nil || inh != 0 {
				t.Errorf("failed ForkSeed returned %d events, inherited %d", len(seed), inh)
			}
			requireDetail(t, requireCode(t, err, sdk.CodeInvalidBoundary), c.parts...)
		})
	}
	t.Run("events not numbered from 0", func(t *testing.T) {
		_, _, err := ForkSeed(events[1:], bnd(0), now)
		requireDetail(t, requireCode(t, err, sdk.CodeInvalidBoundary), "seq 1")
	})
	// docs/architecture.md step 3 resolves a nil boundary to n−1 and then applies the
	// same E[b].seq == b check; otherwise the marker would repeat a seq.
	t.Run("events not numbered from 0, no boundary", func(t *testing.T) {
		seed, _, err := ForkSeed(events[1:], nil, now)
		if err == nil {
			t.Fatalf("ForkSeed accepted events numbered from 1 and built %v", typesOf(seed))
		}
		requireCode(t, err, sdk.CodeInvalidBoundary)
	})
	t.Run("empty source, no boundary", func(t *testing.T) {
		seed, inh, err := ForkSeed(nil, nil, now)
		if err != nil || inh != 0 || len(seed) != 1 {
			t.Fatalf("ForkSeed(empty) = %v, %d, %v", typesOf(seed), inh, err)
		}
		requireEvent(t, seed[0], 0, now, TypeSessionEndSeed, `{"inherited":true}`)
		h := ForkHeader(sdk.Header{ID: "src"}, "c", inh, now)
		child := mustRestoreEvents(t, restoreOpts(func(o *Options) { o.Header = h }), RestoreOptions{Source: FromSeed}, seed)
		if child.InheritedEventCount() != 0 || child.FirstLiveSeq() != 1 || !h.IsSeeded {
			t.Errorf("child inherited %d FirstLiveSeq %d seeded %v", child.InheritedEventCount(), child.FirstLiveSeq(), h.IsSeeded)
		}
	})
	requireUnchanged(t, stateOf(t, src), src)
}

func TestSeedGetsAReplayMarker(t *testing.T) {
	s, clock := newTestSession(t)
	mustAppendAll(t, s, evTurnStart(1), evU("u1", "a"), evStepStart(1, 1), evHeader("initial", plainHeader), evA("a4", "b"),
		evStepEnd(1, 1), evTurnEnd(1), evTurnStart(2), evU("u8", "c"), evTurnEnd(2))
	if s.Len() != 10 {
		t.Fatalf("seed has %d events", s.Len())
	}
	now := clock.Now() + 1234
	seed, err := SeedWithMarker(s.Events().Slice(), now)
	if err != nil {
		t.Fatalf("SeedWithMarker: %v", err)
	}
	if len(seed) != 11 {
		t.Fatalf("SeedWithMarker = %d events, want 11", len(seed))
	}
	requireEvent(t, seed[10], 10, now, TypeSessionEndSeed, `{}`)
	feed := &commitFeed{}
	c := mustRestoreEvents(t, testOptions(newFakeClock(now), feed), RestoreOptions{Source: FromSeed}, seed)
	if c.FirstLiveSeq() != 11 || c.Len() != 11 || feed.len() != 0 {
		t.Errorf("FirstLiveSeq %d Len %d feed %d", c.FirstLiveSeq(), c.Len(), feed.len())
	}
	if c.InheritedEventCount() != 0 {
		t.Errorf("a replay seed is not inherited: InheritedEventCount = %d", c.InheritedEventCount())
	}
	again, err := SeedWithMarker(c.Events().Slice(), now+1)
	if err != nil || !equalBytesList(envs(again), envs(seed)) {
		t.Errorf("a seed ending in a marker gets another one: %v, %v", typesOf(again), err)
	}
	c2 := mustRestoreEvents(t, restoreOpts(), RestoreOptions{Source: FromSeed}, again)
	if c2.FirstLiveSeq() != 11 {
		t.Errorf("second session FirstLiveSeq = %d, want 11", c2.FirstLiveSeq())
	}
	// An empty seed gets the marker at 0.
	empty, err := SeedWithMarker([]Event{}, now)
	if err != nil || len(empty) != 1 || empty[0].Seq() != 0 {
		t.Errorf("SeedWithMarker(empty) = %v, %v", typesOf(empty), err)
	}
	// A replay seed must not carry an inherited marker: that is Fork's.
	b := sdk.Seq(2)
	forkSeed, _, err := ForkSeed(s.Events().Slice(), &b, now)
	if err != nil {
		t.Fatal(err)
	}
	_, err = SeedWithMarker(forkSeed, now)
	e := requireCode(t, err, sdk.CodeSeedInvalid)
	if (e.Index == nil || *e.Index != 3) || (e.Seq == nil || *e.Seq != 3) {
		t.Errorf("SEED_INVALID %v; want index and seq 3", e)
	}
	requireDetail(t, e, "inherited")
}

func TestRequestHeaderRules(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppend(t, s, evTurnStart(1))
	rejectAppend(t, s, evHeader("initial", `{"config":{"provider":"p","model":"m"},"tools":[]}`), sdk.CodeHeaderEmptyTools, "tools")
	rejectAppend(t, s, evHeader("initial", `{"config":{"provider":"p","model":"m"},"system":"You are"}`), sdk.CodeHeaderSystemForbidden, "system")
	rejectAppend(t, s, evHeader("initial", `{"config":{"provider":"p","model":"m"},"adapterDefaults":{}}`), sdk.CodeHeaderEmptyAdapterDefaults, "adapterDefaults")
	rejectAppend(t, s, evHeader("initial", `{"config":{"provider":"p","model":"m"},"adapterDefaults":{"maxTokens":true}}`), sdk.CodeHeaderInvalid, "maxTokens")
	rejectAppend(t, s, evHeader("resume", plainHeader), sdk.CodeHeaderReasonInvalid, "resume")
	if _, ok := s.RequestHeader(); ok {
		t.Fatalf("RequestHeader before any header")
	}
	h1 := mustAppend(t, s, evHeader("initial", `{"config":{"provider":"p","model":"m","maxTokens":100},"adapterDefaults":{"maxTokens":true}}`))
	rejectAppend(t, s, evHeader("initial", plainHeader), sdk.CodeHeaderReasonInvalid, "initial")
	hv, ok := s.RequestHeader()
	if !ok || hv.Seq() != h1.Seq() || hv.Reason() != "initial" {
		t.Fatalf("RequestHeader = %v %v", hv, ok)
	}
	tools := `[{"name":"read","description":"r","parameters":{"type":"object"}}]`
	h2 := mustAppend(t, s, evRaw(TypeRequestHeader, `{"header":{"config":{"provider":"p","model":"m2"},"tools":`+tools+`},"reason":"change","startsSeries":true}`))
	hv, ok = s.RequestHeader()
	if !ok || hv.Seq() != h2.Seq() || hv.Reason() != "change" || !hv.StartsSeries() {
		t.Fatalf("RequestHeader after two headers = seq %d reason %q", hv.Seq(), hv.Reason())
	}
	if got := string(hv.JSON()); got != `{"config":{"provider":"p","model":"m2"},"tools":`+tools+`}` {
		t.Errorf("RequestHeader().JSON() = %s", got)
	}
	if m, _ := hv.Config().Get("model").Str(); m != "m2" {
		t.Errorf("Config().model = %q", m)
	}
	if ts := hv.Tools(); len(ts) != 1 || ts[0].Name != "read" {
		t.Errorf("Tools() = %+v", ts)
	}
	if fh, ok := FoldRequestHeader(s.Events(), 0); !ok || fh.Seq() != h2.Seq() {
		t.Errorf("FoldRequestHeader = %v, %v", fh, ok)
	}
	if fh, ok := FoldRequestHeader(s.Events(), sdk.Offset(h2.Seq()+1)); ok {
		t.Errorf("FoldRequestHeader past the last header = seq %d", fh.Seq())
	}
	requireReplayEqual(t, s)
}

// Headers of TestDeveloperMessageBindsToItsHeader.
const (
	searchV1    = `{"name":"search","description":"find","parameters":{"type":"object"},"deferLoading":true}`
	searchV2    = `{"name":"search","description":"find v2","parameters":{"type":"object"},"deferLoading":true}`
	readTool    = `{"name":"read","description":"r","parameters":{"type":"object"}}`
	headerV1    = `{"config":{"provider":"p","model":"m"},"tools":[` + readTool + `,` + searchV1 + `]}`
	headerModel = `{"config":{"provider":"p","model":"m2"},"tools":[` + readTool + `,` + searchV1 + `]}`
	headerV2    = `{"config":{"provider":"p","model":"m3"},"tools":[` + readTool + `,` + searchV2 + `]}`
)

func TestDeveloperMessageBindsToItsHeader(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppend(t, s, evHeader("initial", headerV1)) // 0
	mustAppend(t, s, evTurnStart(1))                // 1
	rejectAppend(t, s, evDeveloperAt(1, 0, "d", -1, blockAddition("search")), sdk.CodeDeveloperHeaderSeqMismatch, "search")
	rejectAppend(t, s, evDeveloperAt(1, 0, "d", 1, blockAddition("search")), sdk.CodeDeveloperHeaderSeqInvalid, "headerSeq 1", "turn/start")
	rejectAppend(t, s, evDeveloperAt(1, 0, "d", 2, blockAddition("search")), sdk.CodeDeveloperHeaderSeqInvalid, "headerSeq 2", "seq 2")
	rejectAppend(t, s, evDeveloperAt(1, 0, "d", 7, blockAddition("search")), sdk.CodeDeveloperHeaderSeqInvalid, "headerSeq 7")
	rejectAppend(t, s, evDeveloperAt(1, 0, "d", 0, blockRemoval("read")), sdk.CodeDeveloperHeaderSeqMismatch, "headerSeq")
	rejectAppend(t, s, evDeveloperAt(1, 0, "d", 0, blockAddition("write")), sdk.CodeDeveloperToolNotInHeader, `"write"`, "headerSeq 0", "found 0")

	mustAppend(t, s, evDeveloperAt(1, 0, "d2", 0, blockAddition("search"), blockText("search is back"))) // 2
	check := func(t *testing.T, s *Session, tools []string, wantAddition string) {
		t.Helper()
		th := s.ToolHistory()
		var names []string
		for _, tool := range th.Tools {
			names = append(names, tool.Name+"="+string(tool.JSON))
		}
		if !slices.Equal(names, tools) {
			t.Errorf("ToolHistory().Tools = %v, want %v", names, tools)
		}
		found := false
		for _, u := range th.Updates {
			for _, a := range u.Additions {
				if a.Name == "search" {
					found = true
					if string(a.JSON) != wantAddition {
						t.Errorf("update %s resolves search as %s, want %s", u.MessageID, a.JSON, wantAddition)
					}
				}
			}
		}
		if !found {
			t.Errorf("ToolHistory().Updates = %+v has no search addition", th.Updates)
		}
	}
	v1Tools := []string{"read=" + readTool, "search=" + searchV1}
	check(t, s, v1Tools, searchV1)
	// A later change header (same schemas) keeps the binding and the baseline.
	mustAppend(t, s, evHeader("change", headerModel)) // 3
	check(t, s, v1Tools, searchV1)
	// A change header with a different search schema starts a new baseline; a
	// developer message bound to the original header still resolves search
	// from it, not from the newest header.
	mustAppend(t, s, evHeader("change", headerV2))                          // 4
	mustAppend(t, s, evDeveloperAt(1, 0, "d5", 0, blockAddition("search"))) // 5
	check(t, s, []string{"read=" + readTool, "search=" + searchV2}, searchV1)
	want := renderTools(s.ToolHistory())

	// Restore re-validates and keeps the binding.
	r := mustRestoreEvents(t, restoreOpts(), RestoreOptions{}, s.Events().Slice())
	if got := renderTools(r.ToolHistory()); got != want {
		t.Errorf("ToolHistory after RestoreEvents =\n%s\nwant\n%s", got, want)
	}
	// So does a fork of it.
	seed, inh, err := ForkSeed(s.Events().Slice(), nil, tT0)
	if err != nil {
		t.Fatal(err)
	}
	child := mustRestoreEvents(t, restoreOpts(func(o *Options) { o.Header = ForkHeader(s.Header(), "c", inh, tT0) }), RestoreOptions{Source: FromSeed}, seed)
	if got := renderTools(child.ToolHistory()); got != want {
		t.Errorf("ToolHistory of a fork =\n%s\nwant\n%s", got, want)
	}
	requireReplayEqual(t, s)

	// A header lacking tools altogether.
	mustAppend(t, s, evHeader("change", plainHeader)) // 6
	rejectAppend(t, s, evDeveloperAt(1, 0, "d", 6, blockAddition("search")), sdk.CodeDeveloperToolNotInHeader, `"search"`, "headerSeq 6", "found 0")
	// An incomplete schema.
	mustAppend(t, s, evHeader("change", `{"config":{"provider":"p","model":"m"},"tools":[{"name":"bare"},{"name":"nodesc","parameters":{}},{"name":"noparams","description":"d"}]}`)) // 7
	for _, n := range []string{"bare", "nodesc", "noparams"} {
		rejectAppend(t, s, evDeveloperAt(1, 0, "d", 7, blockAddition(n)), sdk.CodeDeveloperToolIncomplete, `"`+n+`"`, "headerSeq 7")
	}
	// A header cannot name a tool twice (HEADER_INVALID), so "duplicating
	// search" is stopped before the binding rule could see it.
	rejectAppend(t, s, evHeader("change", `{"config":{"provider":"p","model":"m"},"tools":[`+searchV1+`,`+searchV1+`]}`), sdk.CodeHeaderInvalid, "search")
}

// fakeProjection is a message-projection definition for tests. project
// decides the reply; calls counts invocations.
type fakeProjection struct {
	id      string
	project func(in ProjectInput) ([]ProjectTarget, error)
	calls   atomic.Int32
	mu      sync.Mutex
	inputs  []ProjectInput
}

func (p *fakeProjection) Identity() string { return p.id }

func (p *fakeProjection) Project(_ context.Context, in ProjectInput) ([]ProjectTarget, error) {
	p.calls.Add(1)
	p.mu.Lock()
	p.inputs = append(p.inputs, in)
	p.mu.Unlock()
	return p.project(in)
}

// redactTo replaces each target's content by one text block with the event's
// data.text; mutate may change the decoded message further.
func redactTo(mutate func(m map[string]any)) func(in ProjectInput) ([]ProjectTarget, error) {
	return func(in ProjectInput) ([]ProjectTarget, error) {
		text, _ := in.Event.DataView().Get("text").Str()
		var out []ProjectTarget
		for _, tg := range in.Targets {
			var m map[string]any
			if err := json.Unmarshal(tg.Message, &m); err != nil {
				return nil, err
			}
			m["content"] = []any{map[string]any{"type": "text", "text": text}}
			if mutate != nil {
				mutate(m)
			}
			b, err := json.Marshal(m)
			if err != nil {
				return nil, err
			}
			out = append(out, ProjectTarget{Seq: tg.Seq, EventType: tg.EventType, Message: b})
		}
		return out, nil
	}
}

const redactType = "projection:test/redact"

func projectionEvent(typ, targets, text string) AppendInput {
	return evRaw(typ, `{"targets":`+targets+`,"text":`+tcQuote(text)+`}`)
}

func TestProjectionRewritesDerivedMessages(t *testing.T) {
	redact := &fakeProjection{id: "test/1/sha", project: redactTo(nil)}
	defs := ProjectionMap{redactType: redact}
	withDefs := func(o *Options) { o.Projections = defs }
	s, _ := newTestSession(t, withDefs, bareMessages)
	e0 := mustAppend(t, s, evU("u0", "secret"))
	env0 := e0.Envelope()
	before := stateOf(t, s)
	e1 := mustAppend(t, s, projectionEvent(redactType, `[0]`, "p"))
	if e1.Seq() != 1 || redact.calls.Load() != 1 {
		t.Fatalf("projection event seq %d, calls %d", e1.Seq(), redact.calls.Load())
	}
	in := redact.inputs[0]
	if in.SessionID != "s1" || !slices.Equal(in.Nodes, []sdk.Seq{0}) || len(in.Targets) != 1 || in.Targets[0].Seq != 0 ||
		in.Targets[0].EventType != TypeUserMessage || string(in.Targets[0].Message) != dataUser("u0", "secret") {
		t.Errorf("ProjectInput = %+v", in)
	}
	ml, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		ID      string `json:"id"`
		Content []struct{ Text string }
	}
	if err := ml.At(0).Decode(&msg); err != nil || ml.Len() != 1 || msg.ID != "u0" || len(msg.Content) != 1 || msg.Content[0].Text != "p" {
		t.Errorf("Messages()[0] = %s (%v), want content p", ml.At(0).JSON(), err)
	}
	requireNodes(t, s, 0)
	requireGenerations(t, s, 0, 1)
	if got, _ := s.Event(0); !bytes.Equal(got.Envelope(), env0) {
		t.Errorf("Event(0) changed: %s", got.Envelope())
	}
	requireSnapshotsIntact(t, before)
	// The transcript keeps the recorded message; MessageOf applies Fold's decisions.
	if tr := s.Transcript(); tr.Len() != 1 || !strings.Contains(string(tr.At(0).Message.JSON()), "secret") {
		t.Errorf("transcript = %+v", tr)
	}
	f, err := Fold(context.Background(), s.Events().Slice(), defs)
	if err != nil {
		t.Fatalf("Fold: %v", err)
	}
	if m, ok := MessageOf(e0, f.Projected); !ok || !bytes.Equal(m.JSON(), ml.At(0).JSON()) {
		t.Errorf("MessageOf(0, Projected) = %s", m.JSON())
	}
	if m, ok := MessageOf(e0, nil); !ok || !strings.Contains(string(m.JSON()), "secret") {
		t.Errorf("MessageOf(0, nil) = %s", m.JSON())
	}
	// Restore with the definition calls it again and derives the same.
	requireReplayEqual(t, s, withDefs)

	t.Run("reply changing the id", func(t *testing.T) {
		defs["projection:test/badid"] = &fakeProjection{id: "b", project: redactTo(func(m map[string]any) { m["id"] = "other" })}
		rejectAppend(t, s, projectionEvent("projection:test/badid", `[0]`, "q"), sdk.CodeProjectionInvalid, "target 0")
	})
	t.Run("reply changing the role", func(t *testing.T) {
		defs["projection:test/badrole"] = &fakeProjection{id: "b", project: redactTo(func(m map[string]any) { m["role"] = "assistant" })}
		rejectAppend(t, s, projectionEvent("projection:test/badrole", `[0]`, "q"), sdk.CodeProjectionInvalid)
	})
	t.Run("reply for a non-target", func(t *testing.T) {
		defs["projection:test/stray"] = &fakeProjection{id: "b", project: func(in ProjectInput) ([]ProjectTarget, error) {
			return []ProjectTarget{{Seq: 7, EventType: TypeUserMessage, Message: []byte(dataUser("u0", "x"))}}, nil
		}}
		rejectAppend(t, s, projectionEvent("projection:test/stray", `[0]`, "q"), sdk.CodeProjectionInvalid, "7")
	})
	t.Run("reply failing the message rules", func(t *testing.T) {
		defs["projection:test/badmsg"] = &fakeProjection{id: "b", project: redactTo(func(m map[string]any) { m["content"] = "nope" })}
		rejectAppend(t, s, projectionEvent("projection:test/badmsg", `[0]`, "q"), sdk.CodeProjectionInvalid)
	})
	t.Run("target without a message", func(t *testing.T) {
		rejectAppend(t, s, projectionEvent(redactType, `[1]`, "q"), sdk.CodeProjectionInvalid, "target 1")
	})
	t.Run("plugin error", func(t *testing.T) {
		boom := errors.New("plugin crashed")
		defs["projection:test/fail"] = &fakeProjection{id: "f", project: func(ProjectInput) ([]ProjectTarget, error) { return nil, boom }}
		e := rejectAppend(t, s, projectionEvent("projection:test/fail", `[0]`, "q"), sdk.CodeProjectionFailed, "projection:test/fail")
		if !errors.Is(e, boom) {
			t.Errorf("PROJECTION_FAILED does not wrap the plugin's error")
		}
	})
	t.Run("no plugin", func(t *testing.T) {
		rejectAppend(t, s, projectionEvent("projection:other/x", `[0]`, "q"), sdk.CodeProjectionRequired, "projection:other/x", "other")
		rejectRestore(t, restoreOpts(), RestoreOptions{}, envelopesOf(s), "", sdk.CodeProjectionRequired, 1, redactType, `"test"`)
		rejectRestore(t, restoreOpts(), RestoreOptions{Source: FromSeed}, envelopesOf(s), "", sdk.CodeProjectionRequired, 1, redactType)
		_, err := Fold(context.Background(), s.Events().Slice(), nil)
		requireCode(t, err, sdk.CodeProjectionRequired)
	})
	t.Run("empty decision", func(t *testing.T) {
		defs["projection:test/noop"] = &fakeProjection{id: "n", project: func(ProjectInput) ([]ProjectTarget, error) { return nil, nil }}
		mustAppend(t, s, projectionEvent("projection:test/noop", `[0]`, "q"))
		requireGenerations(t, s, 0, 2)
		if ml, _ := s.Messages(); !strings.Contains(string(ml.At(0).JSON()), `"text":"p"`) {
			t.Errorf("an empty decision changed the message: %s", ml.At(0).JSON())
		}
	})
	t.Run("reads stay free", func(t *testing.T) {
		_, _ = s.Messages()
		_, _ = s.Surface()
		if a := testing.AllocsPerRun(50, func() { _, _ = s.Messages(); _, _ = s.Surface() }); a != 0 {
			t.Errorf("Messages()+Surface() with a projection in use allocate %.1f times per call, want 0", a)
		}
	})
	t.Run("projected node replaced", func(t *testing.T) {
		p, _ := newTestSession(t, withDefs, bareMessages)
		mustAppendAll(t, p, evU("u0", "secret"), evU("u1", "keep"), projectionEvent(redactType, `[0,1]`, "p"))
		requireGenerations(t, p, 0, 1)
		mustAppend(t, p, replacing(evU("u3", "fresh"), 0, 0, 0))
		ml := requireMessagesJSONContains(t, p, `"text":"fresh"`, `"text":"p"`)
		if ml.At(1).NodeSeq() != 1 {
			t.Errorf("node 1 lost its projection")
		}
		requireGenerations(t, p, 1, 2)
		requireReplayEqual(t, p, withDefs)
	})
	t.Run("plugin unloaded after use", func(t *testing.T) {
		st := stateOf(t, s)
		delete(defs, redactType)
		_, err := s.Messages()
		requireDetail(t, requireCode(t, err, sdk.CodeProjectionRemoved), redactType)
		_, err = s.Surface()
		requireCode(t, err, sdk.CodeProjectionRemoved)
		_, err = s.Append(context.Background(), evU("u9", "x"))
		requireCode(t, err, sdk.CodeProjectionRemoved)
		if s.Len() != st.len {
			t.Errorf("Len changed to %d", s.Len())
		}
		requireSnapshotsIntact(t, st)
		// Another identity serving the type counts as a removal too.
		defs[redactType] = &fakeProjection{id: "test/2/other", project: redactTo(nil)}
		_, err = s.Messages()
		requireCode(t, err, sdk.CodeProjectionRemoved)
		defs[redactType] = redact
		requireUnchanged(t, st, s)
	})
}

// requireMessagesJSONContains asserts that message i contains parts[i].
func requireMessagesJSONContains(t testing.TB, s *Session, parts ...string) MessageList {
	t.Helper()
	ml, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	if ml.Len() != len(parts) {
		t.Fatalf("Messages() = %s, want %d messages", messagesJSON(ml), len(parts))
	}
	for i, p := range parts {
		if !strings.Contains(string(ml.At(i).JSON()), p) {
			t.Errorf("message %d = %s, want it to contain %s", i, ml.At(i).JSON(), p)
		}
	}
	return ml
}

func TestRestoreRefusesUnknownEventClasses(t *testing.T) {
	// The header version check (FORMAT_TOO_NEW) belongs to the backends; the
	// class rules of restore are here.
	base := [][]byte{envLine(0, TypeTurnStart, `{"turn":1}`, ""), envLine(1, TypeUserMessage, dataUser("u1", "a"), `,"surfaceOp":"append"`)}
	unknown := append(slices.Clone(base), envLine(2, "future/thing", `{"x":1}`, ""))
	rejectRestore(t, restoreOpts(), RestoreOptions{}, unknown, "", sdk.CodeFormatUnknownEventType, 2, `"future/thing"`)
	rejectRestore(t, restoreOpts(), RestoreOptions{Source: FromSeed}, unknown, "", sdk.CodeFormatUnknownEventType, 2, `"future/thing"`)

	// Ignorable: retained byte-exact with uninterpreted surface metadata.
	ign := []byte(fmt.Sprintf(`{"seq":2,"time":%d,"type":"future/thing","data":{"x":[1,2.50,-1e-3]},"surfaceOp":{"op":"teleport","n":-1},"sourceEventSeqs":"all","ignorable":true}`, tT0))
	log := append(slices.Clone(base), ign, envLine(3, TypeUserMessage, dataUser("u3", "b"), `,"surfaceOp":"append"`))
	s, err := Restore(context.Background(), restoreOpts(), RestoreOptions{}, log)
	if err != nil {
		t.Fatalf("Restore with an ignorable unknown event: %v", err)
	}
	e, _ := s.Event(2)
	if !bytes.Equal(e.Envelope(), ign) || !e.Ignorable() || e.SourceEventSeqs() != nil {
		t.Errorf("retained event = %s", e.Envelope())
	}
	if _, ok := e.SurfaceOp(); ok {
		t.Errorf("an uninterpretable surfaceOp reads as valid")
	}
	requireNodes(t, s, 1, 3)
	requireMessages(t, s, 1, 3)
	// Still present after resume and fork.
	resumed := mustRestoreEvents(t, restoreOpts(), RestoreOptions{}, append(s.Events().Slice(), ResumeBatch(s.Events().Slice(), sdk.Torn{}, tT0)...))
	if got, _ := resumed.Event(2); !bytes.Equal(got.Envelope(), ign) {
		t.Errorf("after resume: %s", got.Envelope())
	}
	seed, inh, err := ForkSeed(s.Events().Slice(), nil, tT0)
	if err != nil {
		t.Fatal(err)
	}
	child := mustRestoreEvents(t, restoreOpts(func(o *Options) { o.Header = ForkHeader(s.Header(), "c", inh, tT0) }), RestoreOptions{Source: FromSeed}, seed)
	if got, _ := child.Event(2); !bytes.Equal(got.Envelope(), ign) {
		t.Errorf("after fork: %s", got.Envelope())
	}
	// Live: an ignorable unknown type appends and has no surface effect.
	mustAppend(t, s, AppendInput{Type: "future/thing", Data: tcRaw(`{"y":2}`), Ignorable: true, SurfaceOp: opAppend()})
	requireNodes(t, s, 1, 3)
	// A plugin record of a plugin that is not loaded is retained too; with
	// the plugin loaded it is class R and may not carry surface metadata.
	rec := envLine(2, "plugin:notes/entry", `{"any":true}`, `,"ignorable":true`)
	recLog := append(slices.Clone(base), rec)
	if _, err := Restore(context.Background(), restoreOpts(), RestoreOptions{}, recLog); err != nil {
		t.Errorf("Restore of an unknown plugin record: %v", err)
	}
	if _, err := Restore(context.Background(), restoreOpts(func(o *Options) { o.Plugins = map[string]bool{"notes": true} }), RestoreOptions{}, recLog); err != nil {
		t.Errorf("Restore of a known plugin record: %v", err)
	}
	bad := append(slices.Clone(base), envLine(2, "plugin:notes/entry", `{"any":true}`, `,"surfaceOp":"append","ignorable":true`))
	rejectRestore(t, restoreOpts(func(o *Options) { o.Plugins = map[string]bool{"notes": true} }), RestoreOptions{}, bad,
		sdk.CodeCorruptLog, sdk.CodeSurfaceOpNotAllowed, 2, "plugin:notes/entry")
	// A non-ignorable plugin record is refused like any unknown type.
	rejectRestore(t, restoreOpts(), RestoreOptions{}, append(slices.Clone(base), envLine(2, "plugin:notes/entry", `{}`, "")),
		"", sdk.CodeFormatUnknownEventType, 2, "plugin:notes/entry")
}

func TestSnapshotsStayStableUnderAppends(t *testing.T) {
	s, _ := newTestSession(t, bareMessages)
	mustAppendAll(t, s, evU("u0", "a"), evA("a1", "b"), evU("u2", "c"))
	m, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	first := stateOf(t, s)
	wantM := messagesJSON(m)
	var mid sessionState
	for i := 3; i < 1003; i++ {
		switch {
		case i == 600:
			mustAppend(t, s, replacing(evU("c600", "checkpoint"), 0, 2, 0, 1, 2))
		case i%7 == 0:
			mustAppend(t, s, evTurnStart(int64(i)))
		case i%5 == 0:
			mustAppend(t, s, evAEmpty(fmt.Sprintf("a%d", i)))
		default:
			mustAppend(t, s, evU(fmt.Sprintf("u%d", i), "x"))
		}
		if i == 300 {
			mid = stateOf(t, s) // a snapshot with spare capacity behind it
		}
	}
	if s.Len() != 1003 {
		t.Fatalf("Len = %d", s.Len())
	}
	if m.Len() != 3 || !equalBytesList(messagesJSON(m), wantM) || m.LogLen() != 3 || m.Generation() != 0 {
		t.Errorf("old snapshot now reports Len %d LogLen %d gen %d: %s", m.Len(), m.LogLen(), m.Generation(), messagesJSON(m))
	}
	requireSnapshotsIntact(t, first)
	requireSnapshotsIntact(t, mid)
	requireGenerations(t, s, 1, 1)
	requireReplayEqual(t, s)

	// No change since the last read: the cached snapshots, without allocating.
	if _, err := s.Messages(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Surface(); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(){
		"Messages":   func() { _, _ = s.Messages() },
		"Surface":    func() { _, _ = s.Surface() },
		"Events":     func() { _ = s.Events() },
		"Transcript": func() { _ = s.Transcript() },
		"Len":        func() { _ = s.Len() },
	} {
		if a := testing.AllocsPerRun(100, f); a != 0 {
			t.Errorf("%s() with no change allocates %.1f times per call, want 0", name, a)
		}
	}
	m1, _ := s.Messages()
	m2, _ := s.Messages()
	if m1.Len() != m2.Len() || m1.Len() > 0 && &m1.msgs[0] != &m2.msgs[0] {
		t.Errorf("consecutive Messages() calls return different snapshots")
	}
}

// TestConcurrentReadersDuringAppends checks, under -race, that readers never
// see a snapshot change while one appender keeps committing.
func TestConcurrentReadersDuringAppends(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppend(t, s, evTurnStart(1))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ml, err := s.Messages()
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				before := messagesJSON(ml)
				sv, _ := s.Surface()
				nodes := sv.Nodes()
				_ = s.Transcript().Len()
				_ = s.Events().Len()
				if !equalBytesList(messagesJSON(ml), before) || !slices.Equal(sv.Nodes(), nodes) {
					t.Errorf("reader %d: a snapshot changed", r)
					return
				}
			}
		}()
	}
	for i := 1; i < 300; i++ {
		if i%50 == 0 {
			mustAppend(t, s, replacing(evU(fmt.Sprintf("c%d", i), "c"), sdk.Seq(i-3), sdk.Seq(i-1), sdk.Seq(i-3), sdk.Seq(i-2), sdk.Seq(i-1)))
			continue
		}
		mustAppend(t, s, evU(fmt.Sprintf("u%d", i), "x"))
	}
	close(stop)
	wg.Wait()
	requireReplayEqual(t, s)
}

// ---- the rules behind the tests above ----

// TestHeaderCanonicalAndEqual checks docs/format.md.
func TestHeaderCanonicalAndEqual(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"config":{"provider":"p","model":"m"},"adapterDefaults":{"maxTokens":false},"tools":[]}`, `{"config":{"provider":"p","model":"m"}}`},
		{`{"tools":[` + readTool + `],"config":{"model":"m","provider":"p","maxTokens":5},"adapterDefaults":{"maxTokens":true}}`,
			`{"tools":[` + readTool + `],"config":{"model":"m","provider":"p","maxTokens":5},"adapterDefaults":{"maxTokens":true}}`},
		{` { "config" : { "provider" : "p" , "model" : "m" } } `, `{"config":{"provider":"p","model":"m"}}`},
	} {
		got, err := CanonicalHeader([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("CanonicalHeader(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
		again, err := CanonicalHeader(got)
		if err != nil || !bytes.Equal(again, got) {
			t.Errorf("CanonicalHeader is not idempotent: %s → %s", got, again)
		}
	}
	_, err := CanonicalHeader([]byte(`{"config":-0}`))
	requireCode(t, err, sdk.CodeJSONNegativeZero)
	_, err = CanonicalHeader([]byte(`[1]`))
	requireCode(t, err, sdk.CodeHeaderInvalid)

	val := func(s string) HeaderView {
		t.Helper()
		c, err := CanonicalHeader([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		ss, _ := newTestSession(t)
		mustAppend(t, ss, evHeader("initial", string(c)))
		h, _ := ss.RequestHeader()
		return h
	}
	base := `{"config":{"provider":"p","model":"m","temperature":1,"maxTokens":9},"tools":[` + readTool + `,` + searchV1 + `]}`
	for _, c := range []struct {
		other string
		equal bool
	}{
		{base, true},
		{`{"config":{"model":"m","temperature":1.0,"provider":"p","maxTokens":9},"tools":[` + readTool + `,` + searchV1 + `]}`, true},
		{`{"config":{"provider":"p","model":"m","temperature":1,"maxTokens":9},"adapterDefaults":{"maxTokens":true},"tools":[` + readTool + `,` + searchV1 + `]}`, false},
		{`{"config":{"provider":"p","model":"m","temperature":1,"maxTokens":9},"tools":[` + searchV1 + `,` + readTool + `]}`, false},
		{`{"config":{"provider":"p","model":"m","temperature":1,"maxTokens":9},"tools":[{"description":"r","name":"read","parameters":{"type":"object"}},` + searchV1 + `]}`, false},
		{`{"config":{"provider":"p","model":"m","temperature":1,"maxTokens":9},"tools":[` + readTool + `]}`, false},
		{`{"config":{"provider":"p","model":"m","temperature":2,"maxTokens":9},"tools":[` + readTool + `,` + searchV1 + `]}`, false},
	} {
		if got := HeaderEqual(val(base).View(), val(c.other).View()); got != c.equal {
			t.Errorf("HeaderEqual(base, %s) = %v, want %v", c.other, got, c.equal)
		}
	}
	if !HeaderEqual(val(plainHeader).View(), val(`{"config":{"provider":"p","model":"m"},"adapterDefaults":{"maxTokens":false}}`).View()) {
		t.Errorf("absent adapterDefaults must equal all-false flags")
	}
}

func TestRequestContextFold(t *testing.T) {
	s, _ := newTestSession(t)
	if _, ok := s.RequestContext(); ok {
		t.Fatal("RequestContext before any request/context")
	}
	mustAppend(t, s, evRaw(TypeRequestContext, `{"provider":"p","model":"m","contextWindow":1000}`))
	mustAppend(t, s, evTurnStart(1))
	mustAppend(t, s, evRaw(TypeRequestContext, `{"provider":"p","model":"m2"}`))
	v, ok := s.RequestContext()
	if m, _ := v.Get("model").Str(); !ok || m != "m2" || v.Get("contextWindow").Exists() {
		t.Errorf("RequestContext = %s", v.Bytes())
	}
	r := mustRestoreEvents(t, restoreOpts(), RestoreOptions{}, s.Events().Slice())
	if rv, ok := r.RequestContext(); !ok || !bytes.Equal(rv.Bytes(), v.Bytes()) {
		t.Errorf("restored RequestContext = %s", rv.Bytes())
	}
}

// TestToolHistoryFold walks the rules of docs/format.md step by step.
func TestToolHistoryFold(t *testing.T) {
	writeTool := `{"name":"write","description":"w","parameters":{"type":"object"}}`
	write2 := `{"name":"write","description":"w2","parameters":{"type":"object"}}`
	hdr := func(reason string, series bool, tools ...string) AppendInput {
		ss := ""
		if series {
			ss = `,"startsSeries":true`
		}
		return evRaw(TypeRequestHeader, `{"header":{"config":{"provider":"p","model":"m"},"tools":[`+strings.Join(tools, ",")+`]},"reason":"`+reason+`"`+ss+`}`)
	}
	type step struct {
		in      AppendInput
		tools   []string
		updates []string
	}
	s, _ := newTestSession(t)
	if th := s.ToolHistory(); th.Tools != nil || th.Updates != nil {
		t.Errorf("ToolHistory before any header = %+v", th)
	}
	for i, st := range []step{
		{hdr("initial", false, readTool), []string{readTool}, nil},
		// A header with a new tool but no developer update for it.
		{hdr("change", false, readTool, writeTool), []string{readTool, writeTool}, nil},
		{evDeveloperAt(0, 0, "d2", 1, blockAddition("write")), []string{readTool}, []string{"d2 +" + writeTool}},
		{evDeveloperAt(0, 0, "d3", -1, blockRemoval("read")), []string{readTool, writeTool}, nil},
		{hdr("change", false, writeTool), []string{readTool}, []string{"d2 +" + writeTool, "d3 -read"}},
		// series and startsSeries start a new baseline.
		{hdr("series", false, writeTool), []string{writeTool}, nil},
		{evDeveloperAt(0, 0, "d6", -1, blockRemoval("write")), []string{writeTool}, nil},
		{hdr("change", true, writeTool, readTool), []string{writeTool, readTool}, nil},
		{evDeveloperAt(0, 0, "d8", 7, blockAddition("read")), []string{writeTool, readTool}, []string{"d8 +" + readTool}},
		// A changed schema of a declared tool starts a new baseline too.
		{hdr("change", false, write2, readTool), []string{write2, readTool}, nil},
	} {
		mustAppend(t, s, st.in)
		th := s.ToolHistory()
		var tools, updates []string
		for _, tool := range th.Tools {
			tools = append(tools, string(tool.JSON))
		}
		for _, u := range th.Updates {
			for _, a := range u.Additions {
				updates = append(updates, u.MessageID+" +"+string(a.JSON))
			}
			for _, r := range u.Removals {
				updates = append(updates, u.MessageID+" -"+r)
			}
		}
		if !slices.Equal(tools, st.tools) || !slices.Equal(updates, st.updates) {
			t.Errorf("after event %d: ToolHistory = tools %v updates %v; want %v %v", i, tools, updates, st.tools, st.updates)
		}
	}
	requireReplayEqual(t, s)
}

// TestOpenTurnClosersRules checks the open-turn scan (docs/architecture.md)
// beyond the cases of the crash-repair and fork-at-a-cut tests above.
func TestOpenTurnClosersRules(t *testing.T) {
	s, clock := newTestSession(t, bareMessages)
	mustAppendAll(t, s,
		evTurnStart(1),                                  // 0
		evStepStart(1, 1),                               // 1
		evACalls(1, 1, "a2", "x", "y"),                  // 2
		evToolCall(1, 1, "x"),                           // 3
		evToolCall(1, 1, "x"),                           // 4: a later call overwrites callSeq
		evACalls(1, 2, "a5", "z", "x"),                  // 5: x keeps its position, takes step 2, loses its callSeq
		evToolCall(1, 1, "y"),                           // 6
		evToolCall(1, 1, "q"),                           // 7: not pending, ignored
		evR("r8", "z", "done"),                          // 8: answers z
		evACalls(1, 2, "a9", "w"),                       // 9
		evR("r10", "w", "long"),                         // 10
		evACalls(1, 2, "a11", "w"),                      // 11: w pending again
		replacing(evR("r10", "w", "short"), 10, 10, 10), // 12: a rewrite answers nothing
	)
	clock.Advance(3)
	mustAppend(t, s, evU("u13", "still waiting")) // 13
	c := OpenTurnClosers(s.Events().Slice(), Interrupted)
	if got := typesOf(c); !slices.Equal(got, []string{"14:tool/result", "15:tool/result", "16:tool/result", "17:step/end", "18:turn/end"}) {
		t.Fatalf("closers = %v", got)
	}
	requireCloserResult(t, c[0], 14, tT0+3, 1, 2, "x", "interrupted", false, 0)
	requireCloserResult(t, c[1], 15, tT0+3, 1, 1, "y", "interrupted", true, 6)
	requireCloserResult(t, c[2], 16, tT0+3, 1, 2, "w", "interrupted", false, 0)
	requireEvent(t, c[3], 17, tT0+3, TypeStepEnd, `{"turn":1,"step":1}`)
	// The closers pass the same validation as any event.
	r := mustRestoreEvents(t, restoreOpts(), RestoreOptions{}, append(s.Events().Slice(), c...))
	if r.Len() != 19 {
		t.Errorf("Len = %d", r.Len())
	}
	if again := OpenTurnClosers(r.Events().Slice(), Interrupted); len(again) != 0 {
		t.Errorf("closed log still has closers %v", typesOf(again))
	}

	// A turn/start without turn/end drops the previous turn's state.
	s2, _ := newTestSession(t, bareMessages)
	mustAppendAll(t, s2, evTurnStart(1), evStepStart(1, 1), evACalls(1, 1, "a", "x"), evTurnStart(2), evU("u", "x"))
	c2 := OpenTurnClosers(s2.Events().Slice(), Forked)
	if got := typesOf(c2); !slices.Equal(got, []string{"5:turn/end"}) {
		t.Fatalf("closers = %v", got)
	}
	requireEvent(t, c2[0], 5, tT0, TypeTurnEnd, `{"turn":2,"reason":{"kind":"forked"}}`)
	// Pure: the same input gives the same bytes, and the input is untouched.
	before := envs(s2.Events().Slice())
	if !equalBytesList(envs(OpenTurnClosers(s2.Events().Slice(), Forked)), envs(c2)) || !equalBytesList(envs(s2.Events().Slice()), before) {
		t.Errorf("OpenTurnClosers is not deterministic or changed its input")
	}
}

// TestConcurrentAppendsAreSerialized: appends from many goroutines get
// contiguous seqs, each exactly once, and the feed sees them in seq order.
func TestConcurrentAppendsAreSerialized(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppend(t, s, evTurnStart(1))
	var wg sync.WaitGroup
	const writers, each = 8, 40
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := s.Append(context.Background(), evU(fmt.Sprintf("w%d-%d", w, i), "x")); err != nil {
					t.Errorf("Append: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if s.Len() != writers*each+1 {
		t.Fatalf("Len = %d", s.Len())
	}
	f, _ := commitFeeds.Load(s)
	feed := f.(*commitFeed)
	feed.mu.Lock()
	for i, e := range feed.events {
		if e.Seq() != sdk.Seq(i) {
			t.Errorf("feed event %d has seq %d", i, e.Seq())
			break
		}
	}
	feed.mu.Unlock()
	ids := map[string]bool{}
	for _, e := range s.Events().All() {
		id, _ := e.DataView().Get("id").Str()
		if ids[id] {
			t.Errorf("message %s appended twice", id)
		}
		ids[id] = true
	}
	requireReplayEqual(t, s)
}

// TestDerivedCostsAreIncremental checks the costs of docs/format.md by what they
// allocate: after one appended node Messages() and Surface() do not copy the
// surface; a replacement triggers one rebuild, then reads are free again.
func TestDerivedCostsAreIncremental(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppend(t, s, evTurnStart(1))
	const n = 5000
	for i := range n {
		mustAppend(t, s, evU(fmt.Sprintf("u%d", i), "x"))
	}
	if _, err := s.Messages(); err != nil {
		t.Fatal(err)
	}
	var total uint64
	var m0, m1 runtime.MemStats
	const rounds = 100
	for i := range rounds {
		mustAppend(t, s, evU(fmt.Sprintf("v%d", i), "y"))
		runtime.ReadMemStats(&m0)
		if _, err := s.Messages(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Surface(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		total += m1.TotalAlloc - m0.TotalAlloc
	}
	// A copy of the surface would be ≥ 8·n bytes per read.
	if avg := total / rounds; avg > 4096 {
		t.Errorf("reads after one append allocate %d bytes on average, want O(1) (a full copy is %d)", avg, 8*n)
	}
	mustAppend(t, s, replacing(evU("c", "c"), 10, 12, 10, 11, 12))
	if _, err := s.Messages(); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(20, func() { _, _ = s.Messages(); _, _ = s.Surface() }); a != 0 {
		t.Errorf("reads after the rebuild allocate %.1f times", a)
	}
}

// TestReturnedSlicesAreCopies: nothing handed out aliases the log (docs/format.md).
func TestReturnedSlicesAreCopies(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppendAll(t, s, evTurnStart(1), evHeader("initial", headerV1), evU("u2", "a"))
	in := withSources(evU("u3", "c"), 1, 2)
	e := mustAppend(t, s, in)
	before := stateOf(t, s)
	in.SourceEventSeqs[0] = 99
	e.SourceEventSeqs()[0] = 98
	e.Data()[0] = 'X'
	e.Envelope()[0] = 'X'
	ml, _ := s.Messages()
	ml.At(0).JSON()[0] = 'X'
	sv, _ := s.Surface()
	sv.Nodes()[0] = 77
	h, _ := s.RequestHeader()
	h.JSON()[0] = 'X'
	sl := s.Events().Slice()
	sl[0] = Event{}
	_ = s.Transcript().At(0).Message.JSON()
	if got := e.SourceEventSeqs(); !slices.Equal(got, []sdk.Seq{1, 2}) {
		t.Errorf("SourceEventSeqs = %v", got)
	}
	if e.AppendEnvelope(nil)[0] != '{' || e.EnvelopeLen() != len(e.Envelope()) {
		t.Errorf("AppendEnvelope/EnvelopeLen disagree with Envelope")
	}
	requireUnchanged(t, before, s)
	// EventListOf wraps detached events for the detached readers.
	l := EventListOf(s.Events().Slice()[1:])
	if l.Len() != 3 || l.At(0).Seq() != 1 || l.Range(2, 3).Len() != 1 {
		t.Errorf("EventListOf = %d events", l.Len())
	}
}
