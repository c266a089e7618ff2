package compaction

import (
	"context"
	"sync"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Options are what a Compactor needs besides the compaction block.
type Options struct {
	// Summarizer writes the summaries (docs/compaction.md); required.
	Summarizer sdk.Summarizer
	// RangeSelector, when set, chooses the span of automatic and manual
	// compactions (a summarizer that declares the "select-range"
	// capability); its answer is checked like an explicit region and the
	// host's own selection is used, with a warning, when it is invalid.
	// Default nil: the host selects (docs/compaction.md).
	RangeSelector sdk.RangeSelector
	// Pruner prunes oversized tool results (docs/compaction.md); nil means no pruner,
	// whatever the block's pruner key says.
	Pruner sdk.Pruner
	// Flush makes a session durable; CompactNow calls it after the bracket
	// closes (docs/compaction.md). Nil means there is nothing to flush (no
	// persistence), which counts as success.
	Flush func(ctx context.Context, s *session.Session) error
	// ModelInfo returns the context window of a provider's model when the
	// host knows it; the pressure policy falls back to the latest
	// request/context for that target (docs/compaction.md). Default nil: unknown.
	ModelInfo func(provider, model string) (contextWindow int64, ok bool)
	// NewID returns a new compactionId; default a lowercase UUIDv4.
	NewID func() string
	// RPCMaxBytes bounds one summarizer or pruner request; default
	// sdk.DefaultRPCMaxBytes.
	RPCMaxBytes int
	// Logger receives warnings (capacity unknown, still above threshold,
	// invalid plugin ranges, skipped prunes); default a null logger.
	Logger hclog.Logger
}

// Compactor runs compaction and pruning for the sessions of one host: the
// compaction transaction (CompactRegion), the pressure policy
// (BeforeRequest), overflow recovery (OnOverflow), manual compaction
// (CompactNow) and tool-result pruning (Prune); docs/compaction.md.
//
// It keeps per-session state (a token Meter, the incremental compaction
// lock, the overflow counter, the targets already warned about) for every
// session it has seen; the state of a closed session is dropped when the
// next new session is seen. Operations on one
// session are serialized: an operation that finds another one running on
// the same session fails with COMPACTION_BUSY instead of waiting. Safe for
// concurrent use.
type Compactor struct {
	cfg  config.Compaction
	opts Options
	log  hclog.Logger

	mu       sync.Mutex
	sessions map[*session.Session]*sessionState
}

// sessionState is a Compactor's state for one session.
type sessionState struct {
	s     *session.Session
	busy  sync.Mutex // held by the running operation
	meter *Meter
	track tracker

	// Guarded by busy.
	overflows    int        // overflow recoveries since the last reset (docs/compaction.md)
	overflowSeen sdk.Offset // log length the reset scan has covered
	warned       map[string]bool
}

// New returns a Compactor for the compaction block cfg (a copy is kept). It
// checks the settings the policies rely on: a summarizer, positive ratios
// and budgets, exactly one of the retain settings per policy.
func New(cfg *config.Compaction, opts Options) (*Compactor, error) {
	if cfg == nil {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "compaction", "no compaction block: a headless profile has no compactor")
	}
	if opts.Summarizer == nil {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "compaction", "a compactor needs the summarizer %q", cfg.Summarizer)
	}
	if err := checkPolicy("the compaction block", cfg.ThresholdRatio, cfg.RetainRatio, cfg.RetainTokens, cfg.MaxTokens); err != nil {
		return nil, err
	}
	for _, p := range cfg.ModelPolicies {
		if err := checkPolicy("model_policy "+p.Provider+"/"+p.Model, p.ThresholdRatio, p.RetainRatio, p.RetainTokens, p.MaxTokens); err != nil {
			return nil, err
		}
	}
	if cfg.CompactionRetries < 0 || cfg.MaxOverflowRetries < 0 {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "compaction", "compaction_retries %d and max_overflow_retries %d must be ≥ 0", cfg.CompactionRetries, cfg.MaxOverflowRetries)
	}
	if opts.NewID == nil {
		opts.NewID = func() string { return uuid.New().String() }
	}
	if opts.RPCMaxBytes == 0 {
		opts.RPCMaxBytes = sdk.DefaultRPCMaxBytes
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	c := &Compactor{cfg: *cfg, opts: opts, log: opts.Logger, sessions: map[*session.Session]*sessionState{}}
	return c, nil
}

func checkPolicy(where string, threshold, retain float64, retainTokens *int64, maxTokens int64) error {
	switch {
	case !(threshold > 0 && threshold <= 1):
		return sdk.Errorf(sdk.CodeConfigInvalid, "compaction", "%s: threshold_ratio %v is outside (0, 1]", where, threshold)
	case retainTokens == nil && !(retain > 0 && retain < threshold):
		return sdk.Errorf(sdk.CodeConfigInvalid, "compaction", "%s: retain_ratio %v must be in (0, threshold_ratio %v)", where, retain, threshold)
	case retainTokens != nil && *retainTokens < 0:
		return sdk.Errorf(sdk.CodeConfigInvalid, "compaction", "%s: retain_tokens %d is negative", where, *retainTokens)
	case maxTokens < 1:
		return sdk.Errorf(sdk.CodeConfigInvalid, "compaction", "%s: max_tokens %d must be ≥ 1", where, maxTokens)
	}
	return nil
}

// state returns the session's state, creating it; states of closed sessions
// are dropped when a new one is made.
func (c *Compactor) state(s *session.Session) *sessionState {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.sessions[s]; ok {
		return st
	}
	for other := range c.sessions {
		if other.Closed() {
			delete(c.sessions, other)
		}
	}
	st := &sessionState{s: s, meter: NewMeter(s)}
	c.sessions[s] = st
	return st
}

// acquire takes the session's operation lock, or fails with COMPACTION_BUSY
// when another operation of this Compactor runs on it.
func (c *Compactor) acquire(s *session.Session) (*sessionState, error) {
	st := c.state(s)
	if !st.busy.TryLock() {
		return nil, c.errorf(sdk.CodeCompactionBusy, s, "another compaction or prune of this session is running")
	}
	return st, nil
}

// logState returns the compaction lock and open turn of the session's log.
func (st *sessionState) logState() logState { return st.track.state(st.s.Events()) }

// errorf builds an error of this package for session s.
func (c *Compactor) errorf(code sdk.Code, s *session.Session, format string, args ...any) *sdk.Error {
	e := sdk.Errorf(code, "compaction", format, args...)
	e.SessionID = s.ID()
	return e
}
