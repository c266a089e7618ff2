package compactorsummary

import (
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// TestParseConfigDefaults: the defaults of every member, and the
// environment's part in them.
func TestParseConfigDefaults(t *testing.T) {
	cases := []struct {
		name string
		cfg  string
		env  map[string]string
		want Config
	}{
		{
			name: "empty config, empty environment: extractive",
			cfg:  `{}`,
			want: Config{Mode: ModeExtractive, Provider: "openai", BaseURL: DefaultBaseURL, Timeout: DefaultTimeout, MaxRetries: 3},
		},
		{
			name: "OPENAI_API_KEY selects openai; OPENAI_BASE_URL the server",
			cfg:  ` {} `,
			env:  map[string]string{EnvAPIKey: "sk-env", EnvBaseURL: "http://127.0.0.1:9/v1"},
			want: Config{Mode: ModeOpenAI, Provider: "openai", BaseURL: "http://127.0.0.1:9/v1", APIKey: "sk-env", Timeout: DefaultTimeout, MaxRetries: 3},
		},
		{
			name: "config members win over the environment",
			cfg: `{"mode":"openai","provider":"deepseek","base_url":"https://api.deepseek.com/v1","api_key":"sk-cfg",` +
				`"model":"deepseek-chat","timeout":"60s","max_retries":0,"max_retry_delay":"250ms"}`,
			env: map[string]string{EnvAPIKey: "sk-env", EnvBaseURL: "http://127.0.0.1:9/v1"},
			want: Config{Mode: ModeOpenAI, Provider: "deepseek", BaseURL: "https://api.deepseek.com/v1", APIKey: "sk-cfg",
				Model: "deepseek-chat", Timeout: 60 * time.Second, MaxRetries: 0, MaxRetryDelay: 250 * time.Millisecond},
		},
		{
			name: "explicit extractive despite a key; empty strings are unset",
			cfg:  `{"mode":"extractive","api_key":"","base_url":"","max_retries":null}`,
			env:  map[string]string{EnvAPIKey: "sk-env"},
			want: Config{Mode: ModeExtractive, Provider: "openai", BaseURL: DefaultBaseURL, APIKey: "sk-env", Timeout: DefaultTimeout, MaxRetries: 3},
		},
		{
			name: "explicit openai without a key",
			cfg:  `{"mode":"openai","base_url":"http://localhost:11434/v1"}`,
			want: Config{Mode: ModeOpenAI, Provider: "openai", BaseURL: "http://localhost:11434/v1", Timeout: DefaultTimeout, MaxRetries: 3},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(c.cfg), env(c.env))
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("ParseConfig =\n %+v\nwant\n %+v", got, c.want)
			}
		})
	}
	if c, err := ParseConfig([]byte(`{}`), nil); err != nil || c.Mode != ModeExtractive {
		t.Fatalf("nil getenv: %+v, %v", c, err)
	}
}

// TestParseConfigInvalid: one case per rule; each is CONFIG_INVALID naming
// the member and the value, and Configure keeps the previous config.
func TestParseConfigInvalid(t *testing.T) {
	cases := []struct {
		name string
		cfg  string
		env  map[string]string
		want []string
	}{
		{"not an object", `[]`, nil, []string{"JSON object", `"[]"`}},
		{"empty", ``, nil, []string{"JSON object"}},
		{"unknown member", `{"mode":"openai","temperature":0.2}`, nil, []string{"temperature"}},
		{"wrong type", `{"max_retries":"3"}`, nil, []string{"max_retries"}},
		{"data after the object", `{}{}`, nil, []string{"after its object"}},
		{"unknown mode", `{"mode":"abstractive"}`, nil, []string{"mode", `"abstractive"`}},
		{"base_url not http", `{"base_url":"ftp://example.com/v1"}`, nil, []string{"base_url", `"ftp://example.com/v1"`}},
		{"base_url without host", `{"base_url":"https:///v1"}`, nil, []string{"base_url"}},
		{"bad OPENAI_BASE_URL", `{}`, map[string]string{EnvBaseURL: "not a url"}, []string{"base_url", `"not a url"`}},
		{"timeout not a duration", `{"timeout":"60"}`, nil, []string{"timeout", `"60"`}},
		{"timeout zero", `{"timeout":"0s"}`, nil, []string{"timeout", `"0s"`}},
		{"max_retries negative", `{"max_retries":-1}`, nil, []string{"max_retries = -1"}},
		{"max_retries too large", `{"max_retries":101}`, nil, []string{"max_retries = 101"}},
		{"max_retry_delay negative", `{"max_retry_delay":"-1s"}`, nil, []string{"max_retry_delay", `"-1s"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(c.cfg), env(c.env))
			requireCode(t, err, sdk.CodeConfigInvalid, c.want...)

			s := New(env(c.env))
			if err := s.Configure(t.Context(), []byte(`{"mode":"extractive","provider":"before","base_url":"http://127.0.0.1:9/v1"}`)); err != nil {
				t.Fatal(err)
			}
			requireCode(t, s.Configure(t.Context(), []byte(c.cfg)), sdk.CodeConfigInvalid, c.want...)
			if got, err := s.Config(); err != nil || got.Provider != "before" {
				t.Fatalf("after a refused Configure the config is %+v, %v", got, err)
			}
		})
	}
}

// TestUnconfiguredDefaultRefused: a Summarizer never configured applies
// "{}" at its first call, and reports a bad environment there.
func TestUnconfiguredDefaultRefused(t *testing.T) {
	s := New(env(map[string]string{EnvBaseURL: "::"}))
	_, err := s.Summarize(t.Context(), request())
	requireCode(t, err, sdk.CodeConfigInvalid, "base_url")
}
