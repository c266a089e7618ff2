package main

import (
	"fmt"
	"strings"

	"github.com/seed-e5e476df/logbook/provider"
	"github.com/seed-e5e476df/logbook/runtime/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// The --format values of `logbook messages` and `logbook request`.
var (
	messageFormats = []string{"logbook", "openai", "anthropic", "markdown"}
	requestFormats = []string{"logbook", "openai", "anthropic"}
)

// checkFormat is USAGE naming the allowed values when format is not one.
func checkFormat(cmd, format string, allowed []string) error {
	for _, f := range allowed {
		if f == format {
			return nil
		}
	}
	return sdk.Errorf(sdk.CodeUsage, cmd, "--format %q is not one of %s", format, strings.Join(allowed, ", "))
}

// messageJSON returns the canonical JSON of each derived message.
func messageJSON(ml session.MessageList) [][]byte {
	out := make([][]byte, 0, ml.Len())
	for _, m := range ml.All() {
		out = append(out, m.JSON())
	}
	return out
}

// formatMessages renders the derived messages in format (checked).
func formatMessages(ml session.MessageList, format string) ([]byte, error) {
	switch format {
	case "openai":
		return provider.OpenAIMessages(messageJSON(ml))
	case "anthropic":
		_, msgs, err := provider.AnthropicMessages(messageJSON(ml))
		return msgs, err
	case "markdown":
		return markdown(ml), nil
	}
	return ml.AppendJSON(nil), nil
}

// formatRequest renders the request right after the view's last event in
// format (checked).
func formatRequest(v *session.Session, format string) ([]byte, error) {
	if format == "logbook" {
		return v.AppendRequestJSON(nil)
	}
	ml, err := v.Messages()
	if err != nil {
		return nil, err
	}
	header := v.AppendRequestHeaderJSON(nil)
	if format == "openai" {
		return provider.OpenAIRequest(header, messageJSON(ml))
	}
	return provider.AnthropicRequest(header, messageJSON(ml))
}

// markdown renders the messages for a reader: a heading per message with
// its role (and the call a tool result answers), text as written,
// reasoning quoted, tool calls with their arguments in a fenced block, and
// other blocks as a bracketed note. The output has no final newline
// (writeLine adds one).
func markdown(ml session.MessageList) []byte {
	var b strings.Builder
	for i, m := range ml.All() {
		v := m.View()
		if i > 0 {
			b.WriteString("\n\n")
		}
		role, _ := v.Get("role").Str()
		fmt.Fprintf(&b, "## %s", role)
		if call, ok := v.Get("toolCallId").Str(); ok {
			fmt.Fprintf(&b, " (call %s)", call)
		}
		if isErr, _ := v.Get("isError").Bool(); isErr {
			b.WriteString(" — error")
		}
		for _, bl := range v.Get("content").Elements() {
			b.WriteString("\n\n")
			markdownBlock(&b, bl)
		}
	}
	return []byte(b.String())
}

// markdownBlock renders one content block.
func markdownBlock(b *strings.Builder, bl jsonv.Value) {
	typ, _ := bl.Get("type").Str()
	text, _ := bl.Get("text").Str()
	switch typ {
	case "text":
		b.WriteString(text)
	case "reasoning":
		b.WriteString("> " + strings.ReplaceAll(text, "\n", "\n> "))
	case "tool-call":
		name, _ := bl.Get("name").Str()
		id, _ := bl.Get("id").Str()
		args, _ := bl.Get("arguments").Str()
		fmt.Fprintf(b, "**→ %s** (call %s)\n\n```json\n%s\n```", name, id, args)
	case "image":
		media, _ := bl.Get("mediaType").Str()
		fmt.Fprintf(b, "[image %s]", media)
	case "tool-addition", "tool-removal":
		name, _ := bl.Get("toolName").Str()
		fmt.Fprintf(b, "[%s %s]", typ, name)
	default:
		fmt.Fprintf(b, "[%s]", typ)
	}
}
