// Package provider converts between logbook's derived messages and the
// request and response bodies of two model APIs: OpenAI Chat Completions
// and Anthropic Messages.
//
// The input of a request is what a session derives (docs/format.md): the
// derived messages, each one canonical message JSON, and the folded
// request header (an EpochHeader, or nil). OpenAIMessages and
// AnthropicMessages convert the messages alone; OpenAIRequest and
// AnthropicRequest build the whole request body from the header's model,
// limits and tools. ParseOpenAIResponse and ParseAnthropicResponse read a
// provider's answer back into an events.Reply, ready for events.Assistant.
//
// Documents pass through without being re-encoded: tool-call arguments,
// tool schemas and tool inputs are spliced in as the bytes they were
// stored as, so numbers keep their exact literals. What a provider cannot
// express (a tool error flag for OpenAI, reasoning without a signature for
// Anthropic, plugin blocks for both) is mapped as docs/providers.md
// describes.
package provider
