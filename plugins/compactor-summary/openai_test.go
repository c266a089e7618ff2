package compactorsummary

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// fakeAPI is a local OpenAI-compatible chat-completions server. It answers
// the n-th request with answers[n] (the last answer repeats) and records
// every request.
type fakeAPI struct {
	srv     *httptest.Server
	answers []answer

	arrived chan struct{} // a value per request received

	mu       sync.Mutex
	requests []seen
}

// seen is one request as the server received it.
type seen struct {
	at   time.Time
	path string
	auth string
	body []byte
}

// answer writes one response.
type answer func(w http.ResponseWriter, r *http.Request)

func newFakeAPI(t *testing.T, answers ...answer) *fakeAPI {
	t.Helper()
	f := &fakeAPI{answers: answers, arrived: make(chan struct{}, 64)}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.requests)
		f.requests = append(f.requests, seen{at: time.Now(), path: r.URL.Path, auth: r.Header.Get("Authorization"), body: body})
		f.mu.Unlock()
		select {
		case f.arrived <- struct{}{}:
		default:
		}
		f.answers[min(n, len(f.answers)-1)](w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// seen returns the requests received so far.
func (f *fakeAPI) seen() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.requests...)
}

// config is a config object for the fake server; extra members are
// appended.
func (f *fakeAPI) config(extra string) []byte {
	c := `{"mode":"openai","provider":"deepseek","base_url":` + q(f.srv.URL+"/v1") + `,"api_key":"sk-test","max_retry_delay":"1ms"`
	if extra != "" {
		c += "," + extra
	}
	return []byte(c + "}")
}

// status answers with an HTTP error and an OpenAI error body; headers are
// name, value pairs.
func status(code int, message string, headers ...string) answer {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"error":{"message":`+q(message)+`,"type":"invalid_request_error","param":null,"code":null}}`)
	}
}

// completion answers 200 with body.
func completion(body string) answer {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

// hang answers only when the client gives up.
func hang(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

const okCompletion = `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"deepseek-chat-0324",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"## Goals and constraints\n- Fix TestX."},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":30}}}`

// configured returns a Summarizer configured with config.
func configured(t *testing.T, config []byte) *Summarizer {
	t.Helper()
	s := New(nil)
	if err := s.Configure(t.Context(), config); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOpenAIRequest checks the whole request body: model, the system
// prompt, the messages as the provider package converts them (an image as
// an image_url part, a developer message in its own role), the instruction last, the tools with
// tool_choice none, max_tokens; and the reply built from the completion.
func TestOpenAIRequest(t *testing.T) {
	api := newFakeAPI(t, completion(okCompletion))
	s := configured(t, api.config(`"model":"deepseek-chat-override"`))
	rep, err := s.Summarize(t.Context(), request())
	if err != nil {
		t.Fatal(err)
	}
	reqs := api.seen()
	if len(reqs) != 1 {
		t.Fatalf("%d requests; want 1", len(reqs))
	}
	r := reqs[0]
	if r.path != "/v1/chat/completions" || r.auth != "Bearer sk-test" {
		t.Fatalf("request to %s with Authorization %q", r.path, r.auth)
	}
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	want := `{
		"model": "deepseek-chat-override",
		"max_tokens": 1234,
		"tool_choice": "none",
		"messages": [
			{"role": "system", "content": "You are a coding agent."},
			{"role": "user", "content": [
				{"type": "text", "text": "Fix the failing test in main_test.go.\nKeep the public API."},
				{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]},
			{"role": "assistant", "content": "I'll read the test first.",
			 "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"main_test.go\"}"}}]},
			{"role": "tool", "tool_call_id": "call_1", "content": "package main\n\nfunc TestX(t *testing.T) {}"},
			{"role": "developer", "content": "[tool added: run]\n\nThe run tool is now available."},
			{"role": "assistant", "tool_calls": [
				{"id": "call_2", "type": "function", "function": {"name": "run", "arguments": "{\"cmd\":\"go test ./...\"}"}},
				{"id": "call_3", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"main.go\"}"}}]},
			{"role": "tool", "tool_call_id": "call_2", "content": "[tool error] \n--- FAIL: TestX\nexit status 1"},
			{"role": "tool", "tool_call_id": "call_3", "content": "(no output)"},
			{"role": "assistant", "content": "The test failed because TestX had no assertions; I added one and it passes now."},
			{"role": "user", "content": ` + q(instruction) + `}
		],
		"tools": [
			{"type": "function", "function": {"name": "read", "description": "Read a file",
				"parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
			{"type": "function", "function": {"name": "run", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}}
		]
	}`
	var wantBody map[string]any
	if err := json.Unmarshal([]byte(want), &wantBody); err != nil {
		t.Fatal(err)
	}
	for k, v := range wantBody {
		if !reflect.DeepEqual(body[k], v) {
			got, _ := json.MarshalIndent(body[k], "", "  ")
			t.Errorf("request member %q:\n got %s", k, got)
		}
	}
	for k := range body {
		if _, ok := wantBody[k]; !ok {
			t.Errorf("unexpected request member %q = %v", k, body[k])
		}
	}
	// The schema goes out byte for byte.
	if !strings.Contains(string(r.body), `"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`) {
		t.Errorf("the read tool's parameters were not sent verbatim: %s", r.body)
	}

	if got := summaryText(t, rep); got != "## Goals and constraints\n- Fix TestX." {
		t.Fatalf("summary %q", got)
	}
	if rep.Provider != "deepseek" || rep.Model != "deepseek-chat-0324" || string(rep.Usage) != `{"input":70,"output":20,"cacheRead":30}` {
		t.Fatalf("reply provider %q, model %q, usage %s", rep.Provider, rep.Model, rep.Usage)
	}
	raw, err := jsonv.Parse([]byte(okCompletion), jsonv.Options{})
	if err != nil || string(rep.RawOutput) != string(raw.Root().Bytes()) {
		t.Fatalf("raw output %s", rep.RawOutput)
	}
}

// TestOpenAIRequestDefaults: without a configured model the request's is
// asked; without tools neither tools nor tool_choice are sent; without a
// system prompt or max tokens neither is sent; DeepSeek's cache counters
// make the usage.
func TestOpenAIRequestDefaults(t *testing.T) {
	deepseek := strings.Replace(okCompletion, `"prompt_tokens_details":{"cached_tokens":30}`,
		`"prompt_cache_hit_tokens":40,"prompt_cache_miss_tokens":60`, 1)
	api := newFakeAPI(t, completion(deepseek))
	s := configured(t, api.config(""))
	r := request()
	r.Tools, r.System, r.MaxTokens = nil, nil, 0
	r.Messages = r.Messages[:1]
	rep, err := s.Summarize(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(api.seen()[0].body, &body); err != nil {
		t.Fatal(err)
	}
	msgs, _ := body["messages"].([]any)
	if body["model"] != "deepseek-chat" || body["tools"] != nil || body["tool_choice"] != nil || body["max_tokens"] != nil || len(msgs) != 2 {
		t.Fatalf("request %s", api.seen()[0].body)
	}
	if string(rep.Usage) != `{"input":60,"output":20,"cacheRead":40}` {
		t.Fatalf("usage %s", rep.Usage)
	}
}

// TestOpenAIRetries: 429 and 5xx answers are retried with backoff until a
// completion comes; Retry-After is honoured.
func TestOpenAIRetries(t *testing.T) {
	t.Run("429 then success", func(t *testing.T) {
		api := newFakeAPI(t, status(429, "rate limited"), completion(okCompletion))
		rep, err := configured(t, api.config("")).Summarize(t.Context(), request())
		if err != nil || len(api.seen()) != 2 || rep.Model != "deepseek-chat-0324" {
			t.Fatalf("reply %+v, error %v after %d requests", rep, err, len(api.seen()))
		}
	})
	t.Run("500 and 502 then success", func(t *testing.T) {
		api := newFakeAPI(t, status(500, "boom"), status(502, "bad gateway"), completion(okCompletion))
		_, err := configured(t, api.config("")).Summarize(t.Context(), request())
		if err != nil || len(api.seen()) != 3 {
			t.Fatalf("error %v after %d requests", err, len(api.seen()))
		}
	})
	t.Run("Retry-After is honoured", func(t *testing.T) {
		api := newFakeAPI(t, status(429, "slow down", "Retry-After", "1"), completion(okCompletion))
		// No max_retry_delay: the SDK's default cap admits a 1 s wait.
		cfg := `{"mode":"openai","base_url":` + q(api.srv.URL+"/v1") + `}`
		if _, err := configured(t, []byte(cfg)).Summarize(t.Context(), request()); err != nil {
			t.Fatal(err)
		}
		reqs := api.seen()
		if len(reqs) != 2 {
			t.Fatalf("%d requests; want 2", len(reqs))
		}
		if gap := reqs[1].at.Sub(reqs[0].at); gap < 900*time.Millisecond {
			t.Fatalf("retried after %v; Retry-After asked for 1 s", gap)
		}
	})
	t.Run("connection refused until the retries are used up", func(t *testing.T) {
		gone := httptest.NewServer(http.NotFoundHandler())
		gone.Close()
		cfg := `{"mode":"openai","base_url":` + q(gone.URL+"/v1") + `,"max_retries":1,"max_retry_delay":"1ms"}`
		_, err := configured(t, []byte(cfg)).Summarize(t.Context(), request())
		requireCode(t, err, sdk.CodeCompactionSummaryFailed, "calling "+gone.URL+"/v1", "after 2 attempt(s)")
	})
	t.Run("5xx until the retries are used up", func(t *testing.T) {
		api := newFakeAPI(t, status(503, "overloaded"))
		_, err := configured(t, api.config(`"max_retries":2`)).Summarize(t.Context(), request())
		requireCode(t, err, sdk.CodeCompactionSummaryFailed, "HTTP 503", "after 3 attempt(s)", "max_retries = 2", "overloaded")
		if len(api.seen()) != 3 {
			t.Fatalf("%d requests; want 3", len(api.seen()))
		}
	})
}

// TestOpenAIClientErrorIsFinal: a 4xx other than 408/409/429 is not
// retried and the error says what the provider said and what to check.
func TestOpenAIClientErrorIsFinal(t *testing.T) {
	for _, code := range []int{400, 401, 404} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			api := newFakeAPI(t, status(code, "Model Not Exist"), completion(okCompletion))
			_, err := configured(t, api.config("")).Summarize(t.Context(), request())
			requireCode(t, err, sdk.CodeCompactionSummaryFailed, "HTTP "+strconv.Itoa(code), "Model Not Exist", "not retried", `model "deepseek-chat"`, api.srv.URL)
			if len(api.seen()) != 1 {
				t.Fatalf("%d requests; want 1 (no retry)", len(api.seen()))
			}
		})
	}
}

// TestOpenAITimeout: an attempt that gets no answer within timeout fails
// the call (timeouts are not retried).
func TestOpenAITimeout(t *testing.T) {
	api := newFakeAPI(t, hang)
	start := time.Now()
	_, err := configured(t, api.config(`"timeout":"200ms"`)).Summarize(t.Context(), request())
	requireCode(t, err, sdk.CodeCompactionSummaryFailed, "timeout = 200ms", "attempt 1")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the call took %v", d)
	}
	if len(api.seen()) != 1 {
		t.Fatalf("%d requests; want 1", len(api.seen()))
	}
}

// TestOpenAICancelled: the caller's context ending stops the call with
// COMPACTION_CANCELLED.
func TestOpenAICancelled(t *testing.T) {
	api := newFakeAPI(t, hang)
	s := configured(t, api.config(""))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := s.Summarize(ctx, request())
		done <- err
	}()
	select {
	case <-api.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never arrived")
	}
	cancel()
	select {
	case err := <-done:
		requireCode(t, err, sdk.CodeCompactionCancelled)
	case <-time.After(10 * time.Second):
		t.Fatal("Summarize did not return after the cancellation")
	}
}

// TestOpenAIBadAnswers: answers without summary text and requests without
// a model fail with COMPACTION_SUMMARY_FAILED.
func TestOpenAIBadAnswers(t *testing.T) {
	empty := strings.Replace(okCompletion, `"content":"## Goals and constraints\n- Fix TestX."`, `"content":"  "`, 1)
	noChoice := `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[]}`
	for name, body := range map[string]string{"empty text": empty, "no choice": noChoice} {
		t.Run(name, func(t *testing.T) {
			api := newFakeAPI(t, completion(body))
			_, err := configured(t, api.config("")).Summarize(t.Context(), request())
			requireCode(t, err, sdk.CodeCompactionSummaryFailed, "without")
		})
	}
	t.Run("no model", func(t *testing.T) {
		api := newFakeAPI(t, completion(okCompletion))
		r := request()
		r.Model = ""
		_, err := configured(t, api.config("")).Summarize(t.Context(), r)
		requireCode(t, err, sdk.CodeCompactionSummaryFailed, "no model")
		if len(api.seen()) != 0 {
			t.Fatal("a request went out without a model")
		}
	})
	t.Run("message not JSON", func(t *testing.T) {
		api := newFakeAPI(t, completion(okCompletion))
		r := request()
		r.Messages = append(r.Messages, []byte(`{"role":`))
		_, err := configured(t, api.config("")).Summarize(t.Context(), r)
		if e := requireCode(t, err, sdk.CodePayloadInvalid, "not valid JSON"); e.Index == nil || *e.Index != 8 {
			t.Fatalf("error %v; want index 8", e)
		}
	})
}

// TestOpenAIFromEnvironment: with an empty config block, OPENAI_API_KEY
// selects the openai mode and OPENAI_BASE_URL the server.
func TestOpenAIFromEnvironment(t *testing.T) {
	api := newFakeAPI(t, completion(okCompletion))
	s := New(env(map[string]string{EnvAPIKey: "sk-env", EnvBaseURL: api.srv.URL + "/v1"}))
	rep, err := s.Summarize(t.Context(), request()) // never configured: "{}"
	if err != nil {
		t.Fatal(err)
	}
	if reqs := api.seen(); len(reqs) != 1 || reqs[0].auth != "Bearer sk-env" || rep.Provider != "openai" {
		t.Fatalf("requests %+v, provider %q", reqs, rep.Provider)
	}
}

// TestProcessEnvironmentIgnored: only the config block and the getenv
// given to New configure the client; the SDK does not read the process's
// OPENAI_* variables behind the plugin's back.
func TestProcessEnvironmentIgnored(t *testing.T) {
	t.Setenv(EnvAPIKey, "sk-process")
	t.Setenv("OPENAI_ORG_ID", "org-process")
	api := newFakeAPI(t, completion(okCompletion))
	cfg := `{"mode":"openai","base_url":` + q(api.srv.URL+"/v1") + `}`
	if _, err := configured(t, []byte(cfg)).Summarize(t.Context(), request()); err != nil {
		t.Fatal(err)
	}
	if auth := api.seen()[0].auth; auth != "" {
		t.Fatalf("Authorization %q sent without a configured key", auth)
	}
}
