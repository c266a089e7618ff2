package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/seed-e5e476df/logbook/provider"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// sdkParams returns the official SDK's request params for a provider
// format: the type the provider's own client sends.
func sdkParams(format string) interface {
	json.Marshaler
	json.Unmarshaler
} {
	switch format {
	case provider.FormatOpenAI:
		return &openai.ChatCompletionNewParams{}
	case provider.FormatAnthropic:
		return &anthropic.MessageNewParams{}
	}
	return &responses.ResponseNewParams{}
}

// sdkReads fails unless the SDK's params for format read body and write
// back the same JSON value: every member is one the SDK knows.
func sdkReads(t *testing.T, format string, body []byte) {
	t.Helper()
	p := sdkParams(format)
	if err := p.UnmarshalJSON(body); err != nil {
		t.Fatalf("%s: the SDK cannot read the request: %v\n%s", format, err, body)
	}
	again, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s: the SDK changed the request:\n sent %s\n kept %s", format, body, again)
	}
}

// loopCalls folds the calls of a log: those announced by assistant
// messages and those a tool/result answered, so that the unanswered ones
// are known without asking provider.
type loopCalls struct {
	announced []string
	answered  map[string]bool
	last      map[string][]byte // the last body checked, by format
}

func (c *loopCalls) add(e Event) {
	data := e.DataView()
	switch e.Type() {
	case TypeAssistantMessage:
		c.announced = append(c.announced, announcedIDs(data)...)
	case TypeToolResult:
		id, _ := data.Get("message").Get("toolCallId").Str()
		c.answered[id] = true
	}
}

// announcedIDs returns the call ids an assistant/message's data announces.
func announcedIDs(data jsonv.Value) []string {
	var ids []string
	for _, b := range data.Get("message").Get("content").Elements() {
		if typ, _ := b.Get("type").Str(); typ == "tool-call" {
			id, _ := b.Get("id").Str()
			ids = append(ids, id)
		}
	}
	return ids
}

// shadowedPair reports whether omission o of the messages of s (seqs[i]
// the node of message i) is explained by a range replace in this state: a
// surface node of o's pair — the assistant/message that announced o's
// call, or a tool/result answering one of that message's calls — is off
// the surface, shadowed by a replace. A node a tool/result rewrite
// replaced does not count: the rewrite answers the same call in its place.
func shadowedPair(s *Session, seqs []sdk.Seq, o provider.Omission) bool {
	visible := map[sdk.Seq]bool{}
	for _, q := range seqs {
		visible[q] = true
	}
	log := s.Events().Slice()
	rewritten := map[sdk.Seq]bool{}
	for _, e := range log {
		if op, ok := e.SurfaceOp(); ok && op.Replace && e.Type() == TypeToolResult {
			for q := op.StartSeq; q <= op.EndSeq; q++ {
				rewritten[sdk.Seq(q)] = true
			}
		}
	}
	shadowed := func(e Event) bool { return !visible[e.Seq()] && !rewritten[e.Seq()] }
	a := int(seqs[o.Index])
	for a >= 0 && (log[a].Type() != TypeAssistantMessage || !slices.Contains(announcedIDs(log[a].DataView()), o.CallID)) {
		a--
	}
	if a < 0 {
		return false
	}
	if shadowed(log[a]) {
		return true
	}
	calls := announcedIDs(log[a].DataView())
	turn, step := turnStep(log[a].DataView())
	for _, e := range log[a+1:] {
		if e.Type() != TypeToolResult {
			continue
		}
		t, n := turnStep(e.DataView())
		id, _ := e.DataView().Get("message").Get("toolCallId").Str()
		if t == turn && n == step && slices.Contains(calls, id) && shadowed(e) {
			return true
		}
	}
	return false
}

func (c *loopCalls) unanswered() []string {
	return slices.DeleteFunc(slices.Clone(c.announced), func(id string) bool { return c.answered[id] })
}

// fallbackHeader is the request header the property renders with while
// the log has none yet.
const fallbackHeader = `{"config":{"provider":"p","model":"m"}}`

// Every state of a random valid session, after each event, renders to
// every provider format as a body the provider accepts, or, while calls
// lack their results, refuses with TOOL_CALLS_PENDING naming only such
// calls and the seq of the message that announced them. A body passes
// provider.CheckRequest and the official SDK's request params read it
// member for member. Nothing is left out unless, in that state, a replace
// shadowed a surface node of the pair the omission belongs to.
func TestPropertyProviderBodiesAreAccepted(t *testing.T) {
	var seen outcomes
	for seed := range uint64(40) {
		g := newLogGen(t, seed+7000)
		calls := loopCalls{answered: map[string]bool{}, last: map[string][]byte{}}
		for range 70 {
			before := g.s.Len()
			g.next()
			for _, e := range g.s.Events().Range(before, g.s.Len()).Slice() {
				calls.add(e)
			}
			seen.add(checkRenderings(t, seed, g.s, &calls))
		}
	}
	// The generator reaches every case the property speaks of.
	if seen.bodies == 0 || seen.withCalls == 0 || seen.pending == 0 || seen.omitted == 0 {
		t.Fatalf("the property never saw some case: %+v", seen)
	}
	t.Logf("%+v", seen)
}

// outcomes counts what the property checked.
type outcomes struct {
	bodies    int // states rendered to a body in every format
	withCalls int // … of them with a tool call answered
	pending   int // states refused with TOOL_CALLS_PENDING
	omitted   int // states with something left out
}

func (o *outcomes) add(p outcomes) {
	o.bodies += p.bodies
	o.withCalls += p.withCalls
	o.pending += p.pending
	o.omitted += p.omitted
}

// checkRenderings renders the state of s to each provider format, checks
// what the property promises, and says what it saw.
func checkRenderings(t *testing.T, seed uint64, s *Session, calls *loopCalls) (seen outcomes) {
	t.Helper()
	l, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	msgs := l.JSON()
	seqs := make([]sdk.Seq, l.Len())
	for i, m := range l.All() {
		seqs[i] = m.NodeSeq()
	}
	header := s.AppendRequestHeaderJSON(nil)
	unanswered := calls.unanswered()
	for _, format := range []string{provider.FormatOpenAI, provider.FormatAnthropic, provider.FormatResponses} {
		if string(header) == "null" {
			if _, err := provider.Request(format, provider.RequestParts{Header: header, Messages: msgs}); !errors.Is(err, sdk.CodeRequestHeaderMissing) {
				t.Fatalf("seed %d %s: no header: %v", seed, format, err)
			}
			header = []byte(fallbackHeader)
		}
		body, err := provider.Request(format, provider.RequestParts{Header: header, Messages: msgs})
		if err != nil {
			e := sdk.ErrorOf(provider.AtSeqs(err, seqs))
			var pending []string
			if err := json.Unmarshal([]byte(e.Meta["callIds"]), &pending); err != nil || len(pending) == 0 {
				t.Fatalf("seed %d %s: Meta callIds %q is not a JSON array of ids: %v", seed, format, e.Meta["callIds"], err)
			}
			if e.Code != sdk.CodeToolCallsPending || e.Seq == nil || s.Events().At(int(*e.Seq)).Type() != TypeAssistantMessage ||
				slices.ContainsFunc(pending, func(id string) bool { return !slices.Contains(unanswered, id) }) {
				t.Fatalf("seed %d %s at len %d: %v (unanswered %v)", seed, format, s.Len(), err, unanswered)
			}
			seen.pending = 1
			continue
		}
		if bytes.Equal(body, calls.last[format]) {
			continue // an event off the surface: checked already
		}
		calls.last[format] = body
		if err := provider.CheckRequest(format, body); err != nil {
			t.Fatalf("seed %d %s at len %d: %v\n%s", seed, format, s.Len(), err, body)
		}
		sdkReads(t, format, body)
	}
	if seen.pending == 0 {
		seen.bodies = 1
		if len(calls.answered) > 0 {
			seen.withCalls = 1
		}
	}
	omitted, err := provider.Omissions(msgs)
	if len(omitted) > 0 {
		seen.omitted = 1
	}
	for _, o := range omitted {
		if err == nil && !shadowedPair(s, seqs, o) {
			t.Fatalf("seed %d at len %d: a strict loop left %v out, though no replace shadowed a node of its pair", seed, s.Len(), o)
		}
	}
	if len(unanswered) == 0 && err != nil {
		t.Fatalf("seed %d at len %d: every call is answered, yet %v", seed, s.Len(), err)
	}
	return seen
}
