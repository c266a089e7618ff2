package compaction

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

func anaParse(t testing.TB, s string) jsonv.Value {
	t.Helper()
	doc, err := jsonv.Parse([]byte(s), jsonv.Options{})
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return doc.Root()
}

// TestEstimateBlockRules checks each row of the docs/compaction.md table.
func TestEstimateBlockRules(t *testing.T) {
	cases := []struct {
		name  string
		block string
		want  int64
	}{
		{"text: q(cp)+4", `{"type":"text","text":"abcd"}`, 1 + 4},
		{"text: ceil", `{"type":"text","text":"abcde"}`, 2 + 4},
		{"text: empty", `{"type":"text","text":""}`, 0 + 4},
		{"text: code points, not bytes", `{"type":"text","text":"héllo wörld 日本🙂"}`, 4 + 4}, // 15 cp
		{"text: escapes count once", `{"type":"text","text":"a\nb\"c\\d\u0001"}`, 2 + 4},    // 8 cp
		{"text: escaped input is decoded", `{"type":"text","text":"\u0061\u00e9\ud83d\ude42"}`, 1 + 4},
		{"reasoning: signature ignored", `{"type":"reasoning","text":"thinking!","signature":"` + strings.Repeat("s", 400) + `"}`, 3 + 4},
		{"tool-call: name and arguments", `{"type":"tool-call","id":"call-1","name":"read","arguments":"{\"path\":\"a.go\"}"}`, 1 + 4 + 4}, // 4 cp, 15 cp
		{"tool-call: empty arguments", `{"type":"tool-call","id":"x","name":"grep","arguments":""}`, 1 + 0 + 4},
		{"image: canonical JSON", `{"type":"image","mediaType":"image/png","data":"AAAA"}`, 4 + (54+3)/4},
		{"image: canonical, not as written", `{ "type" : "image", "mediaType":"image/png", "data":"AAAA" }`, 4 + (54+3)/4},
		{"plugin block", `{"type":"plugin:x","v":[1,2.50,"é"]}`, 4 + (36+3)/4},
		{"tool-addition", `{"type":"tool-addition","toolName":"search"}`, 4 + (44+3)/4},
		{"ill-typed text falls back to any other block", `{"type":"text","text":5}`, 4 + (24+3)/4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var e estimator
			if got := e.block(anaParse(t, c.block)); got != c.want {
				canon := anaParse(t, c.block).Bytes()
				t.Fatalf("estimate(%s) = %d, want %d (canonical %s, %d cp)", c.block, got, c.want, canon, utf8.RuneCount(canon))
			}
		})
	}
}

func TestEstimateMessageSumsBlocksPlusFour(t *testing.T) {
	msg := `{"id":"a1","role":"assistant","content":[{"type":"text","text":"abcd"},{"type":"tool-call","id":"c","name":"read","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}}`
	if got := EstimateMessage(anaParse(t, msg)); got != (1+4)+(1+1+4)+4 {
		t.Fatalf("EstimateMessage = %d", got)
	}
	empty := `{"id":"a1","role":"assistant","content":[],"source":{"kind":"model","provider":"p","model":"m"}}`
	if got := EstimateMessage(anaParse(t, empty)); got != 4 {
		t.Fatalf("empty message = %d, want 4", got)
	}
	n, err := EstimateMessageJSON([]byte(msg))
	if err != nil || n != 15 {
		t.Fatalf("EstimateMessageJSON = %d, %v", n, err)
	}
	_, err = EstimateMessageJSON([]byte(`{"content":[`))
	anaRequireCode(t, err, sdk.CodeJSONSyntax)
	_, err = EstimateMessageJSON([]byte(`{"a":1,"a":2}`))
	anaRequireCode(t, err, sdk.CodeJSONDuplicateKey)
}

func TestEstimateTools(t *testing.T) {
	if got := EstimateTools(jsonv.Value{}); got != 0 {
		t.Fatalf("absent tools = %d", got)
	}
	if got := EstimateTools(anaParse(t, `[]`)); got != 0 {
		t.Fatalf("empty tools = %d", got)
	}
	tools := `[{"name":"read","description":"Read a file","parameters":{"type":"object"}}]`
	if got, want := EstimateTools(anaParse(t, tools)), int64((utf8.RuneCountInString(tools)+3)/4+4); got != want {
		t.Fatalf("EstimateTools = %d, want %d", got, want)
	}
}

// TestEstimateStringCodePointsMatchDecoding checks the escape-aware count
// against decoding every string of a corpus with encoding/json.
func TestEstimateStringCodePointsMatchDecoding(t *testing.T) {
	r := &anaRand{x: 7}
	alphabet := []rune{'a', ' ', '"', '\\', '/', '\n', '\t', '\b', '\f', '\r', 0, 1, 0x1f, 0x7f, 'é', '日', 0x2028, 0x1F642, 0xFFFD}
	for range 2000 {
		var b strings.Builder
		for range r.intn(40) {
			b.WriteRune(alphabet[r.intn(len(alphabet))])
		}
		raw, _ := json.Marshal(b.String())
		var e estimator
		if got, want := e.strCodePoints(anaParse(t, string(raw))), int64(utf8.RuneCountInString(b.String())); got != want {
			t.Fatalf("cp(%q) = %d, want %d", b.String(), got, want)
		}
	}
}

// TestEstimatePruneShadowedTokenCountIsTheOriginals: the
// shadowedTokenCount recorded by a prune of a 10 000-code-point tool result
// is the estimate of the original message, one text block of 10 000 code
// points: q(10000) + 4 + 4.
func TestEstimatePruneShadowedTokenCountIsTheOriginals(t *testing.T) {
	msg := anaToolMsg("r1", "c1", strings.Repeat("é", 10_000))
	n, err := EstimateMessageJSON([]byte(msg))
	if err != nil || n != 2500+4+4 {
		t.Fatalf("estimate = %d, %v; want 2508", n, err)
	}
}
