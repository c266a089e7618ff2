package compaction

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Spiller applies the spill policy of docs/compaction.md to finished tool results.
// Safe for concurrent use.
type Spiller struct {
	max    int64
	exempt map[string]bool
	store  *LocalStore // nil when disabled
	log    hclog.Logger
}

// NewSpiller validates cfg and returns its Spiller; log receives the
// warnings of failed spills (nil means none are logged). MaxInlineBytes 0
// disables spilling. A nil ExemptTools means the default ["read"] (re-reading
// a file the model asked for by range would only spill it again); an empty
// non-nil list exempts none. A relative Root is made absolute against the
// working directory (the config loader has already resolved it against
// DataDir). A negative MaxInlineBytes, or spilling without a Root →
// CONFIG_INVALID.
func NewSpiller(cfg config.Spill, log hclog.Logger) (*Spiller, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if cfg.MaxInlineBytes < 0 {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "spill", "maxInlineBytes must be ≥ 0 (0 disables spilling); got %d", cfg.MaxInlineBytes)
	}
	p := &Spiller{max: cfg.MaxInlineBytes, exempt: map[string]bool{}, log: log}
	if p.max == 0 {
		return p, nil
	}
	store, err := NewLocalStore(cfg.Root)
	if err != nil {
		return nil, err
	}
	p.store = store
	exempt := cfg.ExemptTools
	if exempt == nil {
		exempt = []string{"read"}
	}
	for _, t := range exempt {
		p.exempt[t] = true
	}
	return p, nil
}

// ToolOutput is a finished top-level tool result before its tool/result
// event is appended.
type ToolOutput struct {
	SessionID string
	ToolName  string
	CallID    string
	// Content is the result's content blocks, a JSON array.
	Content json.RawMessage
	// Substituted marks a value a policy put in place of the tool's output
	// (a denial, a hook's answer); it is never spilled.
	Substituted bool
	// SuggestedName is a file name for the artifact; see LocalStore.Save.
	SuggestedName string
}

// SpillResult is the content to record for a tool result.
type SpillResult struct {
	// Content is the content blocks to append: one text block with the head,
	// the notice and the tail when Spilled, else the original Content.
	Content json.RawMessage
	// Spilled reports whether the output was saved and shortened.
	Spilled bool
	// Artifact is where the whole output was saved; zero unless Spilled.
	Artifact Artifact
}

// Apply runs the spill policy of docs/compaction.md on out:
//
//  1. it keeps the content when spilling is disabled, the tool is exempt, the
//     value is substituted, any block is not a text block, or T (the text
//     blocks joined by "\n") is at most MaxInlineBytes bytes;
//  2. it saves T in the artifact store;
//  3. with the notice N(k) = "(<k> bytes omitted. Full output saved at
//     <locator>. <hint>)", reserve = bytes(N(len(T))) + 4 and budget =
//     max(0, MaxInlineBytes − reserve), it keeps the longest head of at most
//     ceil(budget/2) bytes and the longest tail of at most floor(budget/2)
//     bytes that end and start on UTF-8 boundaries; k is the bytes between;
//  4. the content becomes one text block head + "\n\n" + N(k) + "\n\n" +
//     tail, or N(k) alone when budget is 0 — unless that is longer than
//     MaxInlineBytes, which keeps the original (the saved file stays).
//
// Any failure keeps the original content and logs a warning; a result is
// never marked as an error by spilling.
func (p *Spiller) Apply(ctx context.Context, out ToolOutput) SpillResult {
	keep := SpillResult{Content: out.Content}
	if p.store == nil || p.exempt[out.ToolName] || out.Substituted {
		return keep
	}
	doc, err := jsonv.Parse(out.Content, jsonv.Options{})
	if err != nil {
		p.warn(out, "the tool output is not lossless JSON", err)
		return keep
	}
	blocks := doc.Root()
	if blocks.Kind() != jsonv.Array {
		p.warn(out, "the tool output is not an array of content blocks", nil)
		return keep
	}
	texts := make([]string, 0, blocks.Len())
	for _, b := range blocks.Elements() {
		t, ok := b.Get("text").Str()
		if !b.Get("type").StrEqual("text") || !ok {
			return keep
		}
		texts = append(texts, t)
	}
	whole := strings.Join(texts, "\n")
	if int64(len(whole)) <= p.max {
		return keep
	}
	art, err := p.store.Save(ctx, ArtifactOwner{SessionID: out.SessionID}, ArtifactSource{ToolName: out.ToolName, CallID: out.CallID}, out.SuggestedName, whole)
	if err != nil {
		p.warn(out, "saving the output failed", err)
		return keep
	}
	text := spillText(whole, p.max, art)
	if int64(len(text)) > p.max {
		p.warn(out, "the notice alone exceeds maxInlineBytes "+strconv.FormatInt(p.max, 10)+"; the output saved at "+art.Locator+" is not referenced", nil)
		return keep
	}
	content := append([]byte(`[{"type":"text","text":`), jsonv.AppendString(nil, text)...)
	content = append(content, "}]"...)
	return SpillResult{Content: content, Spilled: true, Artifact: art}
}

// spillText builds the shortened text of steps 3–4 for T = whole.
func spillText(whole string, maxInline int64, art Artifact) string {
	notice := func(k int) string {
		return "(" + strconv.Itoa(k) + " bytes omitted. Full output saved at " + art.Locator + ". " + art.RetrievalHint + ")"
	}
	reserve := int64(len(notice(len(whole)))) + 4
	budget := max(0, maxInline-reserve)
	if budget == 0 {
		return notice(len(whole))
	}
	head := whole[:headCut(whole, int((budget+1)/2))]
	tail := whole[tailCut(whole, int(budget/2)):]
	return head + "\n\n" + notice(len(whole)-len(head)-len(tail)) + "\n\n" + tail
}

// headCut returns the length of the longest prefix of s of at most n bytes
// that ends on a UTF-8 boundary.
func headCut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// tailCut returns the start of the longest suffix of s of at most n bytes
// that starts on a UTF-8 boundary.
func tailCut(s string, n int) int {
	if n >= len(s) {
		return 0
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

func (p *Spiller) warn(out ToolOutput, msg string, err error) {
	args := []any{"session", out.SessionID, "tool", out.ToolName, "call", out.CallID}
	if err != nil {
		args = append(args, "error", err)
	}
	p.log.Warn("spill skipped, keeping the tool output inline: "+msg, args...)
}
