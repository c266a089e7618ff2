package provider

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// The formats a session's messages and requests are printed in, by
// `logbook messages|request --format` and the server's messages and
// request routes (?format=).
const (
	FormatLogbook   = "logbook"          // as derived: messages as stored, requests as {header, context, messages}
	FormatOpenAI    = "openai"           // OpenAI Chat Completions
	FormatAnthropic = "anthropic"        // Anthropic Messages
	FormatResponses = "openai-responses" // OpenAI Responses: input items
	FormatMarkdown  = "markdown"         // messages for a person to read
)

// MessageFormats returns the formats Messages renders, in the order a
// usage error lists them. The slice is fresh.
func MessageFormats() []string {
	return []string{FormatLogbook, FormatOpenAI, FormatAnthropic, FormatResponses, FormatMarkdown}
}

// RequestFormats returns the formats Request renders. The slice
// is fresh.
func RequestFormats() []string {
	return []string{FormatLogbook, FormatOpenAI, FormatAnthropic, FormatResponses}
}

// CheckFormat returns nil when format is one of allowed, else a USAGE
// error of op naming the parameter (name, e.g. "--format") and the allowed
// values.
func CheckFormat(op, name, format string, allowed []string) error {
	if slices.Contains(allowed, format) {
		return nil
	}
	return sdk.Errorf(sdk.CodeUsage, op, "%s %q is not one of %s", name, format, strings.Join(allowed, ", "))
}

// Messages renders derived messages in one of MessageFormats: logbook is
// the JSON array of the messages as they are, openai and anthropic the
// provider's messages array (OpenAIMessages; AnthropicMessages without
// the system prompt, which is not a message there), openai-responses the
// Responses input items (OpenAIResponsesInput), markdown the text of
// Markdown. Another format is USAGE. The provider formats pair tool calls
// with their results (Omissions lists what they leave out) and refuse
// calls still waiting for a result with TOOL_CALLS_PENDING; logbook and
// markdown render any messages.
func Messages(format string, msgs [][]byte) ([]byte, error) {
	switch format {
	case FormatLogbook:
		b := []byte{'['}
		for i, m := range msgs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, m...)
		}
		return append(b, ']'), nil
	case FormatOpenAI:
		return OpenAIMessages(msgs)
	case FormatAnthropic:
		_, out, err := AnthropicMessages(msgs)
		return out, err
	case FormatResponses:
		return OpenAIResponsesInput(msgs)
	case FormatMarkdown:
		return Markdown(msgs)
	}
	return nil, CheckFormat(op, "format", format, MessageFormats())
}

// RequestParts is the request a model would be sent right after some event
// of a session, as the session's canonical JSON: what Request renders. The
// slices are read, never modified or kept.
type RequestParts struct {
	// Header is the folded request header (an EpochHeader); nil or "null"
	// when the log has none.
	Header []byte
	// Context is the request context; nil or "null" when the log has none.
	Context []byte
	// Messages are the derived messages, in order.
	Messages [][]byte
}

// Request renders r in one of RequestFormats: logbook is the session's
// own {"header", "context", "messages"} (each member spliced in as given,
// a missing header or context as null), openai, anthropic and
// openai-responses the provider's body (OpenAIRequest, AnthropicRequest,
// OpenAIResponsesRequest) from the header and the messages, which
// CheckRequest accepts. Another format is USAGE; a provider format
// without a header is REQUEST_HEADER_MISSING.
func Request(format string, r RequestParts) ([]byte, error) {
	if err := CheckFormat(op, "format", format, RequestFormats()); err != nil {
		return nil, err
	}
	header := orNull(r.Header)
	switch format {
	case FormatOpenAI:
		return OpenAIRequest(header, r.Messages)
	case FormatAnthropic:
		return AnthropicRequest(header, r.Messages)
	case FormatResponses:
		return OpenAIResponsesRequest(header, r.Messages)
	}
	msgs, err := Messages(FormatLogbook, r.Messages)
	if err != nil {
		return nil, err
	}
	b := append([]byte(`{"header":`), header...)
	b = append(append(b, `,"context":`...), orNull(r.Context)...)
	b = append(append(b, `,"messages":`...), msgs...)
	return append(b, '}'), nil
}

// orNull returns doc, or the JSON null when doc is empty.
func orNull(doc []byte) []byte {
	if len(doc) == 0 {
		return []byte("null")
	}
	return doc
}

// Markdown renders derived messages for a reader: a heading per message
// with its role (and the call a tool result answers, and "— error" for a
// failed one), text as written, reasoning quoted, tool calls with their
// arguments in a fenced block, and other blocks as a bracketed note. The
// output has no final newline. A message that is not JSON is
// PAYLOAD_INVALID with its index.
func Markdown(msgs [][]byte) ([]byte, error) {
	var b strings.Builder
	for i, raw := range msgs {
		doc, err := jsonv.Parse(raw, jsonv.Options{})
		if err != nil {
			return nil, sdk.Wrapf(sdk.CodePayloadInvalid, op, err, "message %d is not valid JSON", i).WithIndex(i)
		}
		v := doc.Root()
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
	return []byte(b.String()), nil
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
