package provider

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/seed-e5e476df/logbook/sdk"
)

// randomMessages returns up to 12 derived messages in any order, as a
// lenient or old log may hold them: every role, blank and empty content,
// signed and unsigned reasoning, images of taken and other types, calls
// and results drawn from a few ids, so that orphans, late and repeated
// results, unanswered and repeated calls all occur.
func randomMessages(rng *rand.Rand) [][]byte {
	id := func() string { return fmt.Sprintf("c%d", rng.IntN(6)) }
	text := func() string {
		return []string{`{"type":"text","text":"hello"}`, `{"type":"text","text":" "}`, `{"type":"text","text":""}`}[rng.IntN(3)]
	}
	image := func() string {
		return []string{`{"type":"image","mediaType":"image/png","data":"iVBORw0KGgo="}`, `{"type":"image","mediaType":"image/tiff","data":"AAAA"}`}[rng.IntN(2)]
	}
	var out [][]byte
	for range rng.IntN(13) {
		var m string
		switch rng.IntN(9) {
		case 0:
			m = `{"id":"s","role":"system","content":[` + text() + `],"source":{"kind":"system-prompt"}}`
		case 1:
			m = `{"id":"d","role":"developer","content":[` + text() + `],"source":{"kind":"x"}}`
		case 2, 3:
			blocks := []string{text()}
			if rng.IntN(3) == 0 {
				blocks = append(blocks, image())
			}
			if rng.IntN(4) == 0 {
				blocks = nil
			}
			m = `{"id":"u","role":"user","content":[` + strings.Join(blocks, ",") + `],"source":{"kind":"prompt"}}`
		case 4, 5:
			var blocks []string
			if rng.IntN(2) == 0 {
				blocks = append(blocks, `{"type":"reasoning","text":"hm","signature":"sig"}`)
			}
			if rng.IntN(2) == 0 {
				blocks = append(blocks, text())
			}
			seen := map[string]bool{}
			for range rng.IntN(4) {
				if c := id(); !seen[c] { // ids are unique within a message
					seen[c] = true
					blocks = append(blocks, `{"type":"tool-call","id":"`+c+`","name":"ls","arguments":"{}"}`)
				}
			}
			provider := []string{"anthropic", "openai"}[rng.IntN(2)]
			m = `{"id":"a","role":"assistant","content":[` + strings.Join(blocks, ",") + `],"source":{"kind":"model","provider":"` + provider + `","model":"m"}}`
		default:
			c := id()
			var blocks []string
			if rng.IntN(4) > 0 {
				blocks = append(blocks, text())
			}
			if rng.IntN(4) == 0 {
				blocks = append(blocks, image())
			}
			m = `{"id":"r","role":"tool","toolCallId":"` + c + `","isError":` + fmt.Sprint(rng.IntN(3) == 0) + `,"content":[` + strings.Join(blocks, ",") + `],"source":{"kind":"tool","callId":"` + c + `"}}`
		}
		out = append(out, []byte(m))
	}
	return out
}

// Whatever the messages, a provider format renders a body that
// CheckRequest accepts and the official SDK's params read member for
// member, or refuses with TOOL_CALLS_PENDING (or TOOL_CALL_REPEATED, for a
// message that announces one id twice), as Omissions does: never an
// invalid body. The generator reuses call ids across messages, so the
// renaming of repeated ids is exercised too.
func TestPropertyAnyMessagesRenderValidOrRefuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 2))
	seen := map[sdk.Code]int{}
	for range 500 {
		msgs := randomMessages(rng)
		_, omErr := Omissions(msgs)
		for _, format := range providerFormats {
			body, err := Request(format, RequestParts{Header: []byte(testHeader), Messages: msgs})
			if sdk.CodeOf(err) != sdk.CodeOf(omErr) {
				t.Fatalf("%s: %v, but Omissions: %v", format, err, omErr)
			}
			seen[sdk.CodeOf(err)]++
			switch {
			case err != nil && !errors.Is(err, sdk.CodeToolCallsPending) && !errors.Is(err, sdk.CodeToolCallRepeated):
				t.Fatalf("%s: %v\n%s", format, err, msgs)
			case err != nil:
				continue
			}
			if err := CheckRequest(format, body); err != nil {
				t.Fatalf("%s: %v\n%s", format, err, body)
			}
			switch format {
			case FormatOpenAI:
				sdkKeeps(t, body, &openai.ChatCompletionNewParams{})
			case FormatAnthropic:
				sdkKeeps(t, body, &anthropic.MessageNewParams{})
			default:
				sdkKeeps(t, body, &responses.ResponseNewParams{})
			}
		}
	}
	if seen[""] == 0 || seen[sdk.CodeToolCallsPending] == 0 {
		t.Fatalf("some outcome never occurred: %v", seen)
	}
}

// FuzzRequest renders any message list (one message per line of the
// input) to every provider format: the answer is an error, or a body that
// CheckRequest accepts. Never an invalid body.
func FuzzRequest(f *testing.F) {
	rng := rand.New(rand.NewPCG(27, 3))
	for range 20 {
		f.Add(strings.Join(stringsOf(randomMessages(rng)), "\n"))
	}
	f.Fuzz(func(t *testing.T, lines string) {
		var msgs [][]byte
		for _, l := range strings.Split(lines, "\n") {
			if l != "" {
				msgs = append(msgs, []byte(l))
			}
		}
		for _, format := range providerFormats {
			body, err := Request(format, RequestParts{Header: []byte(testHeader), Messages: msgs})
			if err != nil {
				continue
			}
			if err := CheckRequest(format, body); err != nil {
				t.Fatalf("%s: %v\n%s\nfrom %q", format, err, body, lines)
			}
		}
	})
}

// stringsOf returns msgs as strings.
func stringsOf(msgs [][]byte) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m)
	}
	return out
}
