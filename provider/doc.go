// Package provider converts between logbook's derived messages and the
// request and response bodies of model APIs: OpenAI Chat Completions,
// Anthropic Messages and OpenAI Responses.
//
// The input of a request is what a session derives (docs/format.md): the
// derived messages, each one canonical message JSON, and the folded
// request header (an EpochHeader, or nil; HeaderJSON makes one from an
// events.Header). Messages and Request render them in a format by name;
// OpenAIMessages, AnthropicMessages and OpenAIResponsesInput convert the
// messages alone; OpenAIRequest, AnthropicRequest and
// OpenAIResponsesRequest build the whole request body from the header's
// model, limits and tools. ParseOpenAIResponse and ParseAnthropicResponse
// read a provider's answer back into an events.Reply, ready for
// events.Assistant.
//
// Every provider body is one the provider accepts (docs/providers.md,
// "What every provider body obeys"), and CheckRequest checks those rules:
// each tool call is answered by the results right after it, in call
// order; calls still waiting for a result are TOOL_CALLS_PENDING; what
// cannot stand where it is (an orphan result, a call whose result was
// shadowed) is left out and listed by Omissions; no content is empty.
//
// Documents pass through without being re-encoded: tool-call arguments,
// tool schemas and tool inputs are spliced in as the bytes they were
// stored as, so numbers keep their exact literals. What a provider cannot
// express (a tool error flag for OpenAI, reasoning without an Anthropic
// signature, plugin blocks for all) is mapped as docs/providers.md
// describes. The package reaches no engine and links no provider SDK.
package provider
