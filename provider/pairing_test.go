package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Short builders of derived messages for the pairing tests.
func user(text string) string {
	return fmt.Sprintf(`{"id":"u","role":"user","content":[{"type":"text","text":%q}],"source":{"kind":"prompt"}}`, text)
}

func calling(ids ...string) string {
	var blocks []string
	for _, id := range ids {
		blocks = append(blocks, fmt.Sprintf(`{"type":"tool-call","id":%q,"name":"ls","arguments":"{}"}`, id))
	}
	return `{"id":"a","role":"assistant","content":[` + strings.Join(blocks, ",") + `],"source":{"kind":"model","provider":"p","model":"m"}}`
}

func result(id string) string {
	return fmt.Sprintf(`{"id":"r","role":"tool","toolCallId":%q,"content":[{"type":"text","text":"out %s"}],"source":{"kind":"tool","callId":%q}}`, id, id, id)
}

func raws(msgs ...string) [][]byte {
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		out[i] = []byte(m)
	}
	return out
}

const pairHeader = `{"config":{"provider":"p","model":"m"}}`

// renderAll renders msgs in every provider format and checks each body
// (CheckRequest); it returns the bodies by format.
func renderAll(t *testing.T, msgs [][]byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, format := range providerFormats {
		body, err := Request(format, RequestParts{Header: []byte(pairHeader), Messages: msgs})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if err := CheckRequest(format, body); err != nil {
			t.Fatalf("%s: %v\n%s", format, err, body)
		}
		out[format] = body
	}
	return out
}

// Calls announced at the end without every result (a step still open)
// refuse every provider format with TOOL_CALLS_PENDING naming the pending
// calls and the announcing message; logbook's own format renders them.
func TestOpenStepIsToolCallsPending(t *testing.T) {
	msgs := raws(user("go"), calling("c1", "c2"), result("c2"))
	for _, format := range providerFormats {
		for name, render := range map[string]func() ([]byte, error){
			"messages": func() ([]byte, error) { return Messages(format, msgs) },
			"request": func() ([]byte, error) {
				return Request(format, RequestParts{Header: []byte(pairHeader), Messages: msgs})
			},
		} {
			out, err := render()
			e := sdk.ErrorOf(err)
			if e == nil || e.Code != sdk.CodeToolCallsPending || e.Meta["callIds"] != `["c1"]` || e.Index == nil || *e.Index != 1 || out != nil {
				t.Errorf("%s %s: %s, %v; want TOOL_CALLS_PENDING, callIds c1, index 1", format, name, out, err)
			}
		}
	}
	if out, err := Messages(FormatLogbook, msgs); err != nil || !json.Valid(out) {
		t.Errorf("logbook: %s, %v", out, err)
	}
	if _, err := Omissions(msgs); !errors.Is(err, sdk.CodeToolCallsPending) {
		t.Errorf("Omissions: %v", err)
	}
}

// A call id announced by two messages is TOOL_CALL_REPEATED naming the
// id and the second message.
func TestRepeatedCallIDRefused(t *testing.T) {
	msgs := raws(user("go"), calling("c1", "c1"), result("c1"))
	for _, format := range providerFormats {
		_, err := Messages(format, msgs)
		e := sdk.ErrorOf(err)
		if e == nil || e.Code != sdk.CodeToolCallRepeated || e.Meta["callIds"] != `["c1"]` || *e.Index != 1 {
			t.Errorf("%s: %v; want TOOL_CALL_REPEATED, callIds c1, index 1", format, err)
		}
	}
}

// A call id an earlier message used already (a harness that reuses ids
// across steps) is sent renamed with its result, so every call id of the
// body is unique and each result still answers its own call.
func TestReusedCallIDIsRenamed(t *testing.T) {
	msgs := raws(user("go"), calling("c1"), result("c1"), calling("c1", "c1_2"), result("c1_2"), result("c1"))
	for format, body := range renderAll(t, msgs) {
		if err := CheckRequest(format, body); err != nil {
			t.Errorf("%s: %v\n%s", format, err, body)
		}
		s := string(body)
		if !strings.Contains(s, `"c1_3"`) || strings.Count(s, `"c1"`) != 2 || strings.Count(s, `"c1_2"`) != 2 {
			t.Errorf("%s: want c1 (call and result), c1_2 kept for the second message's own c1_2, and its c1 sent as c1_3:\n%s", format, body)
		}
		if i, j := strings.Index(s, `"out c1_2"`), strings.LastIndex(s, `"out c1"`); i < 0 || j < 0 {
			t.Errorf("%s: results missing:\n%s", format, body)
		}
	}
}

// Results answered in any order follow their assistant message in call
// order.
func TestResultsFollowInCallOrder(t *testing.T) {
	bodies := renderAll(t, raws(user("go"), calling("c1", "c2", "c3"), result("c3"), result("c1"), result("c2")))
	for format, body := range bodies {
		s := string(body)
		i1, i2, i3 := strings.Index(s, `"out c1"`), strings.Index(s, `"out c2"`), strings.Index(s, `"out c3"`)
		if i1 < 0 || i1 >= i2 || i2 >= i3 {
			t.Errorf("%s: results not in call order: %s", format, body)
		}
	}
}

// What no provider accepts where it stands (a lenient log, or a replace
// that shadowed one side of a pair) is left out, listed by Omissions with
// its rule, and every body still passes CheckRequest.
func TestOmissionsAreListedAndLeftOut(t *testing.T) {
	cases := []struct {
		name string
		msgs [][]byte
		want []Omission
	}{
		{"orphan result", raws(user("go"), result("zz")),
			[]Omission{{Index: 1, CallID: "zz", Rule: sdk.CodeToolResultUnmatched}}},
		{"result for another call", raws(user("go"), calling("c1"), result("c1"), result("zz")),
			[]Omission{{Index: 3, CallID: "zz", Rule: sdk.CodeToolResultUnmatched}}},
		{"second result", raws(user("go"), calling("c1"), result("c1"), result("c1")),
			[]Omission{{Index: 3, CallID: "c1", Rule: sdk.CodeToolResultRepeated}}},
		{"answered far later", raws(user("go"), calling("c1", "c2"), result("c1"), user("more"), result("c2")),
			[]Omission{{Index: 1, CallID: "c2", Rule: sdk.CodeToolCallsUnanswered}, {Index: 4, CallID: "c2", Rule: sdk.CodeToolResultUnmatched}}},
		{"call never answered", raws(user("go"), calling("c1"), user("more")),
			[]Omission{{Index: 1, CallID: "c1", Rule: sdk.CodeToolCallsUnanswered}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Omissions(c.msgs)
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("Omissions: %v, %v; want %v", got, err, c.want)
			}
			for format, body := range renderAll(t, c.msgs) {
				for _, o := range c.want {
					// an omitted call is not sent at all; an omitted result's text is
					// sent only for the result that answers the call
					sent, want := strings.Count(string(body), `"out `+o.CallID+`"`), 0
					switch o.Rule {
					case sdk.CodeToolCallsUnanswered:
						sent = strings.Count(string(body), `"`+o.CallID+`"`)
					case sdk.CodeToolResultRepeated:
						want = 1
					}
					if sent != want {
						t.Errorf("%s: %s was sent: %s", format, o, body)
					}
				}
			}
		})
	}
	if s := (Omission{Index: 3, CallID: "c1", Rule: sdk.CodeToolResultUnmatched}).String(); s != `message 3: tool result for call "c1" left out (TOOL_RESULT_UNMATCHED)` {
		t.Errorf("String: %s", s)
	}
}

// Anthropic: a user message and a developer note right after the results
// join the results' user message, results first; empty and blank messages
// are left out in every format.
func TestMergeAndEmptyContent(t *testing.T) {
	dev := `{"id":"d","role":"developer","content":[{"type":"text","text":"note"}],"source":{"kind":"x"}}`
	blank := `{"id":"b","role":"user","content":[{"type":"text","text":"  "}],"source":{"kind":"prompt"}}`
	empty := `{"id":"e","role":"user","content":[],"source":{"kind":"prompt"}}`
	bodies := renderAll(t, raws(user("go"), empty, calling("c1"), result("c1"), dev, blank, user("next")))
	var a struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(bodies[FormatAnthropic], &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Messages) != 3 {
		t.Fatalf("anthropic: %s", bodies[FormatAnthropic])
	}
	third := a.Messages[2].Content
	if len(third) != 3 || third[0]["type"] != "tool_result" || third[1]["text"] != "note" || third[2]["text"] != "next" {
		t.Errorf("anthropic merge: %s", bodies[FormatAnthropic])
	}
	if strings.Contains(string(bodies[FormatOpenAI]), `"content":""`) {
		t.Errorf("openai: an empty message was sent: %s", bodies[FormatOpenAI])
	}
}

// Reasoning reaches Anthropic as a thinking block only when it is signed
// and the message came from Anthropic: another provider's signature would
// be refused.
func TestThinkingOnlyFromAnthropic(t *testing.T) {
	msg := func(provider string) string {
		return `{"id":"a","role":"assistant","content":[{"type":"reasoning","text":"hm","signature":"sig"},{"type":"text","text":"ok"}],"source":{"kind":"model","provider":"` + provider + `","model":"m"}}`
	}
	for provider, want := range map[string]bool{"anthropic": true, "openai": false} {
		body := renderAll(t, raws(user("go"), msg(provider)))[FormatAnthropic]
		if got := strings.Contains(string(body), `"type":"thinking"`); got != want {
			t.Errorf("%s: thinking %v, want %v: %s", provider, got, want, body)
		}
	}
}

// An image of a type no provider takes becomes a note.
func TestUnsupportedImageIsANote(t *testing.T) {
	img := `{"id":"u","role":"user","content":[{"type":"image","mediaType":"image/tiff","data":"AAAA"}],"source":{"kind":"prompt"}}`
	for format, body := range renderAll(t, raws(img)) {
		if !strings.Contains(string(body), `[image image/tiff]`) {
			t.Errorf("%s: %s", format, body)
		}
	}
}

// AtSeqs names the event of the message an error's index names.
func TestAtSeqs(t *testing.T) {
	_, err := Messages(FormatOpenAI, raws(user("go"), calling("c1")))
	err = AtSeqs(err, []sdk.Seq{4, 9})
	if e := sdk.ErrorOf(err); e == nil || e.Seq == nil || *e.Seq != 9 {
		t.Fatalf("AtSeqs: %v", err)
	}
	if plain := errors.New("x"); AtSeqs(plain, nil) != plain {
		t.Error("AtSeqs changed an error without an index")
	}
}

// CheckRequest refuses each broken rule, naming it and the position.
func TestCheckRequestRefuses(t *testing.T) {
	cases := []struct {
		format, body, want string
	}{
		{FormatOpenAI, `{"messages":[{"role":"tool","tool_call_id":"c","content":"x"}]}`, "messages[0]: the result for c answers no unanswered call"},
		{FormatOpenAI, `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"n","arguments":"{}"}}]},{"role":"user","content":"x"}]}`, "messages[1]: calls c are not answered"},
		{FormatOpenAI, `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"n","arguments":"{}"}}]}]}`, "messages[1]: calls c are not answered"},
		{FormatOpenAI, `{"messages":[{"role":"user","content":""}]}`, "messages[0]: empty content"},
		{FormatOpenAI, `{"messages":[{"role":"assistant"}]}`, "neither content nor tool calls"},
		{FormatOpenAI, `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/tiff;base64,AA"}}]}]}`, "an image_url part"},
		{FormatAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"text","text":"b"}]}]}`, "messages[1]: two user messages in a row"},
		{FormatAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":" "}]}]}`, "non-whitespace"},
		{FormatAnthropic, `{"messages":[{"role":"user","content":[]}]}`, "no content blocks"},
		{FormatAnthropic, `{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"n","input":{}}]},{"role":"user","content":[{"type":"text","text":"x"},{"type":"tool_result","tool_use_id":"c"}]}]}`, "messages[1]: calls c are not answered"},
		{FormatAnthropic, `{"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"x"}]}]}`, "without a signature"},
		{FormatAnthropic, `{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"n","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c"}]},{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"n","input":{}}]}]}`, "call id c is used twice"},
		{FormatAnthropic, `{"system":[{"type":"text","text":""}],"messages":[]}`, "system[0]"},
		{FormatResponses, `{"input":[{"type":"function_call_output","call_id":"c","output":"x"}]}`, "input[0]: the result for c"},
		{FormatResponses, `{"input":[{"type":"function_call","call_id":"c","name":"n","arguments":"{}"},{"type":"message","role":"user","content":"x"}]}`, "input[1]: calls c are not answered"},
		{FormatResponses, `{"input":[{"type":"function_call","call_id":"c","name":"n","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"x"},{"type":"function_call","call_id":"d","name":"n","arguments":"{}"}]}`, "input[3]: calls d are not answered"},
		{FormatResponses, `{"input":[{"type":"message","role":"assistant","content":""}]}`, "without text"},
		{FormatResponses, `{"input":[{"type":"reasoning","summary":[]}]}`, "a reasoning item needs"},
		{FormatOpenAI, `{"messages":[{"role":"system","content":[{"type":"text","text":"x"}]}]}`, "content is not a string"},
		{FormatResponses, `{"input":[{"type":"message","role":"user","content":[{"type":"input_image","image_url":"https://x/y.png"}]}]}`, "an input_image part without a data URL"},
		{FormatResponses, `{"input":[{"type":"message","role":"user","content":[]}]}`, "neither a non-empty string nor"},
		{FormatOpenAI, `[`, "not a JSON object"},
	}
	for _, c := range cases {
		err := CheckRequest(c.format, []byte(c.body))
		if !errors.Is(err, sdk.CodePayloadInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v; want PAYLOAD_INVALID with %q", c.format, c.body, err, c.want)
		}
	}
	if err := CheckRequest(FormatMarkdown, []byte(`{}`)); !errors.Is(err, sdk.CodeUsage) {
		t.Errorf("markdown: %v", err)
	}
}
