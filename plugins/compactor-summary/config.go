package compactorsummary

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// The modes of the summarizer.
const (
	// ModeOpenAI asks an OpenAI-compatible chat-completions API.
	ModeOpenAI = "openai"
	// ModeExtractive keeps excerpts of the conversation: no network,
	// deterministic (see Extractive).
	ModeExtractive = "extractive"
)

// Defaults of the config members.
const (
	DefaultProvider   = "openai"
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultTimeout    = 120 * time.Second
	DefaultMaxRetries = 3
)

// maxMaxRetries bounds max_retries.
const maxMaxRetries = 100

// The environment variables read when the config block leaves a member
// unset, as the OpenAI SDKs do.
const (
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvBaseURL = "OPENAI_BASE_URL"
)

// Config is the summarizer's configuration: the plugin block's config
// object (JSON, HCL snake_case keys) with its defaults filled in.
type Config struct {
	// Mode is ModeOpenAI or ModeExtractive. Key mode; default ModeOpenAI
	// when an API key is configured or in OPENAI_API_KEY, else
	// ModeExtractive. An explicit "openai" works without a key, for
	// servers that take none.
	Mode string
	// Provider is the provider name the summary is recorded under. Key
	// provider; default "openai" (say "deepseek" for DeepSeek).
	Provider string
	// BaseURL is the API's base URL, up to and including the version path
	// ("https://api.deepseek.com/v1"). Key base_url; default
	// OPENAI_BASE_URL, else DefaultBaseURL. Must be an http or https URL.
	BaseURL string
	// APIKey is sent as a bearer token. Key api_key; default
	// OPENAI_API_KEY; "" sends none.
	APIKey string
	// Model is the model asked for the summary. Key model; default "": the
	// request's model (the compaction profile's summarization model, else
	// the session's).
	Model string
	// Timeout bounds each HTTP attempt, from sending the request to the end
	// of the answer. Key timeout (a Go duration, "60s"); default 120 s;
	// > 0. An attempt that times out is not retried.
	Timeout time.Duration
	// MaxRetries is how often a failed attempt is retried: after HTTP 408,
	// 409, 429 or 5xx, or a connection error. Key max_retries; default 3;
	// 0 … 100. Other 4xx answers are final.
	MaxRetries int
	// MaxRetryDelay caps the wait before a retry: the exponential backoff
	// (0.5 s doubling, with jitter) and a server's Retry-After or
	// Retry-After-Ms, which are honoured; an answer asking for a longer
	// wait ends the retries. Key max_retry_delay (a Go duration); default
	// 0: the SDK's caps (8 s for backoff, 2 min for Retry-After); > 0 when
	// set.
	MaxRetryDelay time.Duration
}

// ConfigSchema is the JSON Schema of the config object that GetInfo
// reports.
const ConfigSchema = `{"type":"object","additionalProperties":false,"properties":{` +
	`"mode":{"enum":["openai","extractive"],"description":"default: openai when an API key is configured or in OPENAI_API_KEY, else extractive"},` +
	`"provider":{"type":"string","default":"openai","description":"provider name recorded with the summary"},` +
	`"base_url":{"type":"string","description":"OpenAI-compatible API base URL; default OPENAI_BASE_URL, else https://api.openai.com/v1"},` +
	`"api_key":{"type":"string","description":"default OPENAI_API_KEY"},` +
	`"model":{"type":"string","description":"default: the request's model"},` +
	`"timeout":{"type":"string","default":"120s","description":"per HTTP attempt, a Go duration"},` +
	`"max_retries":{"type":"integer","minimum":0,"maximum":100,"default":3},` +
	`"max_retry_delay":{"type":"string","description":"cap on backoff and Retry-After, a Go duration; default the SDK's"}}}`

// rawConfig is the config object as written.
type rawConfig struct {
	Mode          string `json:"mode"`
	Provider      string `json:"provider"`
	BaseURL       string `json:"base_url"`
	APIKey        string `json:"api_key"`
	Model         string `json:"model"`
	Timeout       string `json:"timeout"`
	MaxRetries    *int   `json:"max_retries"`
	MaxRetryDelay string `json:"max_retry_delay"`
}

// ParseConfig decodes a config object and fills in the defaults, reading
// the environment through getenv (nil: an empty environment). A member set
// to "" counts as unset. Unknown members, values of the wrong type and
// values outside the rules of Config are CONFIG_INVALID naming the member.
func ParseConfig(data []byte, getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Config{}, configInvalid("the %s config must be a JSON object; got %s", Name, clipText(trimmed))
	}
	var raw rawConfig
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Config{}, configInvalid("the %s config does not decode (members: mode, provider, base_url, api_key, model, timeout, max_retries, max_retry_delay): %v", Name, err)
	}
	if dec.More() {
		return Config{}, configInvalid("the %s config has data after its object", Name)
	}
	c := Config{
		Mode:       raw.Mode,
		Provider:   raw.Provider,
		BaseURL:    raw.BaseURL,
		APIKey:     raw.APIKey,
		Model:      raw.Model,
		Timeout:    DefaultTimeout,
		MaxRetries: DefaultMaxRetries,
	}
	if c.APIKey == "" {
		c.APIKey = getenv(EnvAPIKey)
	}
	switch c.Mode {
	case "":
		c.Mode = ModeExtractive
		if c.APIKey != "" {
			c.Mode = ModeOpenAI
		}
	case ModeOpenAI, ModeExtractive:
	default:
		return Config{}, configInvalid(`mode = %s must be "openai" or "extractive"`, strconv.Quote(c.Mode))
	}
	if c.Provider == "" {
		c.Provider = DefaultProvider
	}
	if c.BaseURL == "" {
		c.BaseURL = getenv(EnvBaseURL)
	}
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Config{}, configInvalid("base_url = %s must be an http or https URL such as %q", strconv.Quote(c.BaseURL), DefaultBaseURL)
	}
	if raw.Timeout != "" {
		d, err := time.ParseDuration(raw.Timeout)
		if err != nil || d <= 0 {
			return Config{}, configInvalid(`timeout = %s must be a positive Go duration such as "60s"`, strconv.Quote(raw.Timeout))
		}
		c.Timeout = d
	}
	if raw.MaxRetries != nil {
		if *raw.MaxRetries < 0 || *raw.MaxRetries > maxMaxRetries {
			return Config{}, configInvalid("max_retries = %d must be in 0 … %d", *raw.MaxRetries, maxMaxRetries)
		}
		c.MaxRetries = *raw.MaxRetries
	}
	if raw.MaxRetryDelay != "" {
		d, err := time.ParseDuration(raw.MaxRetryDelay)
		if err != nil || d <= 0 {
			return Config{}, configInvalid(`max_retry_delay = %s must be a positive Go duration such as "10s"`, strconv.Quote(raw.MaxRetryDelay))
		}
		c.MaxRetryDelay = d
	}
	return c, nil
}

func configInvalid(format string, args ...any) error {
	return sdk.Errorf(sdk.CodeConfigInvalid, op, format, args...)
}

func clipText(b []byte) string {
	if len(b) > 64 {
		return strconv.Quote(string(b[:64])) + "…"
	}
	return strconv.Quote(string(b))
}
