package compaction

// Fixtures of the transaction, policy and prune tests: in-process fake
// summarizer and pruner, a conversation builder, a compactor with the
// default block and deterministic ids.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// txSummarizer is an in-process summarizer: it records every request and
// answers with fn (default: one short text block).
type txSummarizer struct {
	mu   sync.Mutex
	reqs []sdk.SummarizeRequest
	fn   func(ctx context.Context, r sdk.SummarizeRequest) (sdk.SummarizeReply, error)
}

func (f *txSummarizer) Summarize(ctx context.Context, r sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, r)
	fn := f.fn
	f.mu.Unlock()
	if fn != nil {
		return fn(ctx, r)
	}
	return txReply("short summary"), nil
}

func (f *txSummarizer) requests() []sdk.SummarizeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sdk.SummarizeRequest(nil), f.reqs...)
}

func txReply(texts ...string) sdk.SummarizeReply {
	r := sdk.SummarizeReply{Provider: "sum-p", Model: "sum-m", Usage: []byte(`{"input":10,"output":2}`)}
	for _, t := range texts {
		r.Summary = append(r.Summary, []byte(`{"type":"text","text":`+txQ(t)+`}`))
	}
	return r
}

// txSelector is a summarizer's range selection.
type txSelector struct {
	reply sdk.SelectRangeReply
	err   error
	reqs  []sdk.SelectRangeRequest
}

func (f *txSelector) SelectRange(_ context.Context, r sdk.SelectRangeRequest) (sdk.SelectRangeReply, error) {
	f.reqs = append(f.reqs, r)
	return f.reply, f.err
}

// txLogger captures warnings.
type txLogger struct {
	hclog.Logger
	mu   sync.Mutex
	msgs []string
}

func newTxLogger() *txLogger {
	l := &txLogger{}
	l.Logger = hclog.New(&hclog.LoggerOptions{Output: txLogSink{l}, Level: hclog.Trace})
	return l
}

type txLogSink struct{ l *txLogger }

func (w txLogSink) Write(p []byte) (int, error) {
	w.l.mu.Lock()
	w.l.msgs = append(w.l.msgs, string(p))
	w.l.mu.Unlock()
	return len(p), nil
}

func (l *txLogger) has(part string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		if strings.Contains(m, part) {
			return true
		}
	}
	return false
}

// txBlock returns the default compaction block; mod adjusts it.
func txBlock(mods ...func(*config.Compaction)) *config.Compaction {
	c := *config.Default(config.Overrides{}).Compaction
	for _, m := range mods {
		m(&c)
	}
	return &c
}

// txCompactor returns a compactor over sum with deterministic ids c1, c2, …
func txCompactor(t testing.TB, sum sdk.Summarizer, mod func(*Options), blockMods ...func(*config.Compaction)) *Compactor {
	t.Helper()
	n := 0
	opts := Options{Summarizer: sum, NewID: func() string { n++; return fmt.Sprintf("c%d", n) }}
	if mod != nil {
		mod(&opts)
	}
	c, err := New(txBlock(blockMods...), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// txSession returns a live session with the compaction validator, its
// options changed by mods. The transaction tests' conversations put every
// round in step 1 with no step boundaries (a foreign loop), so it is
// lenient (docs/format.md, "The agent-loop protocol"); strictSession is
// the strict one for the tests of compaction in a strict session.
func txSession(t testing.TB, mods ...func(*session.Options)) *session.Session {
	t.Helper()
	o := session.Options{Header: sdk.Header{FormatVersion: sdk.FormatVersion, ID: "tx", Protocol: sdk.ProtocolLenient},
		Clock: session.ClockFunc(func() int64 { return 1000 }), Relational: []session.Relational{NewValidator()}}
	for _, m := range mods {
		m(&o)
	}
	s, err := session.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// txQ renders s as a JSON string the way logbook stores it (no HTML
// escaping).
func txQ(s string) string { return string(mustJSON(s)) }

func txIn(typ, data string) session.AppendInput {
	return session.AppendInput{Type: typ, Data: []byte(data)}
}

func txSys(text string) session.AppendInput {
	return session.AppendInput{Type: session.TypeSystemMessage, SurfaceOp: &session.SurfaceOp{},
		Data: []byte(`{"turn":0,"step":0,"message":{"id":"sys","role":"system","content":[{"type":"text","text":` + txQ(text) + `}],"source":{"kind":"system-prompt"}}}`)}
}

func txUser(id, text string) session.AppendInput {
	return session.AppendInput{Type: session.TypeUserMessage, SurfaceOp: &session.SurfaceOp{},
		Data: []byte(`{"id":` + txQ(id) + `,"role":"user","content":[{"type":"text","text":` + txQ(text) + `}],"source":{"kind":"prompt"}}`)}
}

func txAsst(turn int, id, text string, calls ...string) session.AppendInput {
	return txAsstIn(turn, 1, id, text, calls...)
}

// txAsstIn is txAsst in the given step.
func txAsstIn(turn, step int, id, text string, calls ...string) session.AppendInput {
	blocks := []string{`{"type":"text","text":` + txQ(text) + `}`}
	for _, c := range calls {
		blocks = append(blocks, `{"type":"tool-call","id":`+txQ(c)+`,"name":"read","arguments":"{}"}`)
	}
	return session.AppendInput{Type: session.TypeAssistantMessage, SurfaceOp: &session.SurfaceOp{},
		Data: []byte(fmt.Sprintf(`{"turn":%d,"step":%d,"message":{"id":%s,"role":"assistant","content":[%s],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`,
			turn, step, txQ(id), strings.Join(blocks, ",")))}
}

func txResult(turn int, callID, text string) session.AppendInput {
	return txResultIn(turn, 1, callID, text)
}

// txResultIn is txResult in the given step.
func txResultIn(turn, step int, callID, text string) session.AppendInput {
	return session.AppendInput{Type: session.TypeToolResult, SurfaceOp: &session.SurfaceOp{},
		Data: []byte(fmt.Sprintf(`{"turn":%d,"step":%d,"message":{"id":%s,"role":"tool","toolCallId":%s,"content":[{"type":"text","text":%s}],"source":{"kind":"tool","callId":%s}},"meta":{"k":1}}`,
			turn, step, txQ("r-"+callID), txQ(callID), txQ(text), txQ(callID)))}
}

const txHeaderJSON = `{"config":{"provider":"p","model":"m"},"tools":[{"name":"read","description":"d","parameters":{}}]}`

func txHeader() session.AppendInput {
	return txIn(session.TypeRequestHeader, `{"header":`+txHeaderJSON+`,"reason":"initial"}`)
}

func txTurnStart(n int) session.AppendInput {
	return txIn(session.TypeTurnStart, fmt.Sprintf(`{"turn":%d}`, n))
}

func txTurnEnd(n int) session.AppendInput {
	return txIn(session.TypeTurnEnd, fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, n))
}

func txAppend(t testing.TB, s *session.Session, ins ...session.AppendInput) []session.Event {
	t.Helper()
	out := make([]session.Event, 0, len(ins))
	for _, in := range ins {
		e, err := s.Append(context.Background(), in)
		if err != nil {
			t.Fatalf("append %s %.200s: %v", in.Type, in.Data, err)
		}
		out = append(out, e)
	}
	return out
}

// txConversation appends a system prompt (0), a header (1), turn/start 1
// (2) and rounds of user question, assistant tool call, tool result and
// assistant answer, each text about size characters; it leaves turn 1 open
// unless closed is set.
func txConversation(t testing.TB, s *session.Session, rounds, size int, closed bool) {
	t.Helper()
	txAppend(t, s, txSys("You are a test agent."), txHeader(), txTurnStart(1))
	for i := range rounds {
		call := fmt.Sprintf("call-%d", i)
		txAppend(t, s,
			txUser(fmt.Sprintf("u%d", i), fmt.Sprintf("question %d %s", i, strings.Repeat("q", size))),
			txAsst(1, fmt.Sprintf("a%d", i), "let me look", call),
			txResult(1, call, fmt.Sprintf("result %d %s", i, strings.Repeat("r", size))),
			txAsst(1, fmt.Sprintf("b%d", i), fmt.Sprintf("answer %d %s", i, strings.Repeat("a", size))),
		)
	}
	if closed {
		txAppend(t, s, txTurnEnd(1))
	}
}

// txNodes returns the current surface nodes.
func txNodes(t testing.TB, s *session.Session) []sdk.Seq {
	t.Helper()
	sv, err := s.Surface()
	if err != nil {
		t.Fatal(err)
	}
	return sv.Nodes()
}

// txTypes returns the types of the events from seq from on.
func txTypes(s *session.Session, from sdk.Offset) []string {
	var out []string
	for _, e := range s.Events().Range(from, s.Len()).All() {
		out = append(out, e.Type())
	}
	return out
}

func txRequireCode(t testing.TB, err error, code sdk.Code, parts ...string) *sdk.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %s", code)
	}
	var found *sdk.Error
	for e := error(err); e != nil; {
		if se, ok := e.(*sdk.Error); ok && se.Code == code {
			found = se
			break
		}
		if u, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range u.Unwrap() {
				if se, ok := x.(*sdk.Error); ok && se.Code == code {
					found = se
				}
			}
			break
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	if found == nil {
		t.Fatalf("error %v carries no %s", err, code)
	}
	for _, p := range parts {
		if !strings.Contains(found.Detail, p) {
			t.Errorf("%s detail %q does not mention %q", code, found.Detail, p)
		}
	}
	return found
}

// txData decodes an event's data.
func txData(t testing.TB, e session.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(e.Data(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// txPolicy is a model policy with the default ratios and the given max
// tokens.
func txPolicy(provider, model string, maxTokens int64) config.ModelPolicy {
	d := txBlock()
	return config.ModelPolicy{Provider: provider, Model: model, ThresholdRatio: d.ThresholdRatio, RetainRatio: d.RetainRatio, MaxTokens: maxTokens}
}
