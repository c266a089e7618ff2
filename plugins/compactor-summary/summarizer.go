package compactorsummary

import (
	"context"
	"net/http"
	"os"
	"sync"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// Name is the plugin's name.
const Name = "compactor-summary"

// op is the Op of this package's errors.
const op = Name

// Summarizer is the compactor-summary summarizer: ModeOpenAI or
// ModeExtractive, as configured. It is safe for concurrent use; Configure
// replaces the configuration for later calls.
type Summarizer struct {
	getenv func(string) string
	http   *http.Client

	mu         sync.RWMutex
	configured bool
	cfg        Config
	chat       openai.ChatCompletionService
}

// New returns an unconfigured Summarizer that reads the environment
// through getenv (nil: an empty environment). Until Configure succeeds it
// behaves as configured with "{}", applied at its first call.
func New(getenv func(string) string) *Summarizer {
	return &Summarizer{getenv: getenv, http: &http.Client{}}
}

// Configure implements sdk.Configurable: it applies the plugin block's
// config object (see ParseConfig). A refused config is CONFIG_INVALID and
// leaves the previous configuration in place.
func (s *Summarizer) Configure(ctx context.Context, config []byte) error {
	if err := ctx.Err(); err != nil {
		return cancelled(err)
	}
	_, err := s.configure(config, false)
	return err
}

// configure parses config and installs it; with ifUnset, only when no
// configuration is installed yet (else it returns the installed one).
func (s *Summarizer) configure(config []byte, ifUnset bool) (Config, error) {
	c, err := ParseConfig(config, s.getenv)
	if err != nil {
		return Config{}, err
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(s.http),
		option.WithBaseURL(c.BaseURL),
		option.WithMaxRetries(c.MaxRetries),
		option.WithRequestTimeout(c.Timeout),
	}
	if c.APIKey != "" {
		opts = append(opts, option.WithAPIKey(c.APIKey))
	}
	if c.MaxRetryDelay > 0 {
		opts = append(opts, option.WithMaxRetryDelay(c.MaxRetryDelay))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ifUnset && s.configured {
		return s.cfg, nil
	}
	// The service alone, not openai.NewClient: the client would also read
	// OPENAI_* variables of the process environment, and the plugin's
	// configuration must come from its config block and getenv only.
	s.cfg, s.chat, s.configured = c, openai.NewChatCompletionService(opts...), true
	return c, nil
}

// Config returns the configuration in effect, applying "{}" first when
// Configure was never called.
func (s *Summarizer) Config() (Config, error) {
	s.mu.RLock()
	c, ok := s.cfg, s.configured
	s.mu.RUnlock()
	if ok {
		return c, nil
	}
	return s.configure([]byte("{}"), true)
}

// Summarize implements sdk.Summarizer (docs/compaction.md) in the configured
// mode. The reply's Summary is one text block. Errors: CONFIG_INVALID when
// the unconfigured default does not apply (a bad OPENAI_BASE_URL);
// PAYLOAD_INVALID (with the message's index) for a message that is not a
// derived message; COMPACTION_CANCELLED when ctx ends; in ModeOpenAI,
// COMPACTION_SUMMARY_FAILED when the provider refuses the request, keeps
// failing after the retries, times out or answers without text.
func (s *Summarizer) Summarize(ctx context.Context, r sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
	c, err := s.Config()
	if err != nil {
		return sdk.SummarizeReply{}, err
	}
	if c.Mode == ModeExtractive {
		return Extractive{}.Summarize(ctx, r)
	}
	s.mu.RLock()
	chat := s.chat
	s.mu.RUnlock()
	return summarizeOpenAI(ctx, chat, c, r)
}

// ServeConfig is what a compactor-summary plugin process serves: Info
// (name "compactor-summary", kind summarizer, the config schema) and a
// Summarizer over the process environment as both the Summarizer and the
// Configurable. cmd/logbook serves it as `logbook plugin compactor-summary`.
func ServeConfig(version string) pluginrpc.ServeConfig {
	s := New(os.Getenv)
	return pluginrpc.ServeConfig{
		Info: sdk.Info{
			Name:         Name,
			Version:      version,
			Kinds:        []sdk.Kind{sdk.KindSummarizer},
			ConfigSchema: ConfigSchema,
		},
		Summarizer:   s,
		Configurable: s,
	}
}

// cancelled is the error of a call whose context ended.
func cancelled(cause error) error {
	return &sdk.Error{Code: sdk.CodeCompactionCancelled, Op: op,
		Detail: "the caller's context ended", Err: cause}
}

var (
	_ sdk.Summarizer   = (*Summarizer)(nil)
	_ sdk.Configurable = (*Summarizer)(nil)
)
