package session

// Shared fixtures of the scenario and error-code tests: a fake clock, a
// session constructor that records the commit feed, builders for the events
// of the scenarios' shorthand (U, A, R: user message, assistant message,
// tool result), a capture of everything observable about a session
// (stateOf) and the "a rejected operation changes nothing" check
// (requireUnchanged).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// tT0 is the fake clock's default start (epoch ms).
const tT0 = int64(1_700_000_000_000)

// fakeClock is a deterministic, goroutine-safe epoch-millisecond clock.
type fakeClock struct{ now atomic.Int64 }

func newFakeClock(start int64) *fakeClock {
	c := &fakeClock{}
	c.now.Store(start)
	return c
}

// Func returns the clock as a session.ClockFunc.
func (c *fakeClock) Func() ClockFunc { return ClockFunc(func() int64 { return c.now.Load() }) }

// Now returns the current fake time.
func (c *fakeClock) Now() int64 { return c.now.Load() }

// Set moves the clock to ms.
func (c *fakeClock) Set(ms int64) { c.now.Store(ms) }

// Advance moves the clock forward by ms.
func (c *fakeClock) Advance(ms int64) { c.now.Add(ms) }

// commitFeed records what Options.OnCommit delivered: the stand-in for the
// store's feed and write-behind queues.
type commitFeed struct {
	mu     sync.Mutex
	events []Event
}

func (f *commitFeed) record(events []Event) {
	f.mu.Lock()
	f.events = append(f.events, events...)
	f.mu.Unlock()
}

func (f *commitFeed) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.events)
}

// commitFeeds maps a test session to its commit feed (stateOf reads it).
var commitFeeds sync.Map // *Session → *commitFeed

// testOptions returns options with a fake clock and a commit feed; mods
// adjust them.
func testOptions(clock *fakeClock, feed *commitFeed, mods ...func(*Options)) Options {
	o := Options{
		Header:   sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s1"},
		Clock:    clock.Func(),
		OnCommit: feed.record,
	}
	for _, m := range mods {
		m(&o)
	}
	return o
}

// newTestSession returns an empty live session with id "s1", a fake clock
// at tT0 and a recorded commit feed.
func newTestSession(t testing.TB, mods ...func(*Options)) (*Session, *fakeClock) {
	t.Helper()
	clock := newFakeClock(tT0)
	feed := &commitFeed{}
	s, err := New(testOptions(clock, feed, mods...))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	commitFeeds.Store(s, feed)
	t.Cleanup(func() { commitFeeds.Delete(s) })
	return s, clock
}

// feedLen returns how many events the session's commit feed received, or -1
// when the session has no recorded feed.
func feedLen(s *Session) int {
	if f, ok := commitFeeds.Load(s); ok {
		return f.(*commitFeed).len()
	}
	return -1
}

// ---- event builders (U, A, R shorthand) ----

// jstr renders s as a JSON string literal.
func tcQuote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func tcRaw(s string) json.RawMessage { return json.RawMessage(s) }

func opAppend() *SurfaceOp { return &SurfaceOp{} }

func opReplace(start, end sdk.Seq) *SurfaceOp {
	return &SurfaceOp{Replace: true, StartSeq: start, EndSeq: end}
}

func seqList(v ...sdk.Seq) []sdk.Seq { return append([]sdk.Seq{}, v...) }

// userData is a user message (the data of user/message).
func dataUser(id, text string) string {
	return `{"id":` + tcQuote(id) + `,"role":"user","content":[{"type":"text","text":` + tcQuote(text) + `}],"source":{"kind":"prompt"}}`
}

// asstData is an assistant/message data with the given content blocks.
func dataAsst(turn, step int64, id, content string) string {
	return fmt.Sprintf(`{"turn":%d,"step":%d,"message":{"id":%s,"role":"assistant","content":[%s],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`,
		turn, step, tcQuote(id), content)
}

func blockText(text string) string { return `{"type":"text","text":` + tcQuote(text) + `}` }

func blockCall(id string) string {
	return `{"type":"tool-call","id":` + tcQuote(id) + `,"name":"read","arguments":"{}"}`
}

// toolMsgJSON is a tool message answering callID.
func msgTool(id, callID, text string) string {
	return `{"id":` + tcQuote(id) + `,"role":"tool","toolCallId":` + tcQuote(callID) + `,"content":[` + blockText(text) + `],"source":{"kind":"tool","callId":` + tcQuote(callID) + `}}`
}

// resultData is a tool/result data for callID in turn 1, step 1.
func dataResult(id, callID, text string) string {
	return `{"turn":1,"step":1,"message":` + msgTool(id, callID, text) + `}`
}

func dataSys(id, text string) string {
	return `{"turn":0,"step":0,"message":{"id":` + tcQuote(id) + `,"role":"system","content":[` + blockText(text) + `],"source":{"kind":"system-prompt"}}}`
}

// evU is U: a user/message appended with surfaceOp "append".
func evU(id, text string) AppendInput {
	return AppendInput{Type: TypeUserMessage, Data: tcRaw(dataUser(id, text)), SurfaceOp: opAppend()}
}

// evA is A: an assistant/message with one text block (turn 1, step 1).
func evA(id, text string) AppendInput {
	return AppendInput{Type: TypeAssistantMessage, Data: tcRaw(dataAsst(1, 1, id, blockText(text))), SurfaceOp: opAppend()}
}

// evAEmpty is an assistant/message with content [].
func evAEmpty(id string) AppendInput {
	return AppendInput{Type: TypeAssistantMessage, Data: tcRaw(dataAsst(1, 1, id, "")), SurfaceOp: opAppend()}
}

// evACalls is an assistant/message with one tool-call block per call id.
func evACalls(turn, step int64, id string, callIDs ...string) AppendInput {
	blocks := make([]string, len(callIDs))
	for i, c := range callIDs {
		blocks[i] = blockCall(c)
	}
	return AppendInput{Type: TypeAssistantMessage, Data: tcRaw(dataAsst(turn, step, id, strings.Join(blocks, ","))), SurfaceOp: opAppend()}
}

// evR is R: a tool/result answering callID, appended.
func evR(id, callID, text string) AppendInput {
	return AppendInput{Type: TypeToolResult, Data: tcRaw(dataResult(id, callID, text)), SurfaceOp: opAppend()}
}

// evSys is a system/message appended.
func evSys(id, text string) AppendInput {
	return AppendInput{Type: TypeSystemMessage, Data: tcRaw(dataSys(id, text)), SurfaceOp: opAppend()}
}

func evRaw(typ, data string) AppendInput { return AppendInput{Type: typ, Data: tcRaw(data)} }

func evTurnStart(turn int64) AppendInput {
	return evRaw(TypeTurnStart, fmt.Sprintf(`{"turn":%d}`, turn))
}

func evTurnEnd(turn int64) AppendInput {
	return evRaw(TypeTurnEnd, fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn))
}

func evStepStart(turn, step int64) AppendInput {
	return evRaw(TypeStepStart, fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, step))
}

func evStepEnd(turn, step int64) AppendInput {
	return evRaw(TypeStepEnd, fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, step))
}

func evToolCall(turn, step int64, callID string) AppendInput {
	return evRaw(TypeToolCall, fmt.Sprintf(`{"turn":%d,"step":%d,"callId":%s,"name":"read","arguments":"{}"}`, turn, step, tcQuote(callID)))
}

// evHeader is a request/header with the given EpochHeader and reason.
func evHeader(reason, header string) AppendInput {
	return evRaw(TypeRequestHeader, `{"header":`+header+`,"reason":`+tcQuote(reason)+`}`)
}

const plainHeader = `{"config":{"provider":"p","model":"m"}}`

// evDeveloper is a developer/message; headerSeq < 0 means absent.
func evDeveloper(id string, headerSeq int64, blocks ...string) AppendInput {
	return evDeveloperAt(1, 1, id, headerSeq, blocks...)
}

// evDeveloperAt is evDeveloper carrying the given turn and step.
func evDeveloperAt(turn, step int64, id string, headerSeq int64, blocks ...string) AppendInput {
	hs := ""
	if headerSeq >= 0 {
		hs = `,"headerSeq":` + strconv.FormatInt(headerSeq, 10)
	}
	data := `{"turn":` + strconv.FormatInt(turn, 10) + `,"step":` + strconv.FormatInt(step, 10) + `,"message":{"id":` + tcQuote(id) + `,"role":"developer","content":[` + strings.Join(blocks, ",") + `],"source":{"kind":"tools"}}` + hs + `}`
	return AppendInput{Type: TypeDeveloperMessage, Data: tcRaw(data), SurfaceOp: opAppend()}
}

func blockAddition(name string) string {
	return `{"type":"tool-addition","toolName":` + tcQuote(name) + `}`
}
func blockRemoval(name string) string {
	return `{"type":"tool-removal","toolName":` + tcQuote(name) + `}`
}

// replacing returns in with a replace surfaceOp and the given sources.
func replacing(in AppendInput, start, end sdk.Seq, sources ...sdk.Seq) AppendInput {
	in.SurfaceOp = opReplace(start, end)
	if sources != nil {
		in.SourceEventSeqs = seqList(sources...)
	}
	return in
}

// withSources returns in with sourceEventSeqs set (an empty call sets a
// present, empty list).
func withSources(in AppendInput, sources ...sdk.Seq) AppendInput {
	in.SourceEventSeqs = seqList(sources...)
	return in
}

func mustAppend(t testing.TB, s *Session, in AppendInput) Event {
	t.Helper()
	e, err := s.Append(context.Background(), in)
	if err != nil {
		t.Fatalf("Append(%s %s): %v", in.Type, in.Data, err)
	}
	return e
}

func mustAppendAll(t testing.TB, s *Session, ins ...AppendInput) []Event {
	t.Helper()
	out := make([]Event, len(ins))
	for i, in := range ins {
		out[i] = mustAppend(t, s, in)
	}
	return out
}

// ---- state capture ----

// sessionState is everything a test can observe about a session, plus the
// snapshots taken while capturing it (which must never change later).
type sessionState struct {
	len           sdk.Offset
	envelopes     [][]byte
	nodes         []sdk.Seq
	replaceGen    uint64
	contentGen    uint64
	msgGen        uint64
	msgLogLen     sdk.Offset
	messages      [][]byte
	transcriptLen int
	transcript    []sdk.Seq
	headerSeq     int64 // -1 when there is no request/header
	tools         string
	feed          int
	inherited     int64

	eventSnap      EventList
	surfSnap       SurfaceView
	msgSnap        MessageList
	transcriptSnap TranscriptList
}

func stateOf(t testing.TB, s *Session) sessionState {
	t.Helper()
	st := sessionState{len: s.Len(), headerSeq: -1, feed: feedLen(s), inherited: s.InheritedEventCount()}
	st.eventSnap = s.Events()
	for _, e := range st.eventSnap.All() {
		st.envelopes = append(st.envelopes, e.Envelope())
	}
	sv, err := s.Surface()
	if err != nil {
		t.Fatalf("Surface: %v", err)
	}
	st.surfSnap = sv
	st.nodes = sv.Nodes()
	st.replaceGen, st.contentGen = sv.ReplaceGeneration(), sv.ContentGeneration()
	ml, err := s.Messages()
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	st.msgSnap = ml
	st.msgGen, st.msgLogLen = ml.Generation(), ml.LogLen()
	st.messages = messagesJSON(ml)
	st.transcriptSnap = s.Transcript()
	st.transcriptLen = st.transcriptSnap.Len()
	for _, e := range st.transcriptSnap.All() {
		st.transcript = append(st.transcript, e.Seq)
	}
	if h, ok := s.RequestHeader(); ok {
		st.headerSeq = int64(h.Seq())
	}
	st.tools = renderTools(s.ToolHistory())
	return st
}

func messagesJSON(ml MessageList) [][]byte {
	out := make([][]byte, 0, ml.Len())
	for _, m := range ml.All() {
		out = append(out, m.JSON())
	}
	return out
}

func renderTools(th ToolHistory) string {
	var b strings.Builder
	for _, t := range th.Tools {
		fmt.Fprintf(&b, "tool %s %s\n", t.Name, t.JSON)
	}
	for _, u := range th.Updates {
		fmt.Fprintf(&b, "update %s +", u.MessageID)
		for _, a := range u.Additions {
			fmt.Fprintf(&b, " %s", a.JSON)
		}
		fmt.Fprintf(&b, " - %v\n", u.Removals)
	}
	return b.String()
}

// requireUnchanged asserts that s shows exactly the state captured in before
// (log, surface, both generations, messages, transcript, folds, feed), and
// that the snapshots taken by stateOf still show what they showed then.
func requireUnchanged(t testing.TB, before sessionState, s *Session) {
	t.Helper()
	requireSnapshotsIntact(t, before)
	after := stateOf(t, s)
	if after.len != before.len {
		t.Errorf("Len() = %d, want unchanged %d", after.len, before.len)
	}
	if !equalBytesList(after.envelopes, before.envelopes) {
		t.Errorf("log changed:\n got %q\nwant %q", after.envelopes, before.envelopes)
	}
	if !slices.Equal(after.nodes, before.nodes) {
		t.Errorf("surface nodes = %v, want unchanged %v", after.nodes, before.nodes)
	}
	if after.replaceGen != before.replaceGen || after.contentGen != before.contentGen {
		t.Errorf("generations = (%d, %d), want unchanged (%d, %d)", after.replaceGen, after.contentGen, before.replaceGen, before.contentGen)
	}
	if after.msgGen != before.msgGen || after.msgLogLen != before.msgLogLen {
		t.Errorf("Messages() generation/LogLen = (%d, %d), want unchanged (%d, %d)", after.msgGen, after.msgLogLen, before.msgGen, before.msgLogLen)
	}
	if !equalBytesList(after.messages, before.messages) {
		t.Errorf("messages changed:\n got %s\nwant %s", after.messages, before.messages)
	}
	if after.transcriptLen != before.transcriptLen || !slices.Equal(after.transcript, before.transcript) {
		t.Errorf("transcript = %v, want unchanged %v", after.transcript, before.transcript)
	}
	if after.headerSeq != before.headerSeq {
		t.Errorf("RequestHeader seq = %d, want unchanged %d", after.headerSeq, before.headerSeq)
	}
	if after.tools != before.tools {
		t.Errorf("ToolHistory changed:\n got %s\nwant %s", after.tools, before.tools)
	}
	if after.feed != before.feed {
		t.Errorf("commit feed has %d events, want unchanged %d", after.feed, before.feed)
	}
	if after.inherited != before.inherited {
		t.Errorf("InheritedEventCount = %d, want unchanged %d", after.inherited, before.inherited)
	}
}

// requireSnapshotsIntact asserts that the snapshots captured in st still
// report what they reported when st was captured.
func requireSnapshotsIntact(t testing.TB, st sessionState) {
	t.Helper()
	if st.eventSnap.Len() != len(st.envelopes) {
		t.Errorf("old Events() snapshot Len = %d, want %d", st.eventSnap.Len(), len(st.envelopes))
	} else {
		for i, e := range st.eventSnap.All() {
			if !bytes.Equal(e.Envelope(), st.envelopes[i]) {
				t.Errorf("old Events() snapshot event %d = %s, want %s", i, e.Envelope(), st.envelopes[i])
			}
		}
	}
	if got := st.surfSnap.Nodes(); !slices.Equal(got, st.nodes) {
		t.Errorf("old Surface() snapshot nodes = %v, want %v", got, st.nodes)
	}
	if st.surfSnap.ReplaceGeneration() != st.replaceGen || st.surfSnap.ContentGeneration() != st.contentGen {
		t.Errorf("old Surface() snapshot generations changed")
	}
	if got := messagesJSON(st.msgSnap); !equalBytesList(got, st.messages) {
		t.Errorf("old Messages() snapshot = %s, want %s", got, st.messages)
	}
	if st.msgSnap.Generation() != st.msgGen || st.msgSnap.LogLen() != st.msgLogLen {
		t.Errorf("old Messages() snapshot generation/LogLen changed")
	}
	if st.transcriptSnap.Len() != st.transcriptLen {
		t.Errorf("old Transcript() snapshot Len = %d, want %d", st.transcriptSnap.Len(), st.transcriptLen)
	}
}

func equalBytesList(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, bytes.Equal)
}

// ---- errors ----

// showDetails logs every checked detail (LOGBOOK_TEST_SHOW_DETAILS=1) so a
// reviewer can read what users will see.
var showDetails = os.Getenv("LOGBOOK_TEST_SHOW_DETAILS") != ""

// findCode returns the first *sdk.Error with the given code in err's chain.
func findCode(err error, code sdk.Code) *sdk.Error {
	for err != nil {
		if e, ok := err.(*sdk.Error); ok && e.Code == code {
			return e
		}
		err = errors.Unwrap(err)
	}
	return nil
}

// requireCode asserts that err matches code (errors.Is) and returns the
// *sdk.Error in its chain that carries it.
func requireCode(t testing.TB, err error, code sdk.Code) *sdk.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	if !errors.Is(err, code) {
		t.Fatalf("error %v does not match %s", err, code)
	}
	e := findCode(err, code)
	if e == nil {
		t.Fatalf("error %v matches %s but carries no *sdk.Error with that code", err, code)
	}
	return e
}

// requireDetail asserts that e's Detail mentions every part.
func requireDetail(t testing.TB, e *sdk.Error, parts ...string) {
	t.Helper()
	if showDetails {
		t.Logf("%s: %s", e.Code, e.Detail)
	}
	for _, p := range parts {
		if !strings.Contains(e.Detail, p) {
			t.Errorf("%s detail %q does not mention %q", e.Code, e.Detail, p)
		}
	}
}

// rejectAppend appends in, which must fail with code and a detail naming
// parts, and asserts that nothing changed. It returns the error carrying code.
func rejectAppend(t testing.TB, s *Session, in AppendInput, code sdk.Code, parts ...string) *sdk.Error {
	t.Helper()
	before := stateOf(t, s)
	ev, err := s.Append(context.Background(), in)
	if err == nil {
		t.Fatalf("Append(%s %.200s) accepted as seq %d, want %s", in.Type, in.Data, ev.Seq(), code)
	}
	if !ev.IsZero() {
		t.Errorf("rejected Append returned a non-zero Event")
	}
	e := requireCode(t, err, code)
	requireDetail(t, e, parts...)
	requireUnchanged(t, before, s)
	return e
}

// ---- restore helpers ----

// env renders a canonical envelope; extra is appended after data (for
// instance `,"surfaceOp":"append"`).
func envLine(seq int, typ, data, extra string) []byte {
	return []byte(fmt.Sprintf(`{"seq":%d,"time":%d,"type":%s,"data":%s%s}`, seq, tT0, tcQuote(typ), data, extra))
}

// envelopesOf returns copies of the session's envelopes.
func envelopesOf(s *Session) [][]byte {
	var out [][]byte
	for _, e := range s.Events().All() {
		out = append(out, e.Envelope())
	}
	return out
}

// restoreOpts are plain options for restored sessions.
func restoreOpts(mods ...func(*Options)) Options {
	o := Options{Header: sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s1"}, Clock: newFakeClock(tT0).Func()}
	for _, m := range mods {
		m(&o)
	}
	return o
}

// rejectRestore restores envelopes, which must fail with the wrapper outer
// (CORRUPT_LOG, SEED_INVALID, or "" for an unwrapped refusal) around the rule
// code inner at index; the rule's detail must name parts. It returns the rule
// error.
func rejectRestore(t testing.TB, opts Options, ro RestoreOptions, envs [][]byte, outer, inner sdk.Code, index int, parts ...string) *sdk.Error {
	t.Helper()
	copies := make([][]byte, len(envs))
	for i, b := range envs {
		copies[i] = append([]byte(nil), b...)
	}
	s, err := Restore(context.Background(), opts, ro, envs)
	if err == nil {
		t.Fatalf("Restore accepted %d envelopes, want %s/%s", len(envs), outer, inner)
	}
	if s != nil {
		t.Errorf("a failed Restore returned a session")
	}
	if !equalBytesList(copies, envs) {
		t.Errorf("Restore modified its input")
	}
	e := requireCode(t, err, inner)
	if outer != "" {
		w := requireCode(t, err, outer)
		if sdk.CodeOf(err) != outer {
			t.Errorf("outermost code = %s, want %s", sdk.CodeOf(err), outer)
		}
		if (w.Index == nil || *w.Index != index) || (w.Seq == nil || *w.Seq != int64(index)) {
			t.Errorf("%s error %v; want index and seq %d", outer, w, index)
		}
		if w.Err == nil || findCode(w.Err, inner) == nil {
			t.Errorf("%s does not wrap %s: %v", outer, inner, err)
		}
	} else {
		if sdk.CodeOf(err) != inner {
			t.Errorf("outermost code = %s, want %s returned unwrapped", sdk.CodeOf(err), inner)
		}
		if e.Index == nil || *e.Index != index {
			t.Errorf("%s error %v; want index %d", inner, e, index)
		}
	}
	requireDetail(t, e, parts...)
	return e
}

// mustRestoreEvents restores events and fails the test on error.
func mustRestoreEvents(t testing.TB, opts Options, ro RestoreOptions, events []Event) *Session {
	t.Helper()
	s, err := RestoreEvents(context.Background(), opts, ro, events)
	if err != nil {
		t.Fatalf("RestoreEvents: %v", err)
	}
	return s
}

// requireReplayEqual checks "replay = live": restoring s's envelopes, and
// folding its events, yields the same log, surface, generations, messages,
// transcript and folds.
func requireReplayEqual(t testing.TB, s *Session, mods ...func(*Options)) {
	t.Helper()
	live := stateOf(t, s)
	opts := restoreOpts(mods...)
	opts.Header = s.Header()
	r, err := Restore(context.Background(), opts, RestoreOptions{}, envelopesOf(s))
	if err != nil {
		t.Fatalf("Restore of the live log: %v", err)
	}
	replay := stateOf(t, r)
	replay.feed, live.feed = 0, 0
	// Compare everything but the captured snapshot handles.
	requireSameState(t, "Restore", live, replay)
	re := mustRestoreEvents(t, opts, RestoreOptions{}, s.Events().Slice())
	requireSameState(t, "RestoreEvents", live, stateOfNoFeed(t, re))
	f, err := Fold(context.Background(), s.Events().Slice(), opts.Projections)
	if err != nil {
		t.Fatalf("Fold of the live log: %v", err)
	}
	if !slices.Equal(f.Nodes, live.nodes) {
		t.Errorf("Fold nodes = %v, want live %v", f.Nodes, live.nodes)
	}
}

func stateOfNoFeed(t testing.TB, s *Session) sessionState {
	t.Helper()
	st := stateOf(t, s)
	st.feed = 0
	return st
}

func requireSameState(t testing.TB, what string, want, got sessionState) {
	t.Helper()
	if got.len != want.len || !equalBytesList(got.envelopes, want.envelopes) {
		t.Errorf("%s: log differs:\n got %s\nwant %s", what, got.envelopes, want.envelopes)
	}
	if !slices.Equal(got.nodes, want.nodes) || got.replaceGen != want.replaceGen || got.contentGen != want.contentGen {
		t.Errorf("%s: surface %v gens (%d,%d), want %v (%d,%d)", what, got.nodes, got.replaceGen, got.contentGen, want.nodes, want.replaceGen, want.contentGen)
	}
	if !equalBytesList(got.messages, want.messages) {
		t.Errorf("%s: messages differ:\n got %s\nwant %s", what, got.messages, want.messages)
	}
	if !slices.Equal(got.transcript, want.transcript) {
		t.Errorf("%s: transcript %v, want %v", what, got.transcript, want.transcript)
	}
	if got.headerSeq != want.headerSeq || got.tools != want.tools {
		t.Errorf("%s: header seq %d tools %q, want %d %q", what, got.headerSeq, got.tools, want.headerSeq, want.tools)
	}
	if got.inherited != want.inherited {
		t.Errorf("%s: inherited %d, want %d", what, got.inherited, want.inherited)
	}
}

// noPanic runs f and fails the test if it panics.
func noPanic(t testing.TB, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	f()
}

// ---- the helpers themselves ----

// recordingTB captures what a helper reports instead of failing the test.
type recordingTB struct {
	testing.TB
	mu       sync.Mutex
	failures []string
}

func (r *recordingTB) Helper()             {}
func (r *recordingTB) Logf(string, ...any) {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// failuresOf runs f with a recording TB and returns what it reported.
func failuresOf(t *testing.T, f func(tb testing.TB)) []string {
	r := &recordingTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.failures
}

// TestHelpersDetectChanges makes sure the checks used everywhere above can
// fail: a helper that never fails would make every test vacuous.
func TestHelpersDetectChanges(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppendAll(t, s, evTurnStart(1), evU("u0", "a"))
	before := stateOf(t, s)
	if f := failuresOf(t, func(tb testing.TB) { requireUnchanged(tb, before, s) }); len(f) != 0 {
		t.Errorf("requireUnchanged on an unchanged session reported %v", f)
	}
	mustAppend(t, s, evU("u1", "b"))
	if f := failuresOf(t, func(tb testing.TB) { requireUnchanged(tb, before, s) }); len(f) < 4 {
		t.Errorf("requireUnchanged missed an append: %v", f)
	}
	mustAppend(t, s, evRaw(TypeTodoWrite, `{"todos":[]}`)) // no node, no message: only the log and feed move
	mid := stateOf(t, s)
	mustAppend(t, s, evRaw(TypeTodoWrite, `{"todos":[]}`))
	if f := failuresOf(t, func(tb testing.TB) { requireUnchanged(tb, mid, s) }); len(f) < 2 {
		t.Errorf("requireUnchanged missed a log-only append: %v", f)
	}
	broken := stateOf(t, s)
	broken.messages = broken.messages[:1]
	if f := failuresOf(t, func(tb testing.TB) { requireSnapshotsIntact(tb, broken) }); len(f) == 0 {
		t.Errorf("requireSnapshotsIntact missed a changed snapshot")
	}
	if f := failuresOf(t, func(tb testing.TB) { rejectAppend(tb, s, evU("u9", "ok"), sdk.CodePayloadInvalid) }); len(f) == 0 {
		t.Errorf("rejectAppend accepted an accepted append")
	}
	if f := failuresOf(t, func(tb testing.TB) {
		rejectAppend(tb, s, evRaw(TypeUserMessage, dataUser("x", "y")), sdk.CodePayloadInvalid)
	}); len(f) == 0 {
		t.Errorf("rejectAppend accepted the wrong code")
	}
	if f := failuresOf(t, func(tb testing.TB) {
		rejectAppend(tb, s, evRaw(TypeUserMessage, dataUser("x", "y")), sdk.CodeSurfaceMarkerRequired, "no such text")
	}); len(f) == 0 {
		t.Errorf("rejectAppend accepted a detail without the wanted part")
	}
	if f := failuresOf(t, func(tb testing.TB) {
		rejectRestore(tb, restoreOpts(), RestoreOptions{}, envelopesOf(s), sdk.CodeCorruptLog, sdk.CodeSeqNotContiguous, 0)
	}); len(f) == 0 {
		t.Errorf("rejectRestore accepted a valid log")
	}
	if f := failuresOf(t, func(tb testing.TB) {
		rejectRestore(tb, restoreOpts(), RestoreOptions{}, [][]byte{envLine(1, TypeTurnStart, `{"turn":1}`, "")}, sdk.CodeSeedInvalid, sdk.CodeSeqNotContiguous, 0)
	}); len(f) == 0 {
		t.Errorf("rejectRestore accepted the wrong wrapper")
	}
}

// ctl is the owner's Control of a session a test built without one.
func ctl(s *Session) *Control { return &Control{s: s} }

// bareMessages is an Options mod for the tests of the surface, its folds
// and the append machinery that append messages outside any turn or step:
// a foreign loop, which only a lenient session takes (docs/format.md, "The
// agent-loop protocol"). The loop rules have their own tests (loop_test.go).
func bareMessages(o *Options) { o.Header.Protocol = sdk.ProtocolLenient }
