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
	replaced  bool              // a range replace other than a tool-result rewrite
	// interleaved: another message came between a call and its result
	// (the loop rules refuse that in a strict session)
	interleaved bool
}

func (c *loopCalls) add(e Event) {
	data := e.DataView()
	switch e.Type() {
	case TypeUserMessage, TypeSystemMessage, TypeDeveloperMessage, TypeAssistantMessage:
		c.interleaved = c.interleaved || len(c.unanswered()) > 0
	}
	switch e.Type() {
	case TypeAssistantMessage:
		for _, b := range data.Get("message").Get("content").Elements() {
			if typ, _ := b.Get("type").Str(); typ == "tool-call" {
				id, _ := b.Get("id").Str()
				c.announced = append(c.announced, id)
			}
		}
	case TypeToolResult:
		id, _ := data.Get("message").Get("toolCallId").Str()
		c.answered[id] = true
		return
	}
	if op, ok := e.SurfaceOp(); ok && op.Replace {
		c.replaced = true
	}
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
// member for member. Nothing is left out unless a range replace shadowed
// one side of a pair or a message came between a call and its result.
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
	if err == nil && !calls.replaced && !calls.interleaved && len(omitted) > 0 {
		t.Fatalf("seed %d at len %d: a strict loop without replaces left %v out", seed, s.Len(), omitted)
	}
	if len(unanswered) == 0 && err != nil {
		t.Fatalf("seed %d at len %d: every call is answered, yet %v", seed, s.Len(), err)
	}
	return seen
}
