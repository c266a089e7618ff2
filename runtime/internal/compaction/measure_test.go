package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// ---- test session builders (prefixed "ana" so they never collide with the
// other test files of this package) ----

const anaRedactType = "projection:test/redact"

// anaProjection replaces each target's content by one text block holding the
// projection event's data.text.
type anaProjection struct{}

func (anaProjection) Identity() string { return "test/1" }

func (anaProjection) Project(_ context.Context, in session.ProjectInput) ([]session.ProjectTarget, error) {
	text, _ := in.Event.DataView().Get("text").Str()
	var out []session.ProjectTarget
	for _, tg := range in.Targets {
		var m map[string]any
		if err := json.Unmarshal(tg.Message, &m); err != nil {
			return nil, err
		}
		m["content"] = []any{map[string]any{"type": "text", "text": text}}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		out = append(out, session.ProjectTarget{Seq: tg.Seq, EventType: tg.EventType, Message: b})
	}
	return out, nil
}

// anaSession returns a session for the analysis tests (measure, balance,
// range selection, spill). They build surfaces of any shape, broken tool
// pairings and messages outside any step included, as an old log or an
// imported one holds them: a foreign loop, so the session is lenient
// (docs/format.md, "The agent-loop protocol").
func anaSession(t testing.TB) *session.Session {
	t.Helper()
	s, err := session.New(session.Options{
		Header:      sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s1", Protocol: sdk.ProtocolLenient},
		Clock:       session.ClockFunc(func() int64 { return 1_700_000_000_000 }),
		Projections: session.ProjectionMap{anaRedactType: anaProjection{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func anaQ(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func anaText(text string) string { return `{"type":"text","text":` + anaQ(text) + `}` }

func anaCall(id, name, args string) string {
	return `{"type":"tool-call","id":` + anaQ(id) + `,"name":` + anaQ(name) + `,"arguments":` + anaQ(args) + `}`
}

func anaAppendOp() *session.SurfaceOp { return &session.SurfaceOp{} }

func anaSys(text string) session.AppendInput {
	return session.AppendInput{Type: session.TypeSystemMessage, SurfaceOp: anaAppendOp(),
		Data: json.RawMessage(`{"turn":0,"step":0,"message":{"id":"sys","role":"system","content":[` + anaText(text) + `],"source":{"kind":"system-prompt"}}}`)}
}

func anaUser(id, text string) session.AppendInput {
	return session.AppendInput{Type: session.TypeUserMessage, SurfaceOp: anaAppendOp(),
		Data: json.RawMessage(`{"id":` + anaQ(id) + `,"role":"user","content":[` + anaText(text) + `],"source":{"kind":"prompt"}}`)}
}

// anaAsstOpts are the optional members of an assistant/message.
type anaAsstOpts struct {
	usage       string // TokenUsage JSON; "" = absent
	interrupted bool
}

func anaAsst(id string, o anaAsstOpts, blocks ...string) session.AppendInput {
	extra := ""
	if o.usage != "" {
		extra += `,"usage":` + o.usage
	}
	if o.interrupted {
		extra += `,"interrupted":true`
	}
	return session.AppendInput{Type: session.TypeAssistantMessage, SurfaceOp: anaAppendOp(),
		Data: json.RawMessage(`{"turn":1,"step":1,"message":{"id":` + anaQ(id) + `,"role":"assistant","content":[` + strings.Join(blocks, ",") +
			`],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]` + extra + `}`)}
}

func anaUsage(input, output, cacheRead, cacheWrite int64) string {
	return fmt.Sprintf(`{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":%d}`, input, output, cacheRead, cacheWrite)
}

func anaToolMsg(id, callID, text string) string {
	return `{"id":` + anaQ(id) + `,"role":"tool","toolCallId":` + anaQ(callID) + `,"content":[` + anaText(text) + `],"source":{"kind":"tool","callId":` + anaQ(callID) + `}}`
}

func anaResult(id, callID, text string) session.AppendInput {
	return session.AppendInput{Type: session.TypeToolResult, SurfaceOp: anaAppendOp(),
		Data: json.RawMessage(`{"turn":1,"step":1,"message":` + anaToolMsg(id, callID, text) + `}`)}
}

const anaTools1 = `[{"name":"read","description":"Read a file","parameters":{"type":"object"}}]`
const anaTools2 = `[{"name":"grep","description":"Search files","parameters":{"type":"object"}}]`

func anaHeader(reason, tools string) session.AppendInput {
	h := `{"config":{"provider":"p","model":"m"}`
	if tools != "" {
		h += `,"tools":` + tools
	}
	return session.AppendInput{Type: session.TypeRequestHeader, Data: json.RawMessage(`{"header":` + h + `},"reason":` + anaQ(reason) + `}`)}
}

func anaStep(turn, step int64) session.AppendInput {
	return session.AppendInput{Type: session.TypeStepStart, Data: json.RawMessage(fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, step))}
}

// anaReplace is a user/message checkpoint replacing start..end, citing sources.
func anaReplace(id string, start, end sdk.Seq, sources ...sdk.Seq) session.AppendInput {
	in := anaUser(id, "summary of "+id)
	in.SurfaceOp = &session.SurfaceOp{Replace: true, StartSeq: start, EndSeq: end}
	in.SourceEventSeqs = append([]sdk.Seq{}, sources...)
	return in
}

func anaProject(text string, targets ...sdk.Seq) session.AppendInput {
	b, _ := json.Marshal(targets)
	return session.AppendInput{Type: anaRedactType, Data: json.RawMessage(`{"targets":` + string(b) + `,"text":` + anaQ(text) + `}`)}
}

func anaAppend(t testing.TB, s *session.Session, ins ...session.AppendInput) []session.Event {
	t.Helper()
	out := make([]session.Event, len(ins))
	for i, in := range ins {
		e, err := s.Append(context.Background(), in)
		if err != nil {
			t.Fatalf("Append(%s %s): %v", in.Type, in.Data, err)
		}
		out[i] = e
	}
	return out
}

// anaTokens returns the estimate of node seq's current derived message, 0
// when it has none.
func anaTokens(t testing.TB, s *session.Session, seq sdk.Seq) int64 {
	t.Helper()
	ml, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ml.All() {
		if m.NodeSeq() == seq {
			return EstimateMessage(m.View())
		}
	}
	return 0
}

// anaRequireCode asserts err carries code and its text contains each want.
func anaRequireCode(t testing.TB, err error, code sdk.Code, want ...string) *sdk.Error {
	t.Helper()
	if !errors.Is(err, code) {
		t.Fatalf("error = %v, want %s", err, code)
	}
	var e *sdk.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("outermost code of %v is not %s", err, code)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	return e
}

// ---- Measure ----

func TestMeasureEstimatedBaselineSumsNodesAndHeaderTools(t *testing.T) {
	s := anaSession(t)
	anaAppend(t, s,
		anaHeader("initial", anaTools1),                         // 0
		anaSys("You are terse."),                                // 1
		anaUser("u1", "hello there"),                            // 2
		anaStep(1, 1),                                           // 3
		anaAsst("a1", anaAsstOpts{}, anaText("hi")),             // 4: no usage
		anaAsst("a2", anaAsstOpts{usage: anaUsage(1, 1, 0, 0)}), // 5: empty content, no message
	)
	m, err := Measure(s)
	if err != nil {
		t.Fatal(err)
	}
	// "You are terse." 14 cp → 4+4, +4; "hello there" 11 → 3+4, +4; "hi" → 1+4, +4.
	want := []NodeTokens{{1, 12}, {2, 11}, {4, 9}, {5, 0}}
	if !slices.Equal(m.Nodes, want) {
		t.Fatalf("Nodes = %v, want %v", m.Nodes, want)
	}
	tools := int64((len([]rune(anaTools1))+3)/4 + 4)
	if m.LogLen != 6 || m.SurfaceTokens != 32 || m.HeaderTokens != tools {
		t.Fatalf("LogLen %d SurfaceTokens %d HeaderTokens %d (want 6, 32, %d)", m.LogLen, m.SurfaceTokens, m.HeaderTokens, tools)
	}
	// a2 has usage 2, below its call estimate: estimated.
	if m.BaselineKind != BaselineEstimated || m.TotalTokens != tools+32 {
		t.Fatalf("baseline %s total %d, want estimated %d", m.BaselineKind, m.TotalTokens, tools+32)
	}
}

func TestMeasureProviderBaselineAddsNodesAfterAnchor(t *testing.T) {
	s := anaSession(t)
	anaAppend(t, s,
		anaHeader("initial", anaTools1),
		anaUser("u1", "question"),
		anaAsst("a1", anaAsstOpts{usage: anaUsage(900, 50, 30, 20)}, anaText("answer"), anaCall("c1", "read", `{"path":"a"}`)),
		anaResult("r1", "c1", strings.Repeat("x", 400)),
	)
	m, err := Measure(s)
	if err != nil {
		t.Fatal(err)
	}
	tail := anaTokens(t, s, 3)
	if m.BaselineKind != BaselineProvider || m.TotalTokens != 1000+tail {
		t.Fatalf("baseline %s total %d, want provider %d", m.BaselineKind, m.TotalTokens, 1000+tail)
	}
	if m.SurfaceTokens != anaTokens(t, s, 1)+anaTokens(t, s, 2)+tail {
		t.Fatalf("SurfaceTokens %d", m.SurfaceTokens)
	}
}

func TestMeasureAnchorRules(t *testing.T) {
	big := anaUsage(5000, 100, 0, 0)
	type step struct {
		name   string
		ins    []session.AppendInput
		kind   BaselineKind
		anchor sdk.Seq // expected anchor when kind is provider
	}
	steps := []step{
		{"no assistant yet", []session.AppendInput{anaHeader("initial", anaTools1), anaUser("u1", "q")}, BaselineEstimated, 0},                                                         // 0, 1
		{"usage above the call estimate", []session.AppendInput{anaAsst("a2", anaAsstOpts{usage: big}, anaText("a"))}, BaselineProvider, 2},                                            // 2
		{"interrupted is never an anchor; the earlier one stays", []session.AppendInput{anaAsst("a3", anaAsstOpts{usage: big, interrupted: true}, anaText("b"))}, BaselineProvider, 2}, // 3
		{"without usage the earlier one stays", []session.AppendInput{anaAsst("a4", anaAsstOpts{}, anaText("c"))}, BaselineProvider, 2},                                                // 4
		{"series header equal to the current one", []session.AppendInput{anaHeader("series", anaTools1)}, BaselineProvider, 2},                                                         // 5
		{"changed header: no anchor matches", []session.AppendInput{anaHeader("change", anaTools2)}, BaselineEstimated, 0},                                                             // 6
		{"header back: anchor before both changes", []session.AppendInput{anaHeader("change", anaTools1)}, BaselineProvider, 2},                                                        // 7
		{"new anchor under the current header", []session.AppendInput{anaAsst("a8", anaAsstOpts{usage: big}, anaText("d"))}, BaselineProvider, 8},                                      // 8
		{"replacement after the anchor", []session.AppendInput{anaReplace("cp9", 1, 2, 1, 2)}, BaselineEstimated, 0},                                                                   // 9
		{"anchor after the replacement", []session.AppendInput{anaAsst("a10", anaAsstOpts{usage: big}, anaText("e"))}, BaselineProvider, 10},                                           // 10
		{"projection after the anchor", []session.AppendInput{anaProject("redacted", 9)}, BaselineEstimated, 0},                                                                        // 11
		{"anchor below its call estimate", []session.AppendInput{anaAsst("a12", anaAsstOpts{usage: anaUsage(1, 0, 0, 0)}, anaText("f"))}, BaselineEstimated, 0},                        // 12
		{"anchor with cache usage", []session.AppendInput{anaAsst("a13", anaAsstOpts{usage: anaUsage(10, 5, 4000, 100)}, anaText("g"))}, BaselineProvider, 13},                         // 13
	}
	s := anaSession(t)
	meter := NewMeter(s)
	for _, st := range steps {
		anaAppend(t, s, st.ins...)
		m, err := meter.Measure()
		if err != nil {
			t.Fatal(err)
		}
		if m.BaselineKind != st.kind {
			t.Fatalf("%s: baseline %s, want %s", st.name, m.BaselineKind, st.kind)
		}
		fresh, err := Measure(s)
		if err != nil {
			t.Fatal(err)
		}
		if !anaSameMeasurement(m, fresh) {
			t.Fatalf("%s: incremental %+v != fresh %+v", st.name, m, fresh)
		}
		if st.kind == BaselineProvider {
			e, _ := s.Event(st.anchor)
			var d struct {
				Usage struct{ Input, Output, CacheRead, CacheWrite int64 }
			}
			if err := json.Unmarshal(e.Data(), &d); err != nil {
				t.Fatal(err)
			}
			u := d.Usage.Input + d.Usage.Output + d.Usage.CacheRead + d.Usage.CacheWrite
			var after int64
			seen := false
			for _, n := range m.Nodes {
				if seen {
					after += n.Tokens
				}
				seen = seen || n.Seq == st.anchor
			}
			if !seen || m.TotalTokens != u+after {
				t.Fatalf("%s: total %d, want anchor %d: %d + %d", st.name, m.TotalTokens, st.anchor, u, after)
			}
		} else if m.TotalTokens != m.HeaderTokens+m.SurfaceTokens {
			t.Fatalf("%s: estimated total %d != %d + %d", st.name, m.TotalTokens, m.HeaderTokens, m.SurfaceTokens)
		}
	}
}

func TestMeasureNodesSnapshotNeverChanges(t *testing.T) {
	s := anaSession(t)
	anaAppend(t, s, anaUser("u0", "zero"), anaUser("u1", "one"), anaUser("u2", "two"))
	meter := NewMeter(s)
	m1, err := meter.Measure()
	if err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(m1.Nodes)
	anaAppend(t, s, anaUser("u3", "three"))
	m2, _ := meter.Measure()
	anaAppend(t, s, anaReplace("cp", 0, 1, 0, 1), anaProject("p", 2))
	m3, _ := meter.Measure()
	anaAppend(t, s, anaUser("u6", "six"))
	m4, _ := meter.Measure()
	if !slices.Equal(m1.Nodes, before) || len(m2.Nodes) != 4 || len(m3.Nodes) != 3 || len(m4.Nodes) != 4 {
		t.Fatalf("snapshots changed: %v %v %v %v", m1.Nodes, m2.Nodes, m3.Nodes, m4.Nodes)
	}
	if !slices.Equal(m2.Nodes[:3], before) {
		t.Fatalf("m2 %v does not extend %v", m2.Nodes, before)
	}
	if got := []sdk.Seq{m3.Nodes[0].Seq, m3.Nodes[1].Seq, m3.Nodes[2].Seq}; !slices.Equal(got, []sdk.Seq{4, 2, 3}) {
		t.Fatalf("m3 nodes %v", m3.Nodes)
	}
	if m3.Nodes[1].Tokens != 1+4+4 { // projected "p"
		t.Fatalf("projected node tokens %d", m3.Nodes[1].Tokens)
	}
}

func TestMeasureProjectionRemovedIsTheSessionsError(t *testing.T) {
	defs := session.ProjectionMap{anaRedactType: anaProjection{}}
	s, err := session.New(session.Options{Header: sdk.Header{FormatVersion: 1, ID: "s1", Protocol: sdk.ProtocolLenient}, Projections: defs})
	if err != nil {
		t.Fatal(err)
	}
	anaAppend(t, s, anaUser("u0", "x"), anaProject("p", 0))
	meter := NewMeter(s)
	if _, err := meter.Measure(); err != nil {
		t.Fatal(err)
	}
	delete(defs, anaRedactType)
	_, err = meter.Measure()
	anaRequireCode(t, err, sdk.CodeProjectionRemoved)
	if _, err := meter.BalancedBefore(0); !errors.Is(err, sdk.CodeProjectionRemoved) {
		t.Fatalf("BalancedBefore: %v", err)
	}
	if _, _, _, err := meter.SelectRange(Measurement{}, 0); !errors.Is(err, sdk.CodeProjectionRemoved) {
		t.Fatalf("SelectRange: %v", err)
	}
	if err := meter.CheckRegion(0, 0); !errors.Is(err, sdk.CodeProjectionRemoved) {
		t.Fatalf("CheckRegion: %v", err)
	}
}

func anaSameMeasurement(a, b Measurement) bool {
	return a.LogLen == b.LogLen && slices.Equal(a.Nodes, b.Nodes) && a.SurfaceTokens == b.SurfaceTokens &&
		a.HeaderTokens == b.HeaderTokens && a.BaselineKind == b.BaselineKind && a.TotalTokens == b.TotalTokens
}

// ---- property: incremental == from scratch == a direct reading of the rules ----

// anaRef is a from-scratch reading of docs/compaction.md written
// independently of the Meter: maps and linear scans, no caches.
type anaRef struct {
	m      Measurement
	counts []int64 // counts[i]: tool-pairing count over nodes[0..i)
	negPos int     // first position whose running count is negative; -1
	first  int     // 1 when node 0 is a system/message
}

func anaReference(t testing.TB, s *session.Session) anaRef {
	t.Helper()
	sv, err := s.Surface()
	if err != nil {
		t.Fatal(err)
	}
	ml, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	events := s.Events()
	msgOf := map[sdk.Seq]session.MessageView{}
	for _, v := range ml.All() {
		msgOf[v.NodeSeq()] = v
	}
	lastChange := int64(-1)
	for _, e := range events.All() {
		op, ok := e.SurfaceOp()
		if ok && op.Replace && session.IsCoreType(e.Type()) || strings.HasPrefix(e.Type(), session.ProjectionPrefix) {
			lastChange = int64(e.Seq())
		}
	}
	r := anaRef{negPos: -1, counts: []int64{0}}
	r.m.LogLen = s.Len()
	cur, hasCur := s.RequestHeader()
	if hasCur {
		r.m.HeaderTokens = EstimateTools(cur.View().Get("tools"))
	}
	for i, seq := range sv.Nodes() {
		e, _ := s.Event(seq)
		var tokens, delta int64
		if v, ok := msgOf[seq]; ok {
			tokens = EstimateMessage(v.View())
			if e.Type() == session.TypeAssistantMessage {
				for _, b := range v.View().Get("content").Elements() {
					if b.Get("type").StrEqual("tool-call") {
						delta++
					}
				}
			}
		}
		if e.Type() == session.TypeToolResult {
			delta = -1
		}
		if i == 0 && e.Type() == session.TypeSystemMessage {
			r.first = 1
		}
		r.m.Nodes = append(r.m.Nodes, NodeTokens{Seq: seq, Tokens: tokens})
		r.m.SurfaceTokens += tokens
		c := r.counts[i] + delta
		r.counts = append(r.counts, c)
		if c < 0 && r.negPos < 0 {
			r.negPos = i
		}
	}
	r.m.BaselineKind = BaselineEstimated
	r.m.TotalTokens = r.m.HeaderTokens + r.m.SurfaceTokens
	for p := len(r.m.Nodes) - 1; p >= 0; p-- {
		seq := r.m.Nodes[p].Seq
		e, _ := s.Event(seq)
		d := e.DataView()
		interrupted, _ := d.Get("interrupted").Bool()
		if int64(seq) <= lastChange || e.Type() != session.TypeAssistantMessage || !d.Get("usage").Exists() || interrupted {
			continue
		}
		h, ok := session.FoldRequestHeader(events.Range(0, sdk.Offset(seq)), 0)
		if ok != hasCur || ok && !session.HeaderEqual(h.View(), cur.View()) {
			continue
		}
		var usage struct{ Input, Output, CacheRead, CacheWrite int64 }
		if err := json.Unmarshal(d.Get("usage").Bytes(), &usage); err != nil {
			t.Fatal(err)
		}
		u := usage.Input + usage.Output + usage.CacheRead + usage.CacheWrite
		var through int64
		for _, n := range r.m.Nodes[:p+1] {
			through += n.Tokens
		}
		if u >= r.m.HeaderTokens+through {
			r.m.BaselineKind = BaselineProvider
			r.m.TotalTokens = u + r.m.SurfaceTokens - through
		}
		break
	}
	return r
}

// cut is the reference BalancedBefore(position i): ok, or the corrupt error.
func (r anaRef) cut(i int) (bool, sdk.Code) {
	if r.negPos >= 0 && r.negPos < i {
		return false, sdk.CodeToolPairingCorrupt
	}
	return r.counts[i] == 0, ""
}

func (r anaRef) position(seq sdk.Seq) int {
	for i, n := range r.m.Nodes {
		if n.Seq == seq {
			return i
		}
	}
	return -1
}

func (r anaRef) selectRange(retain int64) (start, end sdk.Seq, ok bool, code sdk.Code) {
	n := len(r.m.Nodes)
	var acc int64
	keep := -1
	for i := n - 1; i >= r.first; i-- {
		acc += r.m.Nodes[i].Tokens
		if acc >= retain {
			keep = i
			break
		}
	}
	if keep <= r.first {
		return 0, 0, false, ""
	}
	for keep > r.first {
		bal, code := r.cut(keep)
		if code != "" {
			return 0, 0, false, code
		}
		if bal {
			break
		}
		keep--
	}
	if keep == r.first {
		return 0, 0, false, ""
	}
	return r.m.Nodes[r.first].Seq, r.m.Nodes[keep-1].Seq, true, ""
}

func (r anaRef) checkRegion(start, end sdk.Seq) sdk.Code {
	ps, pe := r.position(start), r.position(end)
	switch {
	case ps < 0 || pe < 0 || ps > pe:
		return sdk.CodeCompactionUnbalancedBoundary
	case ps == 0 && r.first == 1:
		return sdk.CodeSystemNode0Protected
	}
	for _, c := range []int{ps, pe + 1} {
		bal, code := r.cut(c)
		if code != "" {
			return code
		}
		if !bal {
			return sdk.CodeCompactionUnbalancedBoundary
		}
	}
	return ""
}

// anaGen drives a session with random valid events of every kind the meter
// cares about.
type anaGen struct {
	t       *testing.T
	rng     *anaRand
	s       *session.Session
	id      int
	headers int
	pending []string // tool calls without a result yet
	corrupt bool     // may append stray results and project tool calls away
}

// anaRand is a small deterministic generator (splitmix64), so a failing seed
// replays exactly.
type anaRand struct{ x uint64 }

func (r *anaRand) next() uint64 {
	r.x += 0x9e3779b97f4a7c15
	z := r.x
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (r *anaRand) intn(n int) int { return int(r.next() % uint64(n)) }

func (g *anaGen) newID(prefix string) string {
	g.id++
	return fmt.Sprintf("%s%d", prefix, g.id)
}

func (g *anaGen) text() string {
	alphabet := []string{"a", "b", " ", "é", "日", "🙂", "\n", "\"", "\\", "\x01"}
	var b strings.Builder
	for range g.rng.intn(60) {
		b.WriteString(alphabet[g.rng.intn(len(alphabet))])
	}
	return b.String()
}

func (g *anaGen) add(in session.AppendInput) {
	g.t.Helper()
	anaAppend(g.t, g.s, in)
}

func (g *anaGen) nodes() []sdk.Seq {
	sv, err := g.s.Surface()
	if err != nil {
		g.t.Fatal(err)
	}
	return sv.Nodes()
}

func (g *anaGen) step() {
	switch g.rng.intn(14) {
	case 0, 1:
		g.add(anaUser(g.newID("u"), g.text()))
	case 2, 3:
		var blocks []string
		if g.rng.intn(3) > 0 {
			blocks = append(blocks, anaText(g.text()))
		}
		for range g.rng.intn(3) {
			c := g.newID("c")
			g.pending = append(g.pending, c)
			blocks = append(blocks, anaCall(c, "read", g.text()))
		}
		o := anaAsstOpts{interrupted: g.rng.intn(6) == 0}
		switch g.rng.intn(3) {
		case 0:
			o.usage = anaUsage(int64(g.rng.intn(3000)), int64(g.rng.intn(100)), int64(g.rng.intn(500)), 0)
		case 1:
			o.usage = fmt.Sprintf(`{"input":%d,"output":%d}`, g.rng.intn(50), g.rng.intn(50))
		}
		g.add(anaAsst(g.newID("a"), o, blocks...))
	case 4, 5:
		if len(g.pending) > 0 {
			c := g.pending[0]
			g.pending = g.pending[1:]
			g.add(anaResult(g.newID("r"), c, g.text()))
		}
	case 6:
		if g.corrupt && g.rng.intn(4) == 0 { // a result nobody asked for: corrupt pairing
			g.add(anaResult(g.newID("r"), g.newID("stray"), g.text()))
		}
	case 7:
		reason := "initial"
		if g.headers > 0 {
			reason = []string{"change", "series"}[g.rng.intn(2)]
		}
		g.headers++
		g.add(anaHeader(reason, []string{"", anaTools1, anaTools2}[g.rng.intn(3)]))
	case 8:
		nodes := g.nodes()
		lo := 0
		if len(nodes) > 0 {
			if e, _ := g.s.Event(nodes[0]); e.Type() == session.TypeSystemMessage {
				lo = 1
			}
		}
		if len(nodes)-lo < 1 {
			return
		}
		i := lo + g.rng.intn(len(nodes)-lo)
		j := i + g.rng.intn(min(4, len(nodes)-i))
		if !g.corrupt { // replace only balanced spans, as compaction does
			ref := anaReference(g.t, g.s)
			if b, code := ref.cut(i); !b || code != "" {
				return
			}
			if b, code := ref.cut(j + 1); !b || code != "" {
				return
			}
		}
		g.add(anaReplace(g.newID("cp"), nodes[i], nodes[j], nodes[i:j+1]...))
	case 9:
		g.rewriteResult()
	case 10:
		ml, err := g.s.Messages()
		if err != nil {
			g.t.Fatal(err)
		}
		if ml.Len() == 0 {
			return
		}
		var targets []sdk.Seq
		for range 2 {
			m := ml.At(g.rng.intn(ml.Len()))
			if !slices.Contains(targets, m.NodeSeq()) && (g.corrupt || m.Role() != "assistant") {
				targets = append(targets, m.NodeSeq())
			}
		}
		if len(targets) == 0 {
			return
		}
		g.add(anaProject(g.text(), targets...))
	case 11:
		g.add(anaStep(1, int64(g.id)))
	case 12:
		g.add(anaAsst(g.newID("a"), anaAsstOpts{usage: anaUsage(int64(g.rng.intn(4000)), 1, 0, 0)}))
	case 13:
		g.add(anaAsst(g.newID("a"), anaAsstOpts{usage: anaUsage(100000, 1, 0, 0)}, anaText(g.text())))
	}
}

// rewriteResult rewrites the content of a random current tool/result.
func (g *anaGen) rewriteResult() {
	var results []sdk.Seq
	for _, n := range g.nodes() {
		if e, _ := g.s.Event(n); e.Type() == session.TypeToolResult {
			results = append(results, n)
		}
	}
	if len(results) == 0 {
		return
	}
	seq := results[g.rng.intn(len(results))]
	e, _ := g.s.Event(seq)
	dec := json.NewDecoder(strings.NewReader(string(e.Data())))
	dec.UseNumber()
	var data map[string]any
	if err := dec.Decode(&data); err != nil {
		g.t.Fatal(err)
	}
	data["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": g.text()}}
	b, err := json.Marshal(data)
	if err != nil {
		g.t.Fatal(err)
	}
	g.add(session.AppendInput{Type: session.TypeToolResult, Data: b,
		SurfaceOp: &session.SurfaceOp{Replace: true, StartSeq: seq, EndSeq: seq}, SourceEventSeqs: []sdk.Seq{seq}})
}

// anaCompare checks every answer of meter against the reference.
func anaCompare(t *testing.T, s *session.Session, meter *Meter, where string) {
	t.Helper()
	ref := anaReference(t, s)
	got, err := meter.Measure()
	if err != nil {
		t.Fatal(err)
	}
	if !anaSameMeasurement(got, ref.m) {
		t.Fatalf("%s: incremental %+v\nreference %+v", where, got, ref.m)
	}
	fresh, err := Measure(s)
	if err != nil {
		t.Fatal(err)
	}
	if !anaSameMeasurement(fresh, ref.m) {
		t.Fatalf("%s: from scratch %+v\nreference %+v", where, fresh, ref.m)
	}
	for i, n := range ref.m.Nodes {
		wantB, wantCode := ref.cut(i)
		b, err := meter.BalancedBefore(n.Seq)
		if sdk.CodeOf(err) != wantCode || err == nil && b != wantB {
			t.Fatalf("%s: BalancedBefore(%d) = %v, %v; want %v, %q", where, n.Seq, b, err, wantB, wantCode)
		}
		wantA, wantCodeA := ref.cut(i + 1)
		a, err := meter.BalancedAfter(n.Seq)
		if sdk.CodeOf(err) != wantCodeA || err == nil && a != wantA {
			t.Fatalf("%s: BalancedAfter(%d) = %v, %v; want %v, %q", where, n.Seq, a, err, wantA, wantCodeA)
		}
	}
	for _, retain := range []int64{0, 1, 30, 200, 1000, 1 << 40} {
		ws, we, wok, wcode := ref.selectRange(retain)
		st, en, ok, err := meter.SelectRange(got, retain)
		if sdk.CodeOf(err) != wcode || ok != wok || ok && (st != ws || en != we) {
			t.Fatalf("%s: SelectRange(%d) = %d, %d, %v, %v; want %d, %d, %v, %q", where, retain, st, en, ok, err, ws, we, wok, wcode)
		}
		if ok {
			if err := meter.CheckRegion(st, en); err != nil {
				t.Fatalf("%s: selected range %d..%d fails CheckRegion: %v", where, st, en, err)
			}
		}
	}
	n := len(ref.m.Nodes)
	if n == 0 {
		return
	}
	for k := range 8 {
		i, j := (k*7919)%n, (k*104729+3)%n
		st, en := ref.m.Nodes[i].Seq, ref.m.Nodes[j].Seq
		if code := sdk.CodeOf(meter.CheckRegion(st, en)); code != ref.checkRegion(st, en) {
			t.Fatalf("%s: CheckRegion(%d, %d) = %q, want %q", where, st, en, code, ref.checkRegion(st, en))
		}
	}
}

func TestPropertyIncrementalMeasureEqualsFromScratch(t *testing.T) {
	seeds, ops := 16, 250
	if testing.Short() {
		seeds = 4
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			g := &anaGen{t: t, rng: &anaRand{x: uint64(seed)}, s: anaSession(t), corrupt: seed%4 == 0}
			if g.rng.intn(2) == 0 {
				g.add(anaSys(g.text()))
			}
			meter := NewMeter(g.s)
			for i := range ops {
				g.step()
				if g.rng.intn(3) == 0 { // measure after 1..k new events
					anaCompare(t, g.s, meter, fmt.Sprintf("seed %d op %d", seed, i))
				}
			}
			anaCompare(t, g.s, meter, fmt.Sprintf("seed %d end", seed))
		})
	}
}

// TestMeterConcurrentWithAppends measures while another goroutine appends
// (run with -race): every measurement is internally consistent, and the last
// one equals the reference.
func TestMeterConcurrentWithAppends(t *testing.T) {
	g := &anaGen{t: t, rng: &anaRand{x: 99}, s: anaSession(t)}
	meter := NewMeter(g.s)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			m, err := meter.Measure()
			if err != nil {
				t.Error(err)
				return
			}
			var sum int64
			for _, n := range m.Nodes {
				sum += n.Tokens
			}
			if sum != m.SurfaceTokens {
				t.Errorf("inconsistent measurement at log length %d: Σ %d != %d", m.LogLen, sum, m.SurfaceTokens)
				return
			}
		}
	}()
	for range 300 {
		g.step()
	}
	close(done)
	wg.Wait()
	anaCompare(t, g.s, meter, "after concurrent appends")
}
