package compactorsummary

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// The provider and model an extractive summary is recorded under.
const (
	ExtractiveProvider = "logbook"
	ExtractiveModel    = "extractive"
)

// DefaultMaxTokens is the summary budget used when a request gives none
// (the summary request's maxTokens; docs/compaction.md).
const DefaultMaxTokens = 8192

// extractiveMarker opens every extractive summary; a later extractive
// summary recognizes and skips it when it merges an earlier one.
const extractiveMarker = "_Extractive summary: excerpts of the condensed conversation, kept without a model._"

// omittedPrefix opens the note on excerpts left out for the budget.
const omittedPrefix = "_("

// Clipping limits, in code points: the shortest an excerpt is clipped to
// before older excerpts are dropped, and the lengths of a tool result's
// first line and a call's arguments within a tool-call excerpt.
const (
	minExcerpt  = 48
	resultChars = 160
	argsChars   = 160
)

// Extractive is the summarizer of ModeExtractive: no network, no model,
// deterministic (the same request gives a byte-identical reply). From the
// region's derived messages it keeps, as one-line excerpts in
// conversation order:
//
//   - every user request (text; images and plugin blocks as notes);
//   - every final assistant text (of an assistant message without tool
//     calls: the answers, not the narration between calls);
//   - every tool call: its name, its outcome ("ok", "error" or "no result
//     in this span"), the first line of its result and its arguments, and
//     for a failed call an entry under errors;
//   - the lines of an earlier summary held by a compaction checkpoint in
//     the region, under the sections they had, so repeated compactions
//     merge instead of nesting.
//
// The summary is Markdown: a marker line, then one "## " section per kind.
// The section titles are the instruction's own "## " headings where a
// keyword matches (goals/requests; current work/state/decisions;
// files/artifacts/tools; errors; other context), and fixed titles
// otherwise. Its estimate q(cp(text)) (docs/compaction.md) stays within
// MaxTokens (DefaultMaxTokens when ≤ 0): excerpts are first clipped to a
// common length, then the oldest are left out (with a note saying how
// many), and only a budget too small for the marker itself cuts the text.
// The zero value is ready; it has no state.
type Extractive struct{}

// Summarize implements sdk.Summarizer. Errors: COMPACTION_CANCELLED when
// ctx has ended; PAYLOAD_INVALID (with the message's index) for a message
// that is not a derived message.
func (Extractive) Summarize(ctx context.Context, r sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
	if err := ctx.Err(); err != nil {
		return sdk.SummarizeReply{}, cancelled(err)
	}
	msgs := make([]message, 0, len(r.Messages))
	for i, raw := range r.Messages {
		m, err := parseMessage(raw, i)
		if err != nil {
			return sdk.SummarizeReply{}, err
		}
		msgs = append(msgs, m)
	}
	maxTokens := r.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	text := extract(msgs, headings(r.Instruction), min(maxTokens, sdk.MaxSeq)*4)
	block := append([]byte(`{"type":"text","text":`), jsonv.AppendString(nil, text)...)
	return sdk.SummarizeReply{
		Summary:  [][]byte{append(block, '}')},
		Provider: ExtractiveProvider,
		Model:    ExtractiveModel,
	}, nil
}

// category is a kind of excerpt.
type category int

const (
	catRequests category = iota
	catAnswers
	catTools
	catErrors
	catEarlier
	numCategories
)

// defaults returns the category's fixed title and the keywords, in order
// of preference, that pick an instruction heading for it.
func (c category) defaults() (title string, keywords []string) {
	switch c {
	case catRequests:
		return "User requests", []string{"goal", "request"}
	case catAnswers:
		return "Assistant's final answers", []string{"current work", "state", "progress", "decision"}
	case catTools:
		return "Tool calls and outcomes", []string{"file", "artifact", "tool"}
	case catErrors:
		return "Errors", []string{"error"}
	default:
		return "Earlier summary", []string{"other", "context"}
	}
}

// titles picks each category's section title among the headings.
func titles(headings []string) [numCategories]string {
	var out [numCategories]string
	for c := range numCategories {
		title, keywords := c.defaults()
		out[c] = title
	pick:
		for _, kw := range keywords {
			for _, h := range headings {
				if strings.Contains(strings.ToLower(h), kw) {
					out[c] = h
					break pick
				}
			}
		}
	}
	return out
}

// headings returns the titles of the Markdown headings in text, in order.
func headings(text string) []string {
	var out []string
	for line := range strings.Lines(text) {
		if t, ok := headingTitle(strings.TrimSpace(line)); ok {
			out = append(out, t)
		}
	}
	return out
}

// headingTitle returns the title of an ATX heading line ("## Title").
func headingTitle(line string) (string, bool) {
	rest := strings.TrimLeft(line, "#")
	level := len(line) - len(rest)
	if level == 0 || level > 6 || !strings.HasPrefix(rest, " ") {
		return "", false
	}
	t := strings.TrimSpace(rest)
	return t, t != ""
}

// excerpt is one line of the summary under a section title.
type excerpt struct {
	title string
	text  string
}

// extract builds the summary of msgs within limit code points.
func extract(msgs []message, heads []string, limit int64) string {
	t := titles(heads)
	results := map[string]message{}
	for _, m := range msgs {
		if _, seen := results[m.toolCallID]; m.role == "tool" && !seen {
			results[m.toolCallID] = m
		}
	}
	var items []excerpt
	for _, m := range msgs {
		switch m.role {
		case "user":
			if m.sourceKind == "compact-checkpoint" {
				items = append(items, earlier(m.visibleText("\n\n"), t[catEarlier])...)
			} else if text := oneLine(m.visibleText(" ")); text != "" {
				items = append(items, excerpt{t[catRequests], text})
			}
		case "assistant":
			calls := m.toolCalls()
			if len(calls) == 0 {
				if text := oneLine(m.visibleText(" ")); text != "" {
					items = append(items, excerpt{t[catAnswers], text})
				}
			}
			for _, call := range calls {
				items = append(items, callExcerpts(call, results, t)...)
			}
		}
	}
	return fit(items, sectionOrder(items, heads), limit)
}

// callExcerpts describes one tool call and, when it failed, its error.
func callExcerpts(call block, results map[string]message, t [numCategories]string) []excerpt {
	res, ok := results[call.id]
	outcome, first := "no result in this span", ""
	if ok {
		outcome = "ok"
		if res.isError {
			outcome = "error"
		}
		first = firstLine(res.visibleText("\n"))
	}
	line := "`" + call.name + "` → " + outcome
	if first != "" {
		line += ": " + clip(first, resultChars)
	}
	if args := oneLine(call.args); args != "" {
		line += " · args " + clip(args, argsChars)
	}
	out := []excerpt{{t[catTools], line}}
	if ok && res.isError {
		if first == "" {
			first = "(no output)"
		}
		out = append(out, excerpt{t[catErrors], "`" + call.name + "`: " + clip(first, resultChars)})
	}
	return out
}

// earlier returns the lines of the summary inside a checkpoint's text, each
// under the heading it appeared under (title before the first heading).
func earlier(text, title string) []excerpt {
	if i := strings.Index(text, "<conversation-summary>\n"); i >= 0 {
		text = text[i+len("<conversation-summary>\n"):]
		if j := strings.LastIndex(text, "\n</conversation-summary>"); j >= 0 {
			text = text[:j]
		}
	}
	var out []excerpt
	for line := range strings.Lines(text) {
		l := strings.TrimSpace(line)
		if h, ok := headingTitle(l); ok {
			title = h
			continue
		}
		if l == extractiveMarker || strings.HasPrefix(l, omittedPrefix) {
			continue
		}
		l = oneLine(trimListMarker(l))
		if l != "" && !strings.EqualFold(l, "None.") {
			out = append(out, excerpt{title, l})
		}
	}
	return out
}

// trimListMarker removes a Markdown list marker ("- ", "* ", "+ ", "1. ").
func trimListMarker(l string) string {
	for _, p := range []string{"- ", "* ", "+ "} {
		if strings.HasPrefix(l, p) {
			return l[len(p):]
		}
	}
	digits := len(l) - len(strings.TrimLeft(l, "0123456789"))
	if digits > 0 && strings.HasPrefix(l[digits:], ". ") {
		return l[digits+2:]
	}
	return l
}

// sectionOrder is the order of the sections: the instruction's headings,
// then the other titles in the order they first appear.
func sectionOrder(items []excerpt, heads []string) []string {
	order := append([]string(nil), heads...)
	for _, it := range items {
		if !slices.Contains(order, it.title) {
			order = append(order, it.title)
		}
	}
	return order
}

// fit renders items within limit code points: unclipped when they fit;
// else clipped to the longest common length that fits, leaving out the
// fewest oldest excerpts needed for minExcerpt to fit; else (a limit too
// small for the marker and the note) that text cut to the limit.
func fit(items []excerpt, order []string, limit int64) string {
	fits := func(skip, n int) bool { return int64(utf8.RuneCountInString(render(items, order, skip, n))) <= limit }
	longest := 0
	for _, it := range items {
		longest = max(longest, utf8.RuneCountInString(it.text))
	}
	if fits(0, longest) {
		return render(items, order, 0, longest)
	}
	skip := 0
	if !fits(0, minExcerpt) {
		k := sort.Search(len(items), func(i int) bool { return fits(i+1, minExcerpt) })
		if k == len(items) {
			return clip(render(items, order, len(items), minExcerpt), int(limit))
		}
		skip = k + 1
	}
	n := minExcerpt
	if longest > minExcerpt {
		n += sort.Search(longest-minExcerpt+1, func(i int) bool { return !fits(skip, minExcerpt+i) }) - 1
	}
	return render(items, order, skip, n)
}

// render writes the summary: the marker, a note on the skip oldest
// excerpts left out, then each section of order that has excerpts, each
// excerpt clipped to n code points.
func render(items []excerpt, order []string, skip, n int) string {
	var b strings.Builder
	b.WriteString(extractiveMarker)
	if skip > 0 {
		fmt.Fprintf(&b, "\n\n%s%d older excerpts were left out to fit the token budget.)_", omittedPrefix, skip)
	}
	kept := items[skip:]
	if len(kept) == 0 && skip == 0 {
		b.WriteString("\n\n" + omittedPrefix + "The condensed messages held no user request, final answer or tool call.)_")
	}
	for _, title := range order {
		wrote := false
		for _, it := range kept {
			if it.title != title {
				continue
			}
			if !wrote {
				b.WriteString("\n\n## " + title)
				wrote = true
			}
			b.WriteString("\n- " + clip(it.text, n))
		}
	}
	return b.String()
}

// oneLine collapses every run of white space in s to one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// firstLine returns the first line of s that is not blank, collapsed.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if l := oneLine(line); l != "" {
			return l
		}
	}
	return ""
}

// clip shortens s to at most n code points, marking a cut with "…".
func clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for off := range s {
		if i == n-1 {
			return s[:off] + "…"
		}
		i++
	}
	return s
}
