// Package compactorsummary is logbook's bundled summarizer plugin,
// "compactor-summary" (docs/compaction.md): the compaction strategy that writes
// the summary replacing a region of the surface. The logbook binary serves
// it as `logbook plugin compactor-summary` (ServeConfig).
//
// # Modes
//
// ModeOpenAI asks an OpenAI-compatible chat-completions API through the
// official SDK (github.com/openai/openai-go/v3), so it works with OpenAI,
// DeepSeek (base_url "https://api.deepseek.com/v1", provider "deepseek")
// and other compatible servers. The request is:
//
//	model        config model, else the request's model
//	messages     system: the request's system prompt (node 0's text), if any
//	             the region's derived messages, in order, converted by
//	               package provider (OpenAIMessages, docs/providers.md):
//	               system and developer keep their roles; user text and
//	               images (image_url parts); assistant text and tool calls
//	               (reasoning dropped); tool results → tool, with
//	               tool_call_id (an error result prefixed "[tool error] ");
//	               tool changes and plugin blocks → bracketed notes
//	             user: the instruction
//	tools        the folded header's tools as function tools (name,
//	             description, parameters byte for byte; provider.OpenAITools),
//	             when there are any
//	tool_choice  "none", with tools: the schemas are shown, calls forbidden
//	max_tokens   the request's MaxTokens (DeepSeek and most compatible
//	             servers read max_tokens; sampling settings of the folded
//	             header config are not sent)
//
// The reply is one text block with the completion's text, the configured
// provider name, the model the API reports, the usage as a TokenUsage
// (input excludes cached prompt tokens, which are cacheRead) and the raw
// answer in canonical JSON. Each HTTP attempt is bounded by timeout; 408,
// 409, 429, 5xx answers and connection errors are retried up to
// max_retries times with exponential backoff, honouring Retry-After; any
// other 4xx is final. Failures are COMPACTION_SUMMARY_FAILED with the
// status, the provider's message and what to check.
//
// ModeExtractive (Extractive) needs no network and is deterministic: it
// keeps the user requests, the assistant's final texts and each tool
// call's name and outcome within the token budget. The demo and the
// offline tests use it, and it is the default when no API key is
// configured.
//
// # Configuration
//
// The plugin block's config object (Config, ConfigSchema):
//
//	mode             "openai" | "extractive"; default openai with an API key, else extractive
//	provider         default "openai"
//	base_url         default OPENAI_BASE_URL, else https://api.openai.com/v1
//	api_key          default OPENAI_API_KEY
//	model            default the request's model
//	timeout          per HTTP attempt; default "120s"
//	max_retries      default 3
//	max_retry_delay  cap on backoff and Retry-After; default the SDK's
//
// Unknown members are CONFIG_INVALID.
package compactorsummary
