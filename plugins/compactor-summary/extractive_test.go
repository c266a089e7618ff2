package compactorsummary

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
)

// goldenSummary is the extractive summary of conversation() under the
// default instruction's headings.
const goldenSummary = extractiveMarker + `

## Goals and constraints
- Fix the failing test in main_test.go. Keep the public API. [image image/png]

## Files and artifacts
- ` + "`read`" + ` → ok: package main · args {"path":"main_test.go"}
- ` + "`run`" + ` → error: --- FAIL: TestX · args {"cmd":"go test ./..."}
- ` + "`read`" + ` → ok · args {"path":"main.go"}

## Errors and resolutions
- ` + "`run`" + `: --- FAIL: TestX

## Current work
- The test failed because TestX had no assertions; I added one and it passes now.`

// TestExtractiveGolden: the summary of a region with every kind of message
// keeps the user request, the final answer (not the narration between
// calls, nor reasoning), each call's name, outcome, first result line and
// arguments, and the error; under the instruction's headings.
func TestExtractiveGolden(t *testing.T) {
	rep, err := Extractive{}.Summarize(t.Context(), request())
	if err != nil {
		t.Fatal(err)
	}
	if got := summaryText(t, rep); got != goldenSummary {
		t.Fatalf("summary\n%s\n\nwant\n%s", got, goldenSummary)
	}
	if rep.Provider != ExtractiveProvider || rep.Model != ExtractiveModel || rep.Usage != nil || rep.RawOutput != nil {
		t.Fatalf("reply %+v", rep)
	}
}

// TestExtractiveDefaultTitles: without headings in the instruction the
// sections have fixed titles, in the order their first excerpt appears.
func TestExtractiveDefaultTitles(t *testing.T) {
	r := request()
	r.Instruction = "Summarize."
	rep, err := Extractive{}.Summarize(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for line := range strings.Lines(summaryText(t, rep)) {
		if strings.HasPrefix(line, "## ") {
			got = append(got, strings.TrimSpace(line))
		}
	}
	want := []string{"## User requests", "## Tool calls and outcomes", "## Errors", "## Assistant's final answers"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("sections %q; want %q", got, want)
	}
	r.Messages = nil
	rep, err = Extractive{}.Summarize(t.Context(), r)
	if err != nil || !strings.Contains(summaryText(t, rep), "held no user request") {
		t.Fatalf("empty region: %v, %v", rep, err)
	}
}

// longConversation is a region of n steps, each a user request, an
// assistant call with its result and a final answer, with long texts.
func longConversation(n int) [][]byte {
	var out [][]byte
	for i := range n {
		id := fmt.Sprint(i)
		out = append(out,
			userMsg("u"+id, text(fmt.Sprintf("request %d: ", i)+strings.Repeat("please handle ünïcödé 😀 details ", 20))),
			assistantMsg("a"+id, call("c"+id, "grep", fmt.Sprintf(`{"pattern":"item %d","path":"src/"}`, i))),
			toolMsg("c"+id, i%7 == 0, text(fmt.Sprintf("match %d\n", i)+strings.Repeat("more output\n", 50))),
			assistantMsg("f"+id, text(fmt.Sprintf("answer %d: ", i)+strings.Repeat("done with the step. ", 30))),
		)
	}
	return out
}

// TestExtractiveBudget: the summary's estimate q(cp) never exceeds
// MaxTokens; a generous budget keeps everything, a tight one keeps the
// newest excerpts and says how many older ones it left out.
func TestExtractiveBudget(t *testing.T) {
	r := request()
	r.Messages = longConversation(150)
	for _, maxTokens := range []int64{1, 3, 20, 40, 100, 500, 2000, 8192, 1 << 20} {
		t.Run(fmt.Sprint(maxTokens), func(t *testing.T) {
			r.MaxTokens = maxTokens
			rep, err := Extractive{}.Summarize(t.Context(), r)
			if err != nil {
				t.Fatal(err)
			}
			s := summaryText(t, rep)
			cp := int64(utf8.RuneCountInString(s))
			if tokens := (cp + 3) / 4; tokens > maxTokens {
				t.Fatalf("estimate %d tokens (%d code points) > MaxTokens %d", tokens, cp, maxTokens)
			}
			switch {
			case maxTokens == 1<<20:
				if strings.Contains(s, "left out") || strings.Contains(s, "…") || !strings.Contains(s, "request 0: ") || !strings.Contains(s, "answer 149: ") {
					t.Fatal("a budget large enough for everything still clipped or dropped excerpts")
				}
			case maxTokens >= 500:
				dropped := strings.Contains(s, "older excerpts were left out")
				if !strings.Contains(s, "request 149") || !strings.Contains(s, "answer 149") || dropped == strings.Contains(s, "request 0:") {
					t.Fatalf("a tight budget should keep the newest excerpts and drop only the oldest:\n%s", s)
				}
				if cp < maxTokens*4-500 {
					t.Fatalf("only %d of %d code points used", cp, maxTokens*4)
				}
			}
		})
	}
	t.Run("clipping before dropping", func(t *testing.T) {
		r.Messages = longConversation(3)
		r.MaxTokens = 250
		rep, err := Extractive{}.Summarize(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		s := summaryText(t, rep)
		if strings.Contains(s, "left out") || !strings.Contains(s, "…") || !strings.Contains(s, "request 0") {
			t.Fatalf("a budget that fits clipped excerpts should keep them all:\n%s", s)
		}
	})
}

// TestExtractiveDeterministic: the same request gives byte-identical
// replies, from any instance and through the Summarizer.
func TestExtractiveDeterministic(t *testing.T) {
	r := request()
	r.Messages = append(longConversation(40), conversation()...)
	r.MaxTokens = 700
	first, err := Extractive{}.Summarize(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	s := configured(t, []byte(`{"mode":"extractive"}`))
	for i := range 5 {
		var again sdk.SummarizeReply
		if i%2 == 0 {
			again, err = Extractive{}.Summarize(t.Context(), r)
		} else {
			again, err = s.Summarize(t.Context(), r)
		}
		if err != nil {
			t.Fatal(err)
		}
		if string(again.Summary[0]) != string(first.Summary[0]) || again.Model != first.Model || again.Provider != first.Provider {
			t.Fatalf("run %d differs", i)
		}
	}
}

// TestExtractiveMergesEarlierSummary: a checkpoint in the region
// contributes its summary's lines under their own sections, so a second
// compaction does not nest the first one's summary.
func TestExtractiveMergesEarlierSummary(t *testing.T) {
	first, err := Extractive{}.Summarize(t.Context(), request())
	if err != nil {
		t.Fatal(err)
	}
	r := request()
	r.Messages = [][]byte{
		checkpointMsg("cp1", summaryText(t, first)),
		userMsg("u9", text("Now add a benchmark.")),
		assistantMsg("a9", text("Added BenchmarkX.")),
	}
	rep, err := Extractive{}.Summarize(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	want := extractiveMarker + `

## Goals and constraints
- Fix the failing test in main_test.go. Keep the public API. [image image/png]
- Now add a benchmark.

## Files and artifacts
- ` + "`read`" + ` → ok: package main · args {"path":"main_test.go"}
- ` + "`run`" + ` → error: --- FAIL: TestX · args {"cmd":"go test ./..."}
- ` + "`read`" + ` → ok · args {"path":"main.go"}

## Errors and resolutions
- ` + "`run`" + `: --- FAIL: TestX

## Current work
- The test failed because TestX had no assertions; I added one and it passes now.
- Added BenchmarkX.`
	if got := summaryText(t, rep); got != want {
		t.Fatalf("merged summary\n%s\n\nwant\n%s", got, want)
	}

	// An earlier summary written by a model: its lines join the sections
	// they were under; lines before any heading are other context, and
	// "None." entries are dropped.
	model := "Summary of the work.\n\n## Goals and constraints\n1. Ship v2.\n\n## Open tasks\nNone.\n\n## Next step\n* Tag the release."
	r.Messages = [][]byte{checkpointMsg("cp2", model), userMsg("u10", text("Go on."))}
	rep, err = Extractive{}.Summarize(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	want = extractiveMarker + `

## Goals and constraints
- Ship v2.
- Go on.

## Next step
- Tag the release.

## Other context
- Summary of the work.`
	if got := summaryText(t, rep); got != want {
		t.Fatalf("merged model summary\n%s\n\nwant\n%s", got, want)
	}
}

// TestExtractiveErrors: a message that is not a derived message is
// PAYLOAD_INVALID with its index; an ended context is
// COMPACTION_CANCELLED.
func TestExtractiveErrors(t *testing.T) {
	r := request()
	r.Messages = append(r.Messages[:2:2], []byte(`{"role":"user","content":[{"text":"no type"}]}`))
	_, err := Extractive{}.Summarize(t.Context(), r)
	if e := requireCode(t, err, sdk.CodePayloadInvalid, "content block 0"); e.Index == nil || *e.Index != 2 {
		t.Fatalf("error %v; want index 2", e)
	}
	r.Messages = [][]byte{[]byte(`{"content":[]}`)}
	_, err = Extractive{}.Summarize(t.Context(), r)
	requireCode(t, err, sdk.CodePayloadInvalid, "string role")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = Extractive{}.Summarize(ctx, request())
	requireCode(t, err, sdk.CodeCompactionCancelled)
}
