package config

import (
	_ "embed"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Defaults of the top-level keys (docs/operations.md, docs/architecture.md).
const (
	DefaultDataDir            = "./logbook-data"
	DefaultWriteWindow        = 200 * time.Millisecond
	DefaultMaxPendingBytes    = 64 << 20 // 64 MiB
	DefaultRetryMaxBackoff    = 5 * time.Second
	DefaultPluginStartTimeout = 10 * time.Second
	// DefaultMaxPendingBytesTotal bounds the write-behind queues of the
	// whole process (key max_pending_bytes_total).
	DefaultMaxPendingBytesTotal = 512 << 20 // 512 MiB
	// DefaultWriteBackpressureTimeout is how long an append waits for room
	// under max_pending_bytes_total (key write_backpressure_timeout).
	DefaultWriteBackpressureTimeout = 10 * time.Second
	// DefaultMaxLiveSessions caps the sessions one host holds live (key
	// max_live_sessions).
	DefaultMaxLiveSessions = 1000
)

// Defaults of the serve block (docs/operations.md, "Security model").
const (
	// DefaultIdleRelease is how long serve keeps a live session that no
	// request touched before it releases it (key idle_release).
	DefaultIdleRelease = 10 * time.Minute
)

// Defaults of the bundled persistence backends (docs/storage.md).
const (
	DefaultJSONLCompression  = "zstd"
	DefaultJSONLZstdLevel    = "default"
	DefaultSQLitePath        = "sessions.db"
	DefaultSQLiteJournalMode = "wal"
	DefaultSQLiteBusyTimeout = 5000 * time.Millisecond
	// DefaultSQLiteCompressMinBytes is compress_min_bytes when unset.
	DefaultSQLiteCompressMinBytes = 256
)

// Defaults of the compaction block (docs/compaction.md).
const (
	DefaultThresholdRatio      = 0.8
	DefaultRetainRatio         = 0.16
	DefaultMaxTokens           = 8192
	DefaultCompactionRetries   = 1
	DefaultMaxOverflowRetries  = 1
	DefaultPruneThresholdChars = 8192
	DefaultPruneHeadChars      = 4096
	DefaultPruneTailChars      = 1024
	DefaultSpillRoot           = "spill" // relative to DataDir
)

// PruneMarkerCodePoints is cp(M), the length in code points of the pruner's
// marker "\n\n[... middle of tool output removed ...]\n\n" (docs/compaction.md),
// which the budget rule head + cp(M) + tail ≤ threshold counts.
const PruneMarkerCodePoints = 43

// Config is a loaded configuration. Every field holds its effective value:
// what the file says, or the documented default. Parse returns a fresh
// value; callers may modify it.
type Config struct {
	// DataDir is the directory relative persistence and spill paths resolve
	// against. Key data_dir; default "./logbook-data". A relative data_dir is
	// joined to the config file's directory at parse time (the working
	// directory for the embedded files), so DataDir is absolute only when the
	// file path or data_dir was.
	DataDir string

	// WriteWindow is the write-behind window (docs/architecture.md). Key write_window;
	// default 200ms; 1ms – 60s.
	WriteWindow time.Duration

	// MaxPendingBytes bounds each write-behind queue of a session
	// (docs/architecture.md). Key max_pending_bytes; default 64 MiB; ≥ MaxEventBytes.
	MaxPendingBytes int64

	// MaxPendingBytesTotal bounds the write-behind queues of every session
	// and backend of the process together. Past it an append waits up to
	// WriteBackpressureTimeout for room, then fails with BACKEND_BUSY. Key
	// max_pending_bytes_total; default 512 MiB; ≥ MaxPendingBytes.
	MaxPendingBytesTotal int64

	// WriteBackpressureTimeout is how long an append waits for room under
	// MaxPendingBytesTotal. Key write_backpressure_timeout; default 10s;
	// > 0.
	WriteBackpressureTimeout time.Duration

	// MaxLiveSessions caps the sessions the host holds open for writing at
	// once; opening one more fails with TOO_MANY_LIVE_SESSIONS. Key
	// max_live_sessions; default 1000; ≥ 1.
	MaxLiveSessions int64

	// RetryMaxBackoff caps the write-behind retry backoff, which starts at
	// WriteWindow and doubles (docs/architecture.md). Key retry_max_backoff; default
	// 5s; ≥ WriteWindow.
	RetryMaxBackoff time.Duration

	// MaxEventBytes is the largest canonical event (docs/format.md). Key
	// max_event_bytes; default 16 MiB; 1 KiB – 1 GiB.
	MaxEventBytes int64

	// RPCMaxBytes is the gRPC max message size for plugins (docs/architecture.md). Key
	// rpc_max_bytes; default 32 MiB; ≥ MaxEventBytes + 1 MiB and
	// ≤ 2 GiB − 1.
	RPCMaxBytes int64

	// PluginStartTimeout bounds a plugin's launch and handshake. Key
	// plugin_start_timeout; default 10s; > 0.
	PluginStartTimeout time.Duration

	// AutoMTLS enables go-plugin's automatic mutual TLS between host and
	// plugins. Key auto_mtls; default true. Turn it off only in tests.
	AutoMTLS bool

	// Persistence holds the persistence blocks in file order; the first is
	// the primary (reads, listing, ownership), the others are mirrors
	// (docs/architecture.md). At least one; labels are unique.
	Persistence []Persistence

	// Compaction is the compaction block, or nil when there is none (a
	// headless profile: no summarizer, pruner or spill).
	Compaction *Compaction

	// Plugins holds the plugin blocks in file order; names are unique.
	// A bundled plugin needs no block.
	Plugins []Plugin

	// Retention is the retention block, or nil when there is none: then
	// no session is deleted for its age (docs/operations.md, "Deleting
	// sessions, holds and retention").
	Retention *Retention

	// Serve is the serve block: settings only logbook serve (and view)
	// uses. Without the block it holds the defaults.
	Serve Serve

	// Mirrors holds the mirror blocks in file order, at most one per
	// tool: the directories logbook serve imports live (docs/import.md,
	// "The live mirror").
	Mirrors []Mirror

	// Telemetry is the telemetry block, or nil when there is none: then
	// logbook serve pushes no traces (docs/operations.md, "Telemetry").
	Telemetry *Telemetry

	// Auth is the auth block: the token store and the JWT keys logbook
	// serve accepts credentials from. Without the block it holds the
	// defaults (Auth).
	Auth Auth
}

// Mirror is one mirror "<tool>" block: a directory of another tool's
// session files that logbook serve imports as they are written.
type Mirror struct {
	// Tool is the block label, the dialect the files are read in:
	// "claude-code", "codex", "pi" or "auto" (detected per file).
	Tool string

	// Dir is the directory watched, with everything below it; absolute
	// when the config file's path was (a relative dir is joined to the
	// config file's directory, a leading "~/" to the home directory).
	// Key dir; default DefaultSourceDir(Tool, home) (required for "auto").
	Dir string

	// Poll makes the mirror stat the files every 250 ms instead of using
	// file notifications (for file systems such as NFS that do not
	// notify of writes made elsewhere). Key poll; default false: it polls
	// only where notifications fail.
	Poll bool

	// IdleRelease is how long a mirrored session stays live after the
	// mirror last wrote to it; then the mirror flushes and releases it.
	// Key idle_release; default 1m; ≥ 1s.
	IdleRelease time.Duration
}

// Serve is the body of the serve block.
type Serve struct {
	// AllowedHosts are Host header values a loopback server accepts besides
	// its defaults (localhost, *.localhost, loopback IPs and the listen
	// address, each with or without the port); off loopback, where any
	// Host is accepted by default, a non-empty list is the only hosts
	// accepted. Each is a host name or IP, optionally with ":port"; a
	// leading "*." matches every subdomain. Key allowed_hosts; default
	// none.
	AllowedHosts []string

	// AllowedOrigins are origins ("scheme://host[:port]") whose pages may
	// call the server besides its own; for them the server answers CORS
	// requests. Key allowed_origins; default none: every request that
	// carries another Origin is refused, and no CORS header is sent.
	AllowedOrigins []string

	// IdleRelease is how long serve keeps a live session that no request
	// touched before it flushes and releases it; 0 keeps sessions until
	// shutdown. Key idle_release; default 10m; 0 or ≥ 1s.
	IdleRelease time.Duration
}

// Retention is the body of the retention block.
type Retention struct {
	// MaxAge is how long after its last activity a session is kept;
	// logbook gc and serve delete older ones. Key max_age, required: a
	// duration of Go's units or days ("90d", "36h", "1d12h"), ≥ 1h.
	MaxAge time.Duration

	// KeepForkedParents keeps a session while another stored session
	// names it as its parent (a fork, a salvaged child), however old it
	// is. Key keep_forked_parents; default true.
	KeepForkedParents bool
}

// Persistence is one persistence "<name>" block.
type Persistence struct {
	// Name is the block label: the backend plugin's name, either a bundled
	// backend ("jsonl", "sqlite", "memory") or a plugin with a command in a
	// plugin block.
	Name string

	// JSONL holds the settings when Name is "jsonl"; nil otherwise.
	JSONL *JSONL

	// SQLite holds the settings when Name is "sqlite"; nil otherwise.
	SQLite *SQLite

	// Config is the JSON object the host passes to the backend's Configure:
	// for a bundled backend its effective settings keyed by their HCL names
	// (paths resolved, busy_timeout in milliseconds); for a third-party
	// backend the block body converted as the package doc describes. Never
	// empty: "{}" when there is nothing to say.
	Config json.RawMessage
}

// JSONL is the body of a persistence "jsonl" block (docs/storage.md).
type JSONL struct {
	// Root is the directory holding the sessions. Key root; default
	// DataDir; a relative root is resolved against DataDir.
	Root string

	// Compression is "zstd" or "none". Key compression; default "zstd".
	Compression string

	// ZstdLevel is the zstd encoder level: "fastest", "default", "better"
	// or "best". Key zstd_level; default "default"; "" when Compression is
	// "none" (setting zstd_level then is an error).
	ZstdLevel string
}

// SQLite is the body of a persistence "sqlite" block (docs/storage.md).
type SQLite struct {
	// Path is the database file. Key path; default "sessions.db"; a
	// relative path is resolved against DataDir; ":memory:" is kept as is.
	Path string

	// JournalMode is "wal", "delete", "truncate" or "persist". Key
	// journal_mode; default "wal".
	JournalMode string

	// BusyTimeout is SQLite's busy timeout. Key busy_timeout, in whole
	// milliseconds, 0 – 2147483647; default 5000.
	BusyTimeout time.Duration

	// CompressData enables zstd compression of large event data. Key
	// compress_data; default true.
	CompressData bool

	// CompressMinBytes is the data size in bytes from which CompressData
	// compresses. Key compress_min_bytes, 64 – 1048576 (1 MiB); default
	// 256.
	CompressMinBytes int
}

// Compaction is the compaction block (docs/compaction.md).
type Compaction struct {
	// Summarizer names the summarizer plugin. Key summarizer; required.
	Summarizer string

	// Pruner names the tool-result pruner plugin. Key pruner; default ""
	// (no pruner); pruner = "" also means none, so env("PRUNER") may
	// leave it off.
	Pruner string

	// Auto enables pressure-driven compaction; false = manual only. Key
	// auto; default true.
	Auto bool

	// ThresholdRatio is the fraction of the context window that triggers
	// compaction. Key threshold_ratio; default 0.8; in (0, 1].
	ThresholdRatio float64

	// RetainRatio is the fraction of the context window kept verbatim after
	// compaction. Key retain_ratio; default 0.16; in (0, 1] and below
	// ThresholdRatio; 0 when RetainTokens is set (the two keys are
	// exclusive).
	RetainRatio float64

	// RetainTokens, when non-nil, replaces RetainRatio with a token count.
	// Key retain_tokens; default unset; ≥ 0. That it is below the threshold
	// in tokens depends on the model's context window and is checked when
	// compaction runs, not here.
	RetainTokens *int64

	// SummarizationProvider and SummarizationModel select the model that
	// writes summaries; both "" means the session's current target. Keys
	// summarization_provider, summarization_model; default ""; both or
	// neither.
	SummarizationProvider string
	SummarizationModel    string

	// MaxTokens is the summary's output token budget. Key max_tokens;
	// default 8192; ≥ 1.
	MaxTokens int64

	// CompactionRetries is how often a failed summary is retried. Key
	// compaction_retries; default 1; ≥ 0.
	CompactionRetries int

	// MaxOverflowRetries is how often an overflowing request is compacted
	// and retried (docs/compaction.md). Key max_overflow_retries; default 1; ≥ 0.
	MaxOverflowRetries int

	// ModelPolicies are the model_policy blocks in file order, each with
	// its effective values. Default none; (provider, model) pairs are
	// unique.
	ModelPolicies []ModelPolicy

	// Prune is the pruner's budget (docs/compaction.md).
	Prune PruneBudget

	// Spill is the spill policy (docs/compaction.md).
	Spill Spill
}

// ModelPolicy is a model_policy block: overrides for one provider and model.
// Fields the block leaves unset hold the compaction block's values, so each
// policy is complete on its own.
type ModelPolicy struct {
	// Provider and Model select the target. Keys provider, model; both
	// required and non-empty.
	Provider string
	Model    string

	// ThresholdRatio: key threshold_ratio; in (0, 1].
	ThresholdRatio float64

	// RetainRatio: key retain_ratio; in (0, 1], below ThresholdRatio;
	// 0 when RetainTokens is set. Exclusive with retain_tokens in the block.
	RetainRatio float64

	// RetainTokens: key retain_tokens; ≥ 0; nil when a retain ratio applies.
	RetainTokens *int64

	// MaxTokens: key max_tokens; ≥ 1.
	MaxTokens int64
}

// PruneBudget is the pruner budget of docs/compaction.md, in code points. Keys
// prune_threshold_chars, prune_head_chars, prune_tail_chars in the
// compaction block; defaults 8192 / 4096 / 1024; all ≥ 0 and
// HeadChars + PruneMarkerCodePoints + TailChars ≤ ThresholdChars.
type PruneBudget struct {
	ThresholdChars int64
	HeadChars      int64
	TailChars      int64
}

// Spill is the spill policy of docs/compaction.md.
type Spill struct {
	// MaxInlineBytes is the largest tool result kept inline; 0 disables
	// spilling. Key spill_max_inline_bytes; default 0; ≥ 0 (a typical value
	// is 50000).
	MaxInlineBytes int64

	// ExemptTools are tools whose results are never spilled. Key
	// spill_exempt_tools; default ["read"]; names non-empty.
	ExemptTools []string

	// Root is the local artifact store. Key spill_root; default
	// DataDir/spill; a relative root is resolved against DataDir.
	Root string
}

// Plugin is a plugin "<name>" block.
type Plugin struct {
	// Name matches [a-z0-9][a-z0-9._-]{0,63}.
	Name string

	// Command is the plugin binary; "" means the bundled plugin of that
	// name (which must exist, see BundledPlugins). A relative command with a
	// path separator is resolved against the config file's directory; a bare
	// name is left for a PATH lookup. A command given for a bundled name
	// replaces the bundled binary.
	Command string

	// Args are extra arguments for Command. Key args; default none.
	Args []string

	// SHA256 is the expected SHA-256 of Command's binary, 64 lowercase hex
	// digits, checked by go-plugin's SecureConfig; "" = not checked. Only
	// with Command.
	SHA256 string

	// Config is the plugin's config block as a JSON object (see the package
	// doc), passed to Configure; "{}" when there is no config block.
	Config json.RawMessage
}

// BundledPlugin is a plugin compiled into the logbook binary.
type BundledPlugin struct {
	Name string
	Kind sdk.Kind
	// Bundle is the import path of the package that registers the plugin
	// (pluginrpc.Bundle): a program that serves bundled plugins itself
	// (logbook.ServePlugins) serves those whose Bundle it imports.
	Bundle string
}

// bundlePath is the import path of the registration package of the
// plugin in plugins/<dir>.
func bundlePath(dir string) string {
	return "github.com/seed-e5e476df/logbook/plugins/" + dir + "/bundle"
}

// bundled is the one list of bundled plugins; extend it when a plugin
// lands in plugins/.
var bundled = []BundledPlugin{
	{Name: "jsonl", Kind: sdk.KindPersistence, Bundle: bundlePath("jsonl")},
	{Name: "sqlite", Kind: sdk.KindPersistence, Bundle: bundlePath("sqlite")},
	{Name: "memory", Kind: sdk.KindPersistence, Bundle: bundlePath("memory")},
	{Name: "postgres", Kind: sdk.KindPersistence, Bundle: bundlePath("postgres")},
	{Name: "compactor-summary", Kind: sdk.KindSummarizer, Bundle: bundlePath("compactor-summary")},
	{Name: "pruner", Kind: sdk.KindPruner, Bundle: bundlePath("pruner")},
}

// BundledPlugins returns the plugins bundled into the logbook binary, which
// a config may name without a command. The slice is a fresh copy.
func BundledPlugins() []BundledPlugin { return slices.Clone(bundled) }

// LookupBundled reports the kind of the bundled plugin called name.
func LookupBundled(name string) (sdk.Kind, bool) {
	b, ok := bundledPlugin(name)
	return b.Kind, ok
}

// BundlePackage returns the import path of the package that registers the
// bundled plugin called name (BundledPlugin.Bundle).
func BundlePackage(name string) (string, bool) {
	b, ok := bundledPlugin(name)
	return b.Bundle, ok
}

// bundledPlugin returns the bundled plugin called name.
func bundledPlugin(name string) (BundledPlugin, bool) {
	for _, b := range bundled {
		if b.Name == name {
			return b, true
		}
	}
	return BundledPlugin{}, false
}

//go:embed default.hcl
var defaultHCL []byte

//go:embed headless.hcl
var headlessHCL []byte

// Overrides change a configuration while it is parsed, before any path in
// it is resolved.
type Overrides struct {
	// DataDir, when not empty, replaces data_dir (the command line's
	// --data). A relative DataDir stays relative to the working directory.
	// Relative persistence roots and the spill root resolve against it.
	DataDir string
}

// Default returns the embedded default configuration (config/default.hcl):
// JSONL with zstd rooted at data_dir, and compaction with the bundled
// summarizer and pruner. It is parsed afresh on every call; its data_dir is
// relative to the working directory unless o.DataDir replaces it. It panics
// only if the embedded file is invalid, which the package tests rule out.
func Default(o Overrides) *Config { return mustParse(defaultHCL, "default.hcl", o) }

// Headless returns the embedded headless configuration
// (config/headless.hcl): the default's persistence and no compaction block.
func Headless(o Overrides) *Config { return mustParse(headlessHCL, "headless.hcl", o) }

func mustParse(src []byte, name string, o Overrides) *Config {
	c, err := parse(src, name, o)
	if err != nil {
		panic("config: embedded " + name + " is invalid: " + err.Error())
	}
	return c
}

// Load reads and parses the config file at path with the overrides o. A
// relative data_dir in it is resolved against the file's directory. Errors
// are described in the package doc; a file that cannot be read is
// CONFIG_INVALID wrapping the cause. To run without a file, use
// LoadOrDefault("", o) or Default.
func Load(path string, o Overrides) (*Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		e := sdk.Errorf(sdk.CodeConfigInvalid, "config", "%s: cannot read config file", path)
		e.Err = err
		return nil, e
	}
	return parse(src, path, o)
}

// LoadOrDefault is Load, except that path "" (no config file given) returns
// the embedded default (Default).
func LoadOrDefault(path string, o Overrides) (*Config, error) {
	if path == "" {
		return Default(o), nil
	}
	return Load(path, o)
}

// Parse parses src, the contents of the config file named filename. The
// name prefixes every error position, and a relative data_dir is resolved
// against filepath.Dir(filename). env() calls read the process environment
// now. Parse is safe for concurrent use.
func Parse(src []byte, filename string) (*Config, error) {
	return parse(src, filename, Overrides{})
}

// ResolvePath resolves p against DataDir: "" is DataDir itself, an absolute
// p is cleaned, and a relative p is joined to DataDir. It does not touch the
// filesystem.
func (c *Config) ResolvePath(p string) string {
	switch {
	case p == "":
		return c.DataDir
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(c.DataDir, p)
}

// Plugin returns the plugin block called name, or nil when there is none.
func (c *Config) Plugin(name string) *Plugin {
	for i := range c.Plugins {
		if c.Plugins[i].Name == name {
			return &c.Plugins[i]
		}
	}
	return nil
}
