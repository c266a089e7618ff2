package compactorsummary

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/seed-e5e476df/logbook/provider"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// summarizeOpenAI asks the chat-completions API of c for the summary.
func summarizeOpenAI(ctx context.Context, chat openai.ChatCompletionService, c Config, r sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
	if err := ctx.Err(); err != nil {
		return sdk.SummarizeReply{}, cancelled(err)
	}
	params, err := chatRequest(c, r)
	if err != nil {
		return sdk.SummarizeReply{}, err
	}
	// The SDK retries inside New; the middleware counts the attempts for
	// the error message. They run one after another on this goroutine.
	attempts := 0
	count := option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		attempts++
		return next(req)
	})
	resp, err := chat.New(ctx, params, count)
	if err != nil {
		return sdk.SummarizeReply{}, callError(ctx, c, params.Model, attempts, err)
	}
	return openAIReply(c, params.Model, resp)
}

// chatRequest builds the chat-completions request of docs/compaction.md: the
// system prompt, the region's messages, the instruction as the final user
// message, the header's tools with tool_choice "none", and max_tokens.
func chatRequest(c Config, r sdk.SummarizeRequest) (openai.ChatCompletionNewParams, error) {
	model := c.Model
	if model == "" {
		model = r.Model
	}
	if model == "" {
		return openai.ChatCompletionNewParams{}, summaryFailed(nil,
			"no model to ask: set model in the %s config block, or a summarization model in the compaction profile", Name)
	}
	var msgs []openai.ChatCompletionMessageParamUnion
	if len(r.System) > 0 {
		sys, err := chatMessages([][]byte{r.System})
		if err != nil {
			return openai.ChatCompletionNewParams{}, err
		}
		msgs = append(msgs, sys...)
	}
	region, err := chatMessages(r.Messages)
	if err != nil {
		return openai.ChatCompletionNewParams{}, err
	}
	msgs = append(msgs, region...)
	if r.Instruction != "" {
		msgs = append(msgs, openai.UserMessage(r.Instruction))
	}
	var tools []openai.ChatCompletionToolUnionParam
	if len(bytes.TrimSpace(r.Tools)) > 0 {
		raw, err := provider.OpenAITools(r.Tools)
		if err != nil {
			return openai.ChatCompletionNewParams{}, err
		}
		// Each tool goes out as the provider package wrote it, so its
		// schema is sent byte for byte.
		var each []json.RawMessage
		if err := json.Unmarshal(raw, &each); err != nil {
			return openai.ChatCompletionNewParams{}, sdk.Wrapf(sdk.CodePayloadInvalid, op, err, "the request's tools have no chat-completions form")
		}
		for _, t := range each {
			tool := param.Override[openai.ChatCompletionFunctionToolParam](t)
			tools = append(tools, openai.ChatCompletionToolUnionParam{OfFunction: &tool})
		}
	}
	p := openai.ChatCompletionNewParams{Model: model, Messages: msgs}
	if len(tools) > 0 {
		// The provider sees the schemas the calls in the region refer to,
		// but may not call any of them.
		p.Tools = tools
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(string(openai.ChatCompletionToolChoiceOptionAutoNone))}
	}
	if r.MaxTokens > 0 {
		p.MaxTokens = openai.Int(r.MaxTokens)
	}
	return p, nil
}

// chatMessages converts derived messages to chat messages with the
// provider package (docs/providers.md: roles kept, images as image parts,
// reasoning dropped, a tool error flag as a text marker).
func chatMessages(raws [][]byte) ([]openai.ChatCompletionMessageParamUnion, error) {
	raw, err := provider.OpenAIMessages(raws)
	if err != nil {
		return nil, err
	}
	var out []openai.ChatCompletionMessageParamUnion
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, sdk.Wrapf(sdk.CodePayloadInvalid, op, err, "the messages have no chat-completions form")
	}
	return out, nil
}

// openAIReply turns a completion into the reply: its text as one text
// block, the provider and model, the usage and the raw answer.
func openAIReply(c Config, model string, resp *openai.ChatCompletion) (sdk.SummarizeReply, error) {
	if len(resp.Choices) == 0 {
		return sdk.SummarizeReply{}, summaryFailed(nil, "%s answered without a choice (model %q)", c.BaseURL, model)
	}
	ch := resp.Choices[0]
	if strings.TrimSpace(ch.Message.Content) == "" {
		return sdk.SummarizeReply{}, summaryFailed(nil,
			"model %q answered without summary text (finish_reason %q, %d tool calls, refusal %q)",
			model, ch.FinishReason, len(ch.Message.ToolCalls), ch.Message.Refusal)
	}
	block := append([]byte(`{"type":"text","text":`), jsonv.AppendString(nil, ch.Message.Content)...)
	block = append(block, '}')
	reply := sdk.SummarizeReply{
		Summary:  [][]byte{block},
		Provider: c.Provider,
		Model:    resp.Model,
		Usage:    usageJSON(resp.Usage),
	}
	if reply.Model == "" {
		reply.Model = model
	}
	// The raw answer, in canonical JSON, when it is JSON logbook accepts
	// (docs/format.md); it is optional, so an answer that is not is left out.
	if doc, err := jsonv.Parse([]byte(resp.RawJSON()), jsonv.Options{}); err == nil {
		reply.RawOutput = doc.Root().Bytes()
	}
	return reply, nil
}

// usageJSON renders the completion's usage as a TokenUsage (docs/format.md):
// input excludes the prompt tokens read from the provider's cache, which
// are cacheRead (OpenAI's prompt_tokens_details.cached_tokens, or
// DeepSeek's prompt_cache_hit_tokens). nil when the answer has no usage.
func usageJSON(u openai.CompletionUsage) []byte {
	if !u.JSON.PromptTokens.Valid() && !u.JSON.CompletionTokens.Valid() {
		return nil
	}
	cached := u.PromptTokensDetails.CachedTokens
	if f, ok := u.JSON.ExtraFields["prompt_cache_hit_tokens"]; ok && cached == 0 {
		cached, _ = strconv.ParseInt(f.Raw(), 10, 64)
	}
	cached = tokenCount(cached)
	input := tokenCount(u.PromptTokens - cached)
	out := fmt.Appendf(nil, `{"input":%d,"output":%d`, input, tokenCount(u.CompletionTokens))
	if cached > 0 {
		out = fmt.Appendf(out, `,"cacheRead":%d`, cached)
	}
	return append(out, '}')
}

// tokenCount clamps n to a non-negative safe integer.
func tokenCount(n int64) int64 {
	return max(0, min(n, sdk.MaxSeq))
}

// callError explains a failed chat-completions call.
func callError(ctx context.Context, c Config, model string, attempts int, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cancelled(cerr)
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		code := apiErr.StatusCode
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(code)
		}
		if code == http.StatusRequestTimeout || code == http.StatusConflict || code == http.StatusTooManyRequests || code >= 500 {
			return summaryFailed(err, "%s still answered HTTP %d after %d attempt(s) (max_retries = %d): %s",
				c.BaseURL, code, attempts, c.MaxRetries, msg)
		}
		return summaryFailed(err, "%s refused the summary request with HTTP %d: %s; not retried: check model %q, base_url and api_key",
			c.BaseURL, code, msg, model)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return summaryFailed(err, "%s gave no complete answer within timeout = %v (attempt %d); raise timeout in the %s config block",
			c.BaseURL, c.Timeout, attempts, Name)
	}
	return summaryFailed(err, "calling %s failed after %d attempt(s)", c.BaseURL, attempts)
}

// summaryFailed is a COMPACTION_SUMMARY_FAILED error wrapping cause (nil:
// none).
func summaryFailed(cause error, format string, args ...any) error {
	e := sdk.Errorf(sdk.CodeCompactionSummaryFailed, op, format, args...)
	e.Err = cause
	return e
}
