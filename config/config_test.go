package config_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk"
)

// mem is a valid persistence block appended to sources that test something
// else, after the lines under test so their positions stay put.
const mem = "\npersistence \"memory\" {}\n"

// comp opens a compaction block whose next line (3) is the key under test.
const comp = "compaction {\n  summarizer = \"compactor-summary\"\n"

// policy opens a model_policy block whose next line (5) is the key under test.
const policy = comp + "  model_policy {\n    provider = \"p\"\n"

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func parse(t *testing.T, src string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(src), "t.hcl")
	if err != nil {
		t.Fatalf("Parse:\n%s\nerror: %v", src, err)
	}
	return c
}

// flatten returns the *sdk.Error values in err, checking that every leaf
// is a CONFIG_INVALID *sdk.Error whose Detail starts with file:line:col:.
func flatten(t *testing.T, err error) []*sdk.Error {
	t.Helper()
	if err == nil {
		t.Fatal("want an error, got nil")
	}
	if !errors.Is(err, sdk.CodeConfigInvalid) || sdk.CodeOf(err) != sdk.CodeConfigInvalid {
		t.Fatalf("want CONFIG_INVALID, got %v", err)
	}
	var leaves []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		leaves = j.Unwrap()
	} else {
		leaves = []error{err}
	}
	pos := regexp.MustCompile(`^[^:]+:\d+:\d+: `)
	var out []*sdk.Error
	for _, l := range leaves {
		e, ok := l.(*sdk.Error)
		if !ok {
			t.Fatalf("leaf %T is not an *sdk.Error: %v", l, l)
		}
		if e.Code != sdk.CodeConfigInvalid || e.Op != "config" {
			t.Errorf("leaf %v: want code CONFIG_INVALID, op config", e)
		}
		if !pos.MatchString(e.Detail) {
			t.Errorf("detail %q does not start with file:line:col:", e.Detail)
		}
		out = append(out, e)
	}
	return out
}

// wantErr asserts that parsing src fails with a problem at pos (a prefix
// such as "t.hcl:3:3:") whose detail contains every string in want.
func wantErr(t *testing.T, src, pos string, want ...string) {
	t.Helper()
	_, err := config.Parse([]byte(src), "t.hcl")
	errs := flatten(t, err)
	for _, e := range errs {
		if !strings.HasPrefix(e.Detail, pos) {
			continue
		}
		missing := false
		for _, w := range want {
			if !strings.Contains(e.Detail, w) {
				missing = true
			}
		}
		if !missing {
			return
		}
	}
	t.Errorf("source:\n%s\nwant an error at %q containing %q; got:\n%v", src, pos, want, err)
}

func TestServeBlock(t *testing.T) {
	c := parse(t, "max_live_sessions = 5\nmax_pending_bytes_total = 134217728\nwrite_backpressure_timeout = \"2s\"\n"+
		"serve {\n  allowed_hosts = [\"box.lan\", \"*.dev.example:8080\", \"[::1]:7420\"]\n"+
		"  allowed_origins = [\"http://localhost:3000\"]\n  idle_release = \"0s\"\n}\npersistence \"memory\" {}")
	want := config.Serve{
		AllowedHosts:   []string{"box.lan", "*.dev.example:8080", "[::1]:7420"},
		AllowedOrigins: []string{"http://localhost:3000"},
	}
	if !reflect.DeepEqual(c.Serve, want) {
		t.Errorf("serve: got %+v, want %+v", c.Serve, want)
	}
	if c.MaxLiveSessions != 5 || c.MaxPendingBytesTotal != 128<<20 || c.WriteBackpressureTimeout != 2*time.Second {
		t.Errorf("got max_live_sessions %d, max_pending_bytes_total %d, write_backpressure_timeout %s",
			c.MaxLiveSessions, c.MaxPendingBytesTotal, c.WriteBackpressureTimeout)
	}
}

func TestDefaults(t *testing.T) {
	c := parse(t, `persistence "memory" {}`)
	want := &config.Config{
		DataDir:            "logbook-data",
		WriteWindow:        200 * time.Millisecond,
		MaxPendingBytes:    64 << 20,
		RetryMaxBackoff:    5 * time.Second,
		MaxEventBytes:      16 << 20,
		RPCMaxBytes:        32 << 20,
		PluginStartTimeout: 10 * time.Second,
		AutoMTLS:           true,
		Persistence:        []config.Persistence{{Name: "memory", Config: json.RawMessage("{}")}},

		MaxPendingBytesTotal:     512 << 20,
		WriteBackpressureTimeout: 10 * time.Second,
		MaxLiveSessions:          1000,
		Serve:                    config.Serve{IdleRelease: 10 * time.Minute},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
}

func TestBackendDefaults(t *testing.T) {
	c := parse(t, "persistence \"jsonl\" {}\npersistence \"sqlite\" {}\n")
	j, s := c.Persistence[0].JSONL, c.Persistence[1].SQLite
	if want := (&config.JSONL{Root: "logbook-data", Compression: "zstd", ZstdLevel: "default"}); !reflect.DeepEqual(j, want) {
		t.Errorf("jsonl = %+v, want %+v", j, want)
	}
	want := &config.SQLite{Path: filepath.Join("logbook-data", "sessions.db"), JournalMode: "wal", BusyTimeout: 5 * time.Second, CompressData: true, CompressMinBytes: 256}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("sqlite = %+v, want %+v", s, want)
	}
	if got := string(c.Persistence[0].Config); got != `{"compression":"zstd","root":"logbook-data","zstd_level":"default"}` {
		t.Errorf("jsonl Config = %s", got)
	}
	if got := string(c.Persistence[1].Config); got != `{"busy_timeout":5000,"compress_data":true,"compress_min_bytes":256,"journal_mode":"wal","path":"logbook-data/sessions.db"}` {
		t.Errorf("sqlite Config = %s", got)
	}
	if c.Persistence[0].SQLite != nil || c.Persistence[1].JSONL != nil {
		t.Error("only the backend's own settings are set")
	}
}

func TestBackendSettings(t *testing.T) {
	c := parse(t, `
persistence "jsonl" {
  root        = "/srv/sessions"
  compression = "none"
}
persistence "sqlite" {
  path          = ":memory:"
  journal_mode  = "truncate"
  busy_timeout  = 0
  compress_data = false
  compress_min_bytes = 4096
}
`)
	if want := (&config.JSONL{Root: "/srv/sessions", Compression: "none"}); !reflect.DeepEqual(c.Persistence[0].JSONL, want) {
		t.Errorf("jsonl = %+v", c.Persistence[0].JSONL)
	}
	if want := (&config.SQLite{Path: ":memory:", JournalMode: "truncate", CompressMinBytes: 4096}); !reflect.DeepEqual(c.Persistence[1].SQLite, want) {
		t.Errorf("sqlite = %+v", c.Persistence[1].SQLite)
	}
	if got := string(c.Persistence[0].Config); got != `{"compression":"none","root":"/srv/sessions"}` {
		t.Errorf("jsonl Config = %s", got)
	}
}

func TestCompactionDefaults(t *testing.T) {
	c := parse(t, "compaction {\n  summarizer = \"compactor-summary\"\n}"+mem)
	want := &config.Compaction{
		Summarizer:         "compactor-summary",
		Auto:               true,
		ThresholdRatio:     0.8,
		RetainRatio:        0.16,
		MaxTokens:          8192,
		CompactionRetries:  1,
		MaxOverflowRetries: 1,
		Prune:              config.PruneBudget{ThresholdChars: 8192, HeadChars: 4096, TailChars: 1024},
		Spill:              config.Spill{ExemptTools: []string{"read"}, Root: filepath.Join("logbook-data", "spill")},
	}
	if !reflect.DeepEqual(c.Compaction, want) {
		t.Errorf("got  %+v\nwant %+v", c.Compaction, want)
	}
}

func TestCompactionSettings(t *testing.T) {
	c := parse(t, `
compaction {
  summarizer             = "compactor-summary"
  pruner                 = "pruner"
  auto                   = false
  threshold_ratio        = 0.9
  retain_tokens          = 1000
  summarization_provider = "deepseek"
  summarization_model    = "deepseek-chat"
  max_tokens             = 4096
  compaction_retries     = 0
  max_overflow_retries   = 3
  prune_threshold_chars  = 100
  prune_head_chars       = 40
  prune_tail_chars       = 17
  spill_max_inline_bytes = 50000
  spill_exempt_tools     = []
  spill_root             = "/tmp/spill"
  model_policy {
    provider = "a"
    model    = "m1"
  }
  model_policy {
    provider        = "a"
    model           = "m2"
    threshold_ratio = 0.5
    retain_ratio    = 0.25
    max_tokens      = 100
  }
}
persistence "memory" {}
`)
	k := c.Compaction
	if k.Pruner != "pruner" || k.Auto || k.ThresholdRatio != 0.9 || k.RetainRatio != 0 || k.RetainTokens == nil || *k.RetainTokens != 1000 {
		t.Errorf("compaction = %+v", k)
	}
	if k.SummarizationProvider != "deepseek" || k.SummarizationModel != "deepseek-chat" || k.MaxTokens != 4096 || k.CompactionRetries != 0 || k.MaxOverflowRetries != 3 {
		t.Errorf("compaction = %+v", k)
	}
	if k.Prune != (config.PruneBudget{ThresholdChars: 100, HeadChars: 40, TailChars: 17}) {
		t.Errorf("prune = %+v (40 + 43 + 17 = 100 is allowed)", k.Prune)
	}
	if k.Spill.MaxInlineBytes != 50000 || len(k.Spill.ExemptTools) != 0 || k.Spill.ExemptTools == nil || k.Spill.Root != "/tmp/spill" {
		t.Errorf("spill = %+v", k.Spill)
	}
	// Policies carry effective values: the first inherits everything.
	p1, p2 := k.ModelPolicies[0], k.ModelPolicies[1]
	if p1.Provider != "a" || p1.Model != "m1" || p1.ThresholdRatio != 0.9 || p1.RetainRatio != 0 || p1.RetainTokens == nil || *p1.RetainTokens != 1000 || p1.MaxTokens != 4096 {
		t.Errorf("policy 1 = %+v", p1)
	}
	if p1.RetainTokens == k.RetainTokens {
		t.Error("a policy shares the block's RetainTokens pointer")
	}
	if p2.ThresholdRatio != 0.5 || p2.RetainRatio != 0.25 || p2.RetainTokens != nil || p2.MaxTokens != 100 {
		t.Errorf("policy 2 = %+v", p2)
	}
}

func TestPruneMarkerCodePoints(t *testing.T) {
	// The marker M of docs/compaction.md.
	if n := utf8.RuneCountInString("\n\n[... middle of tool output removed ...]\n\n"); n != config.PruneMarkerCodePoints {
		t.Errorf("cp(M) = %d, PruneMarkerCodePoints = %d", n, config.PruneMarkerCodePoints)
	}
}

func TestDataDirResolution(t *testing.T) {
	c, err := config.Parse([]byte(`data_dir = "data"`+mem), "/etc/logbook/logbook.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/etc/logbook/data" {
		t.Errorf("relative data_dir against the file's directory: got %q", c.DataDir)
	}
	c, err = config.Parse([]byte(`data_dir = "/var/lib/logbook/"`+mem), "/etc/logbook/logbook.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/var/lib/logbook" {
		t.Errorf("absolute data_dir: got %q", c.DataDir)
	}
	if got := config.Default(config.Overrides{}).DataDir; got != "logbook-data" {
		t.Errorf("embedded default: data_dir relative to the working directory, got %q", got)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "conf.hcl")
	if err := os.WriteFile(path, []byte(`persistence "sqlite" { path = "db/s.db" }`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = config.Load(path, config.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "logbook-data"); c.DataDir != want {
		t.Errorf("Load: DataDir = %q, want %q", c.DataDir, want)
	}
	if want := filepath.Join(dir, "logbook-data", "db", "s.db"); c.Persistence[0].SQLite.Path != want {
		t.Errorf("sqlite path = %q, want %q", c.Persistence[0].SQLite.Path, want)
	}

	for p, want := range map[string]string{
		"":          c.DataDir,
		"x/y":       filepath.Join(c.DataDir, "x", "y"),
		"/abs/./p/": "/abs/p",
		"../up":     filepath.Join(dir, "up"),
	} {
		if got := c.ResolvePath(p); got != want {
			t.Errorf("ResolvePath(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestPluginBlocks(t *testing.T) {
	c, err := config.Parse([]byte(`
plugin "compactor-summary" {}
plugin "rel" {
  command = "bin/rel-plugin"
  args    = ["-v", "--x=1"]
  sha256  = "`+hex64+`"
}
plugin "bare" { command = "logbook-bare" }
plugin "jsonl" { command = "/opt/jsonl-next" }
persistence "jsonl" {}
`), "/etc/logbook/c.hcl")
	if err != nil {
		t.Fatal(err)
	}
	want := []config.Plugin{
		{Name: "compactor-summary", Config: json.RawMessage("{}")},
		{Name: "rel", Command: "/etc/logbook/bin/rel-plugin", Args: []string{"-v", "--x=1"}, SHA256: hex64, Config: json.RawMessage("{}")},
		{Name: "bare", Command: "logbook-bare", Config: json.RawMessage("{}")},
		{Name: "jsonl", Command: "/opt/jsonl-next", Config: json.RawMessage("{}")},
	}
	if !reflect.DeepEqual(c.Plugins, want) {
		t.Errorf("got  %+v\nwant %+v", c.Plugins, want)
	}
	if p := c.Plugin("rel"); p == nil || p.Command != "/etc/logbook/bin/rel-plugin" {
		t.Errorf("Plugin(rel) = %+v", p)
	}
	if c.Plugin("nope") != nil {
		t.Error("Plugin(nope) != nil")
	}
}

func TestBundledPlugins(t *testing.T) {
	got := config.BundledPlugins()
	want := []config.BundledPlugin{
		{Name: "jsonl", Bundle: "github.com/seed-e5e476df/logbook/plugins/jsonl/bundle", Kind: sdk.KindPersistence},
		{Name: "sqlite", Bundle: "github.com/seed-e5e476df/logbook/plugins/sqlite/bundle", Kind: sdk.KindPersistence},
		{Name: "memory", Bundle: "github.com/seed-e5e476df/logbook/plugins/memory/bundle", Kind: sdk.KindPersistence},
		{Name: "postgres", Bundle: "github.com/seed-e5e476df/logbook/plugins/postgres/bundle", Kind: sdk.KindPersistence},
		{Name: "compactor-summary", Bundle: "github.com/seed-e5e476df/logbook/plugins/compactor-summary/bundle", Kind: sdk.KindSummarizer},
		{Name: "pruner", Bundle: "github.com/seed-e5e476df/logbook/plugins/pruner/bundle", Kind: sdk.KindPruner},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("BundledPlugins() = %+v", got)
	}
	got[0].Name = "changed"
	if config.BundledPlugins()[0].Name != "jsonl" {
		t.Error("BundledPlugins returns shared state")
	}
	if k, ok := config.LookupBundled("pruner"); !ok || k != sdk.KindPruner {
		t.Errorf("LookupBundled(pruner) = %q, %v", k, ok)
	}
	if _, ok := config.LookupBundled("archive"); ok {
		t.Error("archive is not bundled")
	}
	if p, ok := config.BundlePackage("sqlite"); !ok || p != "github.com/seed-e5e476df/logbook/plugins/sqlite/bundle" {
		t.Errorf("BundlePackage(sqlite) = %q, %v", p, ok)
	}
	if _, ok := config.BundlePackage("archive"); ok {
		t.Error("archive has a bundle package")
	}
}

// TestRules violates every rule once: the error is CONFIG_INVALID, its
// detail starts with the position of the offending key, label or block and
// names the key and the rule.
func TestRules(t *testing.T) {
	tests := []struct {
		name, src, pos string
		want           []string
	}{
		// top level
		{"data_dir not empty", `data_dir = ""` + mem, "t.hcl:1:1:", []string{"data_dir", "must not be empty"}},
		{"write_window at least 1ms", `write_window = "999us"` + mem, "t.hcl:1:1:", []string{`write_window = "999us"`, "between 1ms and 1m0s"}},
		{"write_window at most 60s", `write_window = "61s"` + mem, "t.hcl:1:1:", []string{`write_window = "61s"`, "between 1ms and 1m0s"}},
		{"max_event_bytes at least 1 KiB", `max_event_bytes = 1023` + mem, "t.hcl:1:1:", []string{"max_event_bytes = 1023", "between 1024"}},
		{"max_event_bytes at most 1 GiB", `max_event_bytes = 1073741825` + mem, "t.hcl:1:1:", []string{"max_event_bytes = 1073741825", "1073741824 (1 GiB)"}},
		{"max_pending_bytes at least max_event_bytes", `max_pending_bytes = 2048` + mem, "t.hcl:1:1:", []string{"max_pending_bytes (2048) must be >= max_event_bytes (16777216)"}},
		{"max_event_bytes above default max_pending_bytes", "rpc_max_bytes = 200000000\nmax_event_bytes = 100000000" + mem, "t.hcl:2:1:", []string{"max_pending_bytes (67108864) must be >= max_event_bytes (100000000)"}},
		{"retry_max_backoff at least write_window", `retry_max_backoff = "100ms"` + mem, "t.hcl:1:1:", []string{"retry_max_backoff (100ms) must be >= write_window (200ms)"}},
		{"rpc_max_bytes at least max_event_bytes + 1 MiB", `rpc_max_bytes = 17825791` + mem, "t.hcl:1:1:", []string{"rpc_max_bytes (17825791) must be >= max_event_bytes + 1 MiB (17825792)"}},
		{"rpc_max_bytes at most 2 GiB - 1", `rpc_max_bytes = 2147483648` + mem, "t.hcl:1:1:", []string{"rpc_max_bytes = 2147483648", "2147483647"}},
		{"plugin_start_timeout positive", `plugin_start_timeout = "0s"` + mem, "t.hcl:1:1:", []string{`plugin_start_timeout = "0s" must be > 0`}},

		{"max_pending_bytes_total at least max_pending_bytes", `max_pending_bytes_total = 1000` + mem, "t.hcl:1:1:", []string{"max_pending_bytes_total (1000) must be >= max_pending_bytes (67108864)"}},
		{"write_backpressure_timeout positive", `write_backpressure_timeout = "0s"` + mem, "t.hcl:1:1:", []string{`write_backpressure_timeout = "0s" must be > 0`}},
		{"max_live_sessions at least 1", `max_live_sessions = 0` + mem, "t.hcl:1:1:", []string{"max_live_sessions = 0 must be >= 1"}},

		// serve
		{"serve allowed_hosts a list", "serve {\n  allowed_hosts = \"a.example\"\n}" + mem, "t.hcl:2:3:", []string{"allowed_hosts", "a list of strings"}},
		{"serve allowed_hosts host names", "serve {\n  allowed_hosts = [\"a b\"]\n}" + mem, "t.hcl:2:3:", []string{`allowed_hosts: "a b" is not a host name`}},
		{"serve allowed_hosts ports", "serve {\n  allowed_hosts = [\"a.example:99999\"]\n}" + mem, "t.hcl:2:3:", []string{`"a.example:99999" has a port`}},
		{"serve allowed_origins origins", "serve {\n  allowed_origins = [\"app.example\"]\n}" + mem, "t.hcl:2:3:", []string{`allowed_origins: "app.example" is not an origin`}},
		{"serve allowed_origins no path", "serve {\n  allowed_origins = [\"https://app.example/x\"]\n}" + mem, "t.hcl:2:3:", []string{`"https://app.example/x" is not an origin: scheme://host[:port]`}},
		{"serve idle_release 0 or at least 1s", "serve {\n  idle_release = \"10ms\"\n}" + mem, "t.hcl:2:3:", []string{`idle_release = "10ms" must be 0 (never) or >= 1s`}},
		{"serve unknown key", "serve {\n  addr = \"x\"\n}" + mem, "t.hcl:2:3:", []string{`unknown key "addr" in serve`}},
		{"serve once", "serve {}\nserve {}" + mem, "t.hcl:2:1:", []string{"serve block is declared twice"}},

		// mirror
		{"mirror needs a label", "mirror {}" + mem, "t.hcl:1:1:", []string{"mirror block needs exactly one label", `"claude-code"`}},
		{"mirror label a tool", "mirror \"cursor\" {}" + mem, "t.hcl:1:8:", []string{`mirror "cursor": the label must be one of "auto", "claude-code", "codex", "pi"`}},
		{"mirror once per tool", "mirror \"pi\" {}\nmirror \"pi\" {}" + mem, "t.hcl:2:8:", []string{`mirror "pi" is declared twice (first at t.hcl:1:1)`}},
		{"mirror auto needs dir", "mirror \"auto\" {}" + mem, "t.hcl:1:1:", []string{`mirror "auto" needs dir`}},
		{"mirror dir not empty", "mirror \"pi\" {\n  dir = \"\"\n}" + mem, "t.hcl:2:3:", []string{"dir", "must not be empty"}},
		{"mirror poll a bool", "mirror \"pi\" {\n  poll = 1\n}" + mem, "t.hcl:2:3:", []string{"poll = 1", "true or false"}},
		{"mirror idle_release at least 1s", "mirror \"pi\" {\n  idle_release = \"10ms\"\n}" + mem, "t.hcl:2:3:", []string{`idle_release = "10ms" must be >= 1s`}},
		{"mirror unknown key", "mirror \"pi\" {\n  path = \"x\"\n}" + mem, "t.hcl:2:3:", []string{`unknown key "path" in mirror "pi"`, "allowed keys: dir, poll, idle_release"}},

		// retention
		{"retention max_age required", "retention {}" + mem, "t.hcl:1:1:", []string{"retention block needs max_age"}},
		{"retention max_age a duration", "retention {\n  max_age = \"90 days\"\n}" + mem, "t.hcl:2:3:", []string{`max_age = "90 days"`, "units d, h"}},
		{"retention max_age a string", "retention {\n  max_age = 90\n}" + mem, "t.hcl:2:3:", []string{"max_age = 90", "duration string"}},
		{"retention max_age at least 1h", "retention {\n  max_age = \"90s\"\n}" + mem, "t.hcl:2:3:", []string{`max_age = "90s" must be >= 1h0m0s`}},
		{"retention keep_forked_parents a bool", "retention {\n  max_age = \"1d\"\n  keep_forked_parents = \"yes\"\n}" + mem, "t.hcl:3:3:", []string{"keep_forked_parents", "true or false"}},
		{"retention unknown key", "retention {\n  max_age = \"1d\"\n  maxage = 1\n}" + mem, "t.hcl:3:3:", []string{`unknown key "maxage" in retention`}},
		{"retention once", "retention {\n  max_age = \"1d\"\n}\nretention {\n  max_age = \"2d\"\n}" + mem, "t.hcl:4:1:", []string{"retention block is declared twice"}},

		// telemetry
		{"telemetry otlp_endpoint required", "telemetry {}" + mem, "t.hcl:1:1:", []string{"telemetry block needs otlp_endpoint"}},
		{"telemetry otlp_endpoint an http URL", "telemetry {\n  otlp_endpoint = \"grpc://c:4317\"\n}" + mem, "t.hcl:2:3:", []string{`otlp_endpoint = "grpc://c:4317" is not an http(s) URL`}},
		{"telemetry otlp_endpoint not empty", "telemetry {\n  otlp_endpoint = \"\"\n}" + mem, "t.hcl:2:3:", []string{`otlp_endpoint = "" is not an http(s) URL`}},
		{"telemetry timeout bounds", "telemetry {\n  otlp_endpoint = \"http://c:4318\"\n  timeout = \"1ms\"\n}" + mem, "t.hcl:3:3:", []string{"timeout", "must be between 100ms and 5m0s"}},
		{"telemetry queue bounds", "telemetry {\n  otlp_endpoint = \"http://c:4318\"\n  queue = 0\n}" + mem, "t.hcl:3:3:", []string{"queue = 0 must be between 1 and 1000000"}},
		{"telemetry headers strings", "telemetry {\n  otlp_endpoint = \"http://c:4318\"\n  headers = [\"a\"]\n}" + mem, "t.hcl:3:3:", []string{"headers", "a map of strings"}},
		{"telemetry once", "telemetry {\n  otlp_endpoint = \"http://c:4318\"\n}\ntelemetry {\n  otlp_endpoint = \"http://d:4318\"\n}" + mem, "t.hcl:4:1:", []string{"telemetry block is declared twice"}},

		// persistence
		{"persistence required", `data_dir = "d"`, "t.hcl:1:1:", []string{"at least one persistence block is required"}},
		{"persistence needs one label", `persistence {}`, "t.hcl:1:1:", []string{"persistence block needs exactly one label"}},
		{"persistence name syntax", `persistence "JSONL" {}`, "t.hcl:1:13:", []string{`persistence "JSONL"`, "[a-z0-9][a-z0-9._-]{0,63}"}},
		{"persistence label unique", "persistence \"memory\" {}\npersistence \"memory\" {}", "t.hcl:2:13:", []string{`persistence "memory" is declared twice (first at t.hcl:1:1)`}},
		{"persistence must be a backend", `persistence "pruner" {}`, "t.hcl:1:13:", []string{`persistence "pruner"`, "not a persistence backend"}},
		{"persistence third-party needs plugin block", `persistence "archive" {}`, "t.hcl:1:13:", []string{`persistence "archive"`, `no plugin "archive" block`}},
		{"persistence plugin has no config block", "persistence \"pg\" {}\nplugin \"pg\" {\n  command = \"/bin/pg\"\n  config {}\n}", "t.hcl:4:3:", []string{`plugin "pg" is a persistence backend`, `persistence "pg" block`}},
		{"jsonl root not empty", "persistence \"jsonl\" {\n  root = \"\"\n}", "t.hcl:2:3:", []string{"root", "must not be empty"}},
		{"jsonl compression", "persistence \"jsonl\" {\n  compression = \"gzip\"\n}", "t.hcl:2:3:", []string{`compression = "gzip" must be one of "zstd", "none"`}},
		{"jsonl zstd_level", "persistence \"jsonl\" {\n  zstd_level = \"max\"\n}", "t.hcl:2:3:", []string{`zstd_level = "max" must be one of "fastest", "default", "better", "best"`}},
		{"jsonl zstd_level needs zstd", "persistence \"jsonl\" {\n  compression = \"none\"\n  zstd_level = \"best\"\n}", "t.hcl:3:3:", []string{`zstd_level needs compression = "zstd"`}},
		{"sqlite path not empty", "persistence \"sqlite\" {\n  path = \"\"\n}", "t.hcl:2:3:", []string{"path", "must not be empty"}},
		{"sqlite journal_mode", "persistence \"sqlite\" {\n  journal_mode = \"WAL\"\n}", "t.hcl:2:3:", []string{`journal_mode = "WAL" must be one of "wal", "delete", "truncate", "persist"`}},
		{"sqlite busy_timeout non-negative", "persistence \"sqlite\" {\n  busy_timeout = -1\n}", "t.hcl:2:3:", []string{"busy_timeout = -1 must be between 0 and 2147483647"}},
		{"sqlite busy_timeout at most int32", "persistence \"sqlite\" {\n  busy_timeout = 2147483648\n}", "t.hcl:2:3:", []string{"busy_timeout = 2147483648 must be between 0 and 2147483647"}},

		// compaction
		{"compaction summarizer required", "compaction {\n}" + mem, "t.hcl:1:1:", []string{"compaction block needs summarizer"}},
		{"compaction summarizer exists", "compaction {\n  summarizer = \"mine\"\n}" + mem, "t.hcl:2:3:", []string{`summarizer = "mine" names no bundled plugin and no plugin "mine" block`}},
		{"compaction summarizer kind", "compaction {\n  summarizer = \"jsonl\"\n}" + mem, "t.hcl:2:3:", []string{`summarizer = "jsonl" must name a summarizer plugin`, "bundled persistence plugin"}},
		{"compaction summarizer name syntax", "compaction {\n  summarizer = \"My Summarizer\"\n}" + mem, "t.hcl:2:3:", []string{`summarizer = "My Summarizer" must be a plugin name`}},
		{"compaction pruner kind", comp + "  pruner = \"compactor-summary\"\n}" + mem, "t.hcl:3:3:", []string{`pruner = "compactor-summary" must name a pruner plugin`}},
		{"compaction pruner exists", comp + "  pruner = \"trim\"\n}" + mem, "t.hcl:3:3:", []string{`pruner = "trim" names no bundled plugin`}},
		{"compaction block unique", comp + "}\ncompaction {\n  summarizer = \"compactor-summary\"\n}" + mem, "t.hcl:4:1:", []string{"compaction block is declared twice (first at t.hcl:1:1)"}},
		{"compaction takes no label", "compaction \"x\" {\n  summarizer = \"compactor-summary\"\n}" + mem, "t.hcl:1:12:", []string{"compaction block takes no label"}},
		{"threshold_ratio at most 1", comp + "  threshold_ratio = 1.5\n}" + mem, "t.hcl:3:3:", []string{"threshold_ratio = 1.5 must be in (0, 1]"}},
		{"threshold_ratio above 0", comp + "  threshold_ratio = 0\n}" + mem, "t.hcl:3:3:", []string{"threshold_ratio = 0 must be in (0, 1]"}},
		{"retain_ratio above 0", comp + "  retain_ratio = 0\n}" + mem, "t.hcl:3:3:", []string{"retain_ratio = 0 must be in (0, 1]"}},
		{"retain_ratio below threshold_ratio", comp + "  retain_ratio = 0.8\n}" + mem, "t.hcl:3:3:", []string{"retain_ratio (0.8) must be < threshold_ratio (0.8)"}},
		{"threshold_ratio above default retain_ratio", comp + "  threshold_ratio = 0.1\n}" + mem, "t.hcl:3:3:", []string{"retain_ratio (0.16) must be < threshold_ratio (0.1)"}},
		{"retain_ratio exclusive with retain_tokens", comp + "  retain_ratio = 0.1\n  retain_tokens = 100\n}" + mem, "t.hcl:4:3:", []string{"retain_tokens and retain_ratio are exclusive"}},
		{"retain_tokens non-negative", comp + "  retain_tokens = -1\n}" + mem, "t.hcl:3:3:", []string{"retain_tokens = -1 must be >= 0"}},
		{"summarization_provider needs model", comp + "  summarization_provider = \"deepseek\"\n}" + mem, "t.hcl:3:3:", []string{`summarization_provider = "deepseek" needs summarization_model too (both or neither)`}},
		{"summarization_model needs provider", comp + "  summarization_model = \"m\"\n}" + mem, "t.hcl:3:3:", []string{`summarization_model = "m" needs summarization_provider too`}},
		{"max_tokens at least 1", comp + "  max_tokens = 0\n}" + mem, "t.hcl:3:3:", []string{"max_tokens = 0 must be >= 1"}},
		{"compaction_retries non-negative", comp + "  compaction_retries = -1\n}" + mem, "t.hcl:3:3:", []string{"compaction_retries = -1 must be >= 0"}},
		{"max_overflow_retries non-negative", comp + "  max_overflow_retries = -1\n}" + mem, "t.hcl:3:3:", []string{"max_overflow_retries = -1 must be >= 0"}},
		{"prune_threshold_chars non-negative", comp + "  prune_threshold_chars = -1\n}" + mem, "t.hcl:3:3:", []string{"prune_threshold_chars = -1 must be >= 0"}},
		{"prune_head_chars non-negative", comp + "  prune_head_chars = -1\n}" + mem, "t.hcl:3:3:", []string{"prune_head_chars = -1 must be >= 0"}},
		{"prune_tail_chars non-negative", comp + "  prune_tail_chars = -5\n}" + mem, "t.hcl:3:3:", []string{"prune_tail_chars = -5 must be >= 0"}},
		{"prune head + marker + tail within threshold", comp + "  prune_threshold_chars = 5162\n}" + mem, "t.hcl:3:3:", []string{"prune_head_chars (4096) + marker (43) + prune_tail_chars (1024) must be <= prune_threshold_chars (5162)"}},
		{"spill_max_inline_bytes non-negative", comp + "  spill_max_inline_bytes = -1\n}" + mem, "t.hcl:3:3:", []string{"spill_max_inline_bytes = -1 must be >= 0"}},
		{"spill_exempt_tools names non-empty", comp + "  spill_exempt_tools = [\"read\", \"\"]\n}" + mem, "t.hcl:3:3:", []string{`spill_exempt_tools = ["read", ""] must not contain empty strings`}},
		{"spill_root not empty", comp + "  spill_root = \"\"\n}" + mem, "t.hcl:3:3:", []string{"spill_root", "must not be empty"}},

		// model_policy
		{"model_policy provider required", comp + "  model_policy {\n    model = \"m\"\n  }\n}" + mem, "t.hcl:3:3:", []string{"model_policy block needs provider"}},
		{"model_policy model required", policy + "  }\n}" + mem, "t.hcl:3:3:", []string{"model_policy block needs model"}},
		{"model_policy provider not empty", comp + "  model_policy {\n    provider = \"\"\n    model = \"m\"\n  }\n}" + mem, "t.hcl:4:5:", []string{"provider", "must not be empty"}},
		{"model_policy takes no label", comp + "  model_policy \"x\" {\n    provider = \"p\"\n    model = \"m\"\n  }\n}" + mem, "t.hcl:3:16:", []string{"model_policy block takes no label"}},
		{"model_policy threshold_ratio", policy + "    model = \"m\"\n    threshold_ratio = 2\n  }\n}" + mem, "t.hcl:6:5:", []string{"threshold_ratio = 2 must be in (0, 1]"}},
		{"model_policy retain_ratio", policy + "    model = \"m\"\n    retain_ratio = -0.5\n  }\n}" + mem, "t.hcl:6:5:", []string{"retain_ratio = -0.5 must be in (0, 1]"}},
		{"model_policy effective retain below threshold", policy + "    model = \"m\"\n    threshold_ratio = 0.1\n  }\n}" + mem, "t.hcl:6:5:", []string{"retain_ratio (0.16) must be < threshold_ratio (0.1) in model_policy for p/m"}},
		{"model_policy retain exclusive", policy + "    model = \"m\"\n    retain_ratio = 0.1\n    retain_tokens = 5\n  }\n}" + mem, "t.hcl:7:5:", []string{"retain_tokens and retain_ratio are exclusive"}},
		{"model_policy retain_tokens non-negative", policy + "    model = \"m\"\n    retain_tokens = -2\n  }\n}" + mem, "t.hcl:6:5:", []string{"retain_tokens = -2 must be >= 0"}},
		{"model_policy max_tokens", policy + "    model = \"m\"\n    max_tokens = 0\n  }\n}" + mem, "t.hcl:6:5:", []string{"max_tokens = 0 must be >= 1"}},
		{"model_policy unique", policy + "    model = \"m\"\n  }\n  model_policy {\n    provider = \"p\"\n    model = \"m\"\n  }\n}" + mem, "t.hcl:7:3:", []string{`model_policy for provider "p", model "m" is declared twice (first at t.hcl:3:3)`}},

		// plugin
		{"plugin needs one label", `plugin {}` + mem, "t.hcl:1:1:", []string{"plugin block needs exactly one label"}},
		{"plugin name syntax", `plugin "My.Plugin" {}` + mem, "t.hcl:1:8:", []string{`plugin "My.Plugin"`, "[a-z0-9][a-z0-9._-]{0,63}"}},
		{"plugin name length", `plugin "` + strings.Repeat("a", 65) + `" {}` + mem, "t.hcl:1:8:", []string{"[a-z0-9][a-z0-9._-]{0,63}"}},
		{"plugin without command is bundled", `plugin "mine" {}` + mem, "t.hcl:1:8:", []string{`plugin "mine" has no command and is not bundled`}},
		{"plugin unique", "plugin \"pruner\" {}\nplugin \"pruner\" {}" + mem, "t.hcl:2:8:", []string{`plugin "pruner" is declared twice (first at t.hcl:1:1)`}},
		{"plugin command not empty", "plugin \"x\" {\n  command = \"\"\n}" + mem, "t.hcl:2:3:", []string{"command", "must not be empty"}},
		{"plugin sha256 needs command", "plugin \"pruner\" {\n  sha256 = \"" + hex64 + "\"\n}" + mem, "t.hcl:2:3:", []string{"sha256 needs command"}},
		{"plugin sha256 lowercase hex", "plugin \"x\" {\n  command = \"/bin/x\"\n  sha256 = \"" + strings.ToUpper(hex64) + "\"\n}" + mem, "t.hcl:3:3:", []string{"must be 64 lowercase hex digits"}},
		{"plugin sha256 64 digits", "plugin \"x\" {\n  command = \"/bin/x\"\n  sha256 = \"abc\"\n}" + mem, "t.hcl:3:3:", []string{`sha256 = "abc" must be 64 lowercase hex digits`}},
		{"plugin args need command", "plugin \"pruner\" {\n  args = [\"-v\"]\n}" + mem, "t.hcl:2:3:", []string{"args needs command"}},
		{"plugin config block unique", "plugin \"pruner\" {\n  config {}\n  config {}\n}" + mem, "t.hcl:3:3:", []string{`config block is declared twice in plugin "pruner"`}},
		{"plugin config takes no label", "plugin \"pruner\" {\n  config \"x\" {}\n}" + mem, "t.hcl:2:10:", []string{"config block takes no label"}},

		// syntax
		{"syntax", "data_dir = \n" + mem, "t.hcl:1:12:", []string{"syntax error"}},
		{"syntax unclosed block", "compaction {\n", "t.hcl:1:", []string{"syntax error"}},
		{"key set once", "write_window = \"1s\"\nwrite_window = \"2s\"" + mem, "t.hcl:2:1:", []string{"syntax error", "write_window"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantErr(t, tt.src, tt.pos, tt.want...) })
	}
}

func TestUnknownKeys(t *testing.T) {
	tests := []struct {
		name, src, pos string
		want           []string
	}{
		{"top level", "data_dirr = \"x\"" + mem, "t.hcl:1:1:", []string{`unknown key "data_dirr" at top level`, "allowed keys: data_dir,"}},
		{"top level block", "storage {}" + mem, "t.hcl:1:1:", []string{`unknown block "storage" at top level`, "allowed blocks: persistence, compaction, plugin"}},
		{"jsonl", "persistence \"jsonl\" {\n  compresion = \"zstd\"\n}", "t.hcl:2:3:", []string{`unknown key "compresion" in persistence "jsonl"`, "allowed keys: root, compression, zstd_level"}},
		{"jsonl block", "persistence \"jsonl\" {\n  options {}\n}", "t.hcl:2:3:", []string{`unknown block "options" in persistence "jsonl"`}},
		{"sqlite", "persistence \"sqlite\" {\n  journal = \"wal\"\n}", "t.hcl:2:3:", []string{`unknown key "journal" in persistence "sqlite"`, "journal_mode"}},
		{"memory", "persistence \"memory\" {\n  size = 1\n}", "t.hcl:2:3:", []string{`unknown key "size" in persistence "memory"`, "no keys are allowed here"}},
		{"compaction", comp + "  treshold_ratio = 0.5\n}" + mem, "t.hcl:3:3:", []string{`unknown key "treshold_ratio" in compaction`, "threshold_ratio"}},
		{"compaction block", comp + "  policy {}\n}" + mem, "t.hcl:3:3:", []string{`unknown block "policy" in compaction`, "allowed blocks: model_policy"}},
		{"model_policy", policy + "    model = \"m\"\n    temperature = 1\n  }\n}" + mem, "t.hcl:6:5:", []string{`unknown key "temperature" in model_policy`}},
		{"plugin", "plugin \"x\" {\n  command = \"/bin/x\"\n  checksum = \"\"\n}" + mem, "t.hcl:3:3:", []string{`unknown key "checksum" in plugin "x"`, "allowed keys: command, args, sha256"}},
		{"key written as a block", "write_window {}" + mem, "t.hcl:1:1:", []string{"write_window is a key at top level, not a block"}},
		{"block written as a key", "compaction = {}" + mem, "t.hcl:1:1:", []string{"compaction is a block at top level, not a key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantErr(t, tt.src, tt.pos, tt.want...) })
	}
}

func TestTypeErrors(t *testing.T) {
	tests := []struct {
		name, src, pos string
		want           []string
	}{
		{"string", "data_dir = 5" + mem, "t.hcl:1:1:", []string{"data_dir = 5 must be a string"}},
		{"duration not a string", "write_window = 200" + mem, "t.hcl:1:1:", []string{`write_window = 200 must be a duration string such as "200ms"`}},
		{"duration syntax", `retry_max_backoff = "soon"` + mem, "t.hcl:1:1:", []string{`retry_max_backoff = "soon" must be a duration`}},
		{"integer not a string", `max_event_bytes = "16MiB"` + mem, "t.hcl:1:1:", []string{`max_event_bytes = "16MiB" must be a whole number`}},
		{"integer not fractional", "max_pending_bytes = 1.5" + mem, "t.hcl:1:1:", []string{"max_pending_bytes = 1.5 must be a whole number"}},
		{"integer in int64", "max_pending_bytes = 1e30" + mem, "t.hcl:1:1:", []string{"max_pending_bytes = 1e+30 must be a whole number within the int64 range"}},
		{"bool", `auto_mtls = "false"` + mem, "t.hcl:1:1:", []string{`auto_mtls = "false" must be true or false`}},
		{"bool in block", "persistence \"sqlite\" {\n  compress_data = 1\n}", "t.hcl:2:3:", []string{"compress_data = 1 must be true or false"}},
		{"compress_min_bytes below 64", "persistence \"sqlite\" {\n  compress_min_bytes = 63\n}", "t.hcl:2:3:", []string{"compress_min_bytes = 63 must be between 64 and 1048576 (bytes, 1 MiB)"}},
		{"compress_min_bytes above 1 MiB", "persistence \"sqlite\" {\n  compress_min_bytes = 1048577\n}", "t.hcl:2:3:", []string{"compress_min_bytes = 1048577 must be between 64 and 1048576 (bytes, 1 MiB)"}},
		{"ratio", comp + "  threshold_ratio = \"0.8\"\n}" + mem, "t.hcl:3:3:", []string{`threshold_ratio = "0.8" must be a number in (0, 1]`}},
		{"string list", comp + "  spill_exempt_tools = \"read\"\n}" + mem, "t.hcl:3:3:", []string{`spill_exempt_tools = "read" must be a list of strings`}},
		{"string list elements", comp + "  spill_exempt_tools = [\"read\", 1]\n}" + mem, "t.hcl:3:3:", []string{`spill_exempt_tools = ["read", 1] must be a list of strings`}},
		{"plugin name key", "compaction {\n  summarizer = true\n}" + mem, "t.hcl:2:3:", []string{"summarizer = true must be a string"}},
		{"args", "plugin \"x\" {\n  command = \"/x\"\n  args = \"-v\"\n}" + mem, "t.hcl:3:3:", []string{`args = "-v" must be a list of strings`}},
		{"object value", "data_dir = {a = 1}" + mem, "t.hcl:1:1:", []string{"data_dir = {a = 1} must be a string"}},
		{"unknown function", "data_dir = upper(\"x\")" + mem, "t.hcl:1:12:", []string{"data_dir: Call to unknown function"}},
		{"variables", "data_dir = home" + mem, "t.hcl:1:12:", []string{"data_dir: Variables not allowed"}},
		{"env arity", "data_dir = env()" + mem, "t.hcl:1:", []string{"data_dir: Not enough function arguments"}},
		{"env argument type", "data_dir = env([1])" + mem, "t.hcl:1:", []string{"data_dir: Invalid function argument"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantErr(t, tt.src, tt.pos, tt.want...) })
	}
}

func TestNullIsUnset(t *testing.T) {
	c := parse(t, "write_window = null\npersistence \"sqlite\" { busy_timeout = null }\n")
	if c.WriteWindow != config.DefaultWriteWindow || c.Persistence[0].SQLite.BusyTimeout != config.DefaultSQLiteBusyTimeout {
		t.Errorf("null did not leave the defaults: %+v %+v", c, c.Persistence[0].SQLite)
	}
	wantErr(t, "compaction {\n  summarizer = null\n}"+mem, "t.hcl:1:1:", "compaction block needs summarizer")
}

const envSet, envUnset = "LOGBOOK_CONFIG_TEST_SET", "LOGBOOK_CONFIG_TEST_UNSET"

func envSource() string {
	return `
data_dir = "/data/${env("` + envSet + `")}"
persistence "jsonl" { root = env("` + envSet + `") }
compaction {
  summarizer          = "compactor-summary"
  summarization_provider = env("` + envUnset + `")
  summarization_model    = env("` + envUnset + `")
}
plugin "compactor-summary" {
  config {
    base_url = env("` + envSet + `")
    api_key  = env("` + envUnset + `")
  }
}
`
}

func TestEnvSet(t *testing.T) {
	t.Setenv(envSet, "abc")
	t.Setenv(envUnset, "")
	os.Unsetenv(envUnset) // t.Setenv restores the original state afterwards
	c := parse(t, envSource())
	if c.DataDir != "/data/abc" {
		t.Errorf("DataDir = %q", c.DataDir)
	}
	if c.Persistence[0].JSONL.Root != "/data/abc/abc" {
		t.Errorf("jsonl root = %q", c.Persistence[0].JSONL.Root)
	}
	if got := string(c.Plugins[0].Config); got != `{"api_key":"","base_url":"abc"}` {
		t.Errorf("plugin config = %s", got)
	}
	if c.Compaction.SummarizationProvider != "" || c.Compaction.SummarizationModel != "" {
		t.Errorf("unset env must read as \"\": %+v", c.Compaction)
	}
}

func TestEnvUnset(t *testing.T) {
	for _, name := range []string{envSet, envUnset} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	// env() of an unset variable is "": jsonl root = "" is then refused.
	wantErr(t, envSource(), "t.hcl:3:23:", `root = "" must not be empty`)
	c := parse(t, `persistence "memory" {}
plugin "compactor-summary" {
  config { base_url = env("`+envSet+`") }
}`)
	if got := string(c.Plugins[0].Config); got != `{"base_url":""}` {
		t.Errorf("plugin config = %s", got)
	}
}

func TestOpaqueConfigJSON(t *testing.T) {
	c := parse(t, `
persistence "memory" {}
plugin "compactor-summary" {
  config {
    base_url  = "http://localhost:8080/v1?a=1&b=<2>"
    model     = "deepseek-chat"
    int       = 42
    big       = 12345678901234567890
    float     = 0.25
    huge      = 1e300
    negative  = -7
    on        = true
    nothing   = null
    list      = ["a", 1, false]
    empty     = []
    object    = { nested = { deep = [1, { x = "y" }] }, "quoted key" = 1 }
    sum       = 1 + 2
    text      = "v${1 + 1}"
    heredoc   = <<-EOT
      line one
      line two
    EOT
    tls {
      ca     = "/etc/ca.pem"
      verify = true
    }
    header { name = "a" }
    header { name = "b" }
    route "chat" "fast" { weight = 1 }
    route "chat" "slow" { weight = 2 }
    route "embed" "any" {}
  }
}
`)
	var got, want any
	if err := json.Unmarshal(c.Plugins[0].Config, &got); err != nil {
		t.Fatalf("Config is not JSON: %v\n%s", err, c.Plugins[0].Config)
	}
	wantJSON := `{
	  "base_url": "http://localhost:8080/v1?a=1&b=<2>",
	  "model": "deepseek-chat",
	  "int": 42, "big": 12345678901234567890, "float": 0.25, "huge": 1e300, "negative": -7,
	  "on": true, "nothing": null,
	  "list": ["a", 1, false], "empty": [],
	  "object": {"nested": {"deep": [1, {"x": "y"}]}, "quoted key": 1},
	  "sum": 3, "text": "v2", "heredoc": "line one\nline two\n",
	  "tls": {"ca": "/etc/ca.pem", "verify": true},
	  "header": [{"name": "a"}, {"name": "b"}],
	  "route": {"chat": {"fast": {"weight": 1}, "slow": {"weight": 2}}, "embed": {"any": {}}}
	}`
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %s\nwant %s", c.Plugins[0].Config, wantJSON)
	}
	// Exact text: integers in plain digits, sorted keys, no HTML escaping.
	for _, frag := range []string{`"big":12345678901234567890`, `"huge":1e+300`, `"base_url":"http://localhost:8080/v1?a=1&b=<2>"`, `"float":0.25`} {
		if !strings.Contains(string(c.Plugins[0].Config), frag) {
			t.Errorf("Config %s lacks %s", c.Plugins[0].Config, frag)
		}
	}
	// A plugin without a config block gets "{}".
	c = parse(t, `persistence "memory" {}`+"\n"+`plugin "pruner" {}`)
	if string(c.Plugins[0].Config) != "{}" {
		t.Errorf("no config block: %s", c.Plugins[0].Config)
	}
}

func TestThirdPartyPersistenceJSON(t *testing.T) {
	c := parse(t, `
persistence "jsonl" {}
persistence "pg.v2" {
  dsn      = "postgres://x"
  pool     = 4
  settings { statement_timeout = "5s" }
}
plugin "pg.v2" { command = "/opt/pg" }
`)
	if len(c.Persistence) != 2 || c.Persistence[0].Name != "jsonl" || c.Persistence[1].Name != "pg.v2" {
		t.Fatalf("persistence = %+v", c.Persistence)
	}
	p := c.Persistence[1]
	if p.JSONL != nil || p.SQLite != nil {
		t.Error("third-party backend has typed settings")
	}
	if got := string(p.Config); got != `{"dsn":"postgres://x","pool":4,"settings":{"statement_timeout":"5s"}}` {
		t.Errorf("Config = %s", got)
	}
	c = parse(t, "persistence \"ext\" {}\nplugin \"ext\" { command = \"/opt/ext\" }")
	if string(c.Persistence[0].Config) != "{}" {
		t.Errorf("empty body: %s", c.Persistence[0].Config)
	}
}

func TestOpaqueConfigErrors(t *testing.T) {
	pre := "plugin \"x\" {\n  command = \"/x\"\n  config {\n"
	post := "  }\n}" + mem
	wantErr(t, pre+"    a = 1\n    a {}\n"+post, "t.hcl:5:5:", "a is used both as a key (at t.hcl:4:5) and as a block")
	wantErr(t, pre+"    r \"k\" {}\n    r \"k\" {}\n"+post, "t.hcl:5:5:", `r "k" is declared twice (first at t.hcl:4:5)`)
	wantErr(t, pre+"    r \"k\" {}\n    r {}\n"+post, "t.hcl:5:5:", "r blocks must all have the same number of labels")
	wantErr(t, pre+"    n = 1/0\n"+post, "t.hcl:4:5:", "n = ", "cannot be passed to the plugin as JSON")
	wantErr(t, pre+"    n = nope()\n"+post, "t.hcl:4:", "n: Call to unknown function")
	// Third-party persistence bodies follow the same rules.
	wantErr(t, "persistence \"ext\" {\n  a = 1\n  a {}\n}\nplugin \"ext\" { command = \"/x\" }", "t.hcl:3:3:", "a is used both as a key")
}

func TestDuplicatePersistence(t *testing.T) {
	src := "persistence \"jsonl\" {}\npersistence \"sqlite\" {}\npersistence \"jsonl\" {\n  compression = \"none\"\n}\n"
	_, err := config.Parse([]byte(src), "dup.hcl")
	errs := flatten(t, err)
	if len(errs) != 1 {
		t.Fatalf("want one error, got %v", err)
	}
	if want := `dup.hcl:3:13: persistence "jsonl" is declared twice (first at dup.hcl:1:1)`; !strings.HasPrefix(errs[0].Detail, want) {
		t.Errorf("detail = %q, want prefix %q", errs[0].Detail, want)
	}
}

func TestSeveralErrorsJoinedInSourceOrder(t *testing.T) {
	src := "compaction {\n  summarizer = \"compactor-summary\"\n  threshold_ratio = 2\n}\nwrite_window = \"0s\"\nbogus = 1\npersistence \"jsonl\" {\n  compression = \"lz4\"\n}\n"
	_, err := config.Parse([]byte(src), "m.hcl")
	errs := flatten(t, err)
	var prefixes []string
	for _, e := range errs {
		prefixes = append(prefixes, e.Detail[:strings.Index(e.Detail, ": ")])
	}
	want := []string{"m.hcl:3:3", "m.hcl:5:1", "m.hcl:6:1", "m.hcl:8:3"}
	if !reflect.DeepEqual(prefixes, want) {
		t.Errorf("positions = %v, want %v\n%v", prefixes, want, err)
	}
	if !strings.HasPrefix(err.Error(), "config: CONFIG_INVALID: m.hcl:3:3: threshold_ratio = 2 must be in (0, 1]") {
		t.Errorf("Error() = %q", err.Error())
	}
	// A single problem is a bare *sdk.Error.
	_, err = config.Parse([]byte(`bogus = 1`+mem), "s.hcl")
	if _, ok := err.(*sdk.Error); !ok {
		t.Errorf("single problem: %T", err)
	}
}

func TestExamplesParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("examples", "*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "default.hcl", "headless.hcl")
	if len(files) < 4 {
		t.Fatalf("examples: %v", files)
	}
	for _, f := range files {
		if _, err := config.Load(f, config.Overrides{}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}

	t.Setenv("ARCHIVE_TOKEN", "tok")
	c, err := config.Load(filepath.Join("examples", "mirrored.hcl"), config.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range c.Persistence {
		names = append(names, p.Name)
	}
	if !reflect.DeepEqual(names, []string{"jsonl", "sqlite", "archive"}) {
		t.Errorf("persistence order = %v", names)
	}
	if c.Persistence[0].JSONL.Root != "/var/lib/logbook/sessions" || c.Persistence[1].SQLite.Path != "/var/lib/logbook/sessions.db" {
		t.Errorf("paths: %+v %+v", c.Persistence[0].JSONL, c.Persistence[1].SQLite)
	}
	if !strings.Contains(string(c.Persistence[2].Config), `"token":"tok"`) {
		t.Errorf("archive config = %s", c.Persistence[2].Config)
	}
	if p := c.Plugin("archive"); p == nil || p.Command == "" || len(p.SHA256) != 64 {
		t.Errorf("archive plugin = %+v", p)
	}
	if c.Compaction == nil || c.Compaction.Pruner != "pruner" || c.Compaction.Spill.MaxInlineBytes != 50000 || len(c.Compaction.ModelPolicies) != 1 {
		t.Errorf("compaction = %+v", c.Compaction)
	}

	t.Setenv("LOGBOOK_PG_DSN", "host=db dbname=logbook")
	t.Setenv("HOSTNAME", "web-1")
	c, err = config.Load(filepath.Join("examples", "postgres.hcl"), config.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	// The postgres block reaches the plugin as JSON, env() evaluated; the
	// plugin checks its keys when it is configured.
	if p := c.Persistence[0]; p.Name != "postgres" || string(p.Config) != `{"compress_data":true,"compress_min_bytes":256,"dsn":"host=db dbname=logbook","host_name":"web-1","max_conns":8,"schema":"logbook"}` {
		t.Errorf("postgres block = %s %s", p.Name, p.Config)
	}

	c, err = config.Load(filepath.Join("examples", "jsonl-zstd.hcl"), config.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if j := c.Persistence[0].JSONL; j == nil || j.Compression != "zstd" || c.DataDir != filepath.Join("examples", "logbook-data") {
		t.Errorf("jsonl-zstd: %+v %+v", c, j)
	}
}

func TestDefaultAndHeadlessDifferOnlyByCompaction(t *testing.T) {
	d, h := config.Default(config.Overrides{}), config.Headless(config.Overrides{})
	if d.Compaction == nil {
		t.Fatal("Default() has no compaction block")
	}
	if h.Compaction != nil {
		t.Fatal("Headless() has a compaction block")
	}
	if d.Compaction.Summarizer != "compactor-summary" || d.Compaction.Pruner != "pruner" {
		t.Errorf("default compaction = %+v", d.Compaction)
	}
	d.Compaction = nil
	if !reflect.DeepEqual(d, h) {
		t.Errorf("default without compaction\n%+v\n!= headless\n%+v", d, h)
	}
	// Each call parses afresh: changing one result changes no other.
	d.Persistence[0].Name = "changed"
	if config.Default(config.Overrides{}).Persistence[0].Name == "changed" {
		t.Error("Default() shares state between calls")
	}
}

func TestLoad(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.hcl")
	_, err := config.Load(missing, config.Overrides{})
	if !errors.Is(err, sdk.CodeConfigInvalid) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	var e *sdk.Error
	if !errors.As(err, &e) || !strings.HasPrefix(e.Detail, missing+": ") {
		t.Errorf("missing file detail: %v", err)
	}

	c, err := config.LoadOrDefault("", config.Overrides{})
	if err != nil || !reflect.DeepEqual(c, config.Default(config.Overrides{})) {
		t.Errorf("LoadOrDefault(\"\") = %+v, %v", c, err)
	}
	if _, err := config.LoadOrDefault(missing, config.Overrides{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadOrDefault(missing) = %v", err)
	}

	bad := filepath.Join(t.TempDir(), "bad.hcl")
	if err := os.WriteFile(bad, []byte("persistence \"memory\" {}\ncompaction {\n  summarizer = \"compactor-summary\"\n  threshold_ratio = 1.5\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = config.Load(bad, config.Overrides{})
	errs := flatten(t, err)
	if want := bad + ":4:3: threshold_ratio = 1.5 must be in (0, 1]"; len(errs) != 1 || errs[0].Detail != want {
		t.Errorf("got %v, want detail %q", err, want)
	}
}

// The embedded default stores zstd JSONL rooted at data_dir, and --data
// (Overrides.DataDir) moves data_dir and every path resolved against it.
func TestDefaultIsJSONLZstdAndDataDirOverride(t *testing.T) {
	d := config.Default(config.Overrides{})
	if j := d.Persistence[0].JSONL; len(d.Persistence) != 1 || j == nil || j.Compression != "zstd" || j.Root != "logbook-data" {
		t.Fatalf("default persistence = %+v", d.Persistence)
	}
	dir := t.TempDir()
	o := config.Default(config.Overrides{DataDir: dir})
	if o.DataDir != dir || o.Persistence[0].JSONL.Root != dir {
		t.Errorf("override: data_dir %q, root %q, want %q", o.DataDir, o.Persistence[0].JSONL.Root, dir)
	}
	if !strings.Contains(string(o.Persistence[0].Config), dir) {
		t.Errorf("the plugin's config block does not carry the overridden root: %s", o.Persistence[0].Config)
	}
	path := filepath.Join(t.TempDir(), "conf.hcl")
	if err := os.WriteFile(path, []byte("data_dir = \"elsewhere\"\npersistence \"sqlite\" { path = \"db/s.db\" }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(path, config.Overrides{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "db", "s.db"); c.DataDir != dir || c.Persistence[0].SQLite.Path != want {
		t.Errorf("file + override: data_dir %q, path %q, want %q", c.DataDir, c.Persistence[0].SQLite.Path, want)
	}
}

func TestRetentionBlock(t *testing.T) {
	c := parse(t, "retention {\n  max_age = \"90d\"\n}"+mem)
	if c.Retention == nil || c.Retention.MaxAge != 90*24*time.Hour || !c.Retention.KeepForkedParents {
		t.Fatalf("Retention = %+v; want max_age 90 days, keep_forked_parents true", c.Retention)
	}
	c = parse(t, "retention {\n  max_age = \"1d12h\"\n  keep_forked_parents = false\n}"+mem)
	if c.Retention.MaxAge != 36*time.Hour || c.Retention.KeepForkedParents {
		t.Fatalf("Retention = %+v; want 36h, keep_forked_parents false", c.Retention)
	}
	if c := parse(t, mem); c.Retention != nil {
		t.Fatalf("Retention without a block = %+v; want nil", c.Retention)
	}
}

func TestMirrorBlocks(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	c, err := config.Parse([]byte("mirror \"claude-code\" {}\n"+
		"mirror \"codex\" {\n  dir = \"rel/codex\"\n  poll = true\n  idle_release = \"30s\"\n}\n"+
		"mirror \"pi\" {\n  dir = \"~/pi-sessions\"\n}\n"+
		"mirror \"auto\" {\n  dir = \"/srv/sessions/\"\n}"+mem), "/etc/logbook/t.hcl")
	if err != nil {
		t.Fatal(err)
	}
	want := []config.Mirror{
		{Tool: "claude-code", Dir: filepath.Join(home, ".claude", "projects"), IdleRelease: time.Minute},
		{Tool: "codex", Dir: "/etc/logbook/rel/codex", Poll: true, IdleRelease: 30 * time.Second},
		{Tool: "pi", Dir: filepath.Join(home, "pi-sessions"), IdleRelease: time.Minute},
		{Tool: "auto", Dir: "/srv/sessions", IdleRelease: time.Minute},
	}
	if !reflect.DeepEqual(c.Mirrors, want) {
		t.Errorf("mirrors:\n got %+v\nwant %+v", c.Mirrors, want)
	}
	if c := parse(t, mem); c.Mirrors != nil {
		t.Errorf("no mirror block: got %+v", c.Mirrors)
	}
}

// Without a home directory a mirror needs an explicit dir, and "~/" means
// nothing.
func TestMirrorWithoutHome(t *testing.T) {
	t.Setenv("HOME", "")
	wantErr(t, "mirror \"codex\" {}"+mem, "t.hcl:1:1:", `mirror "codex" has no dir and there is no home directory`, "~/.codex/sessions")
	wantErr(t, "mirror \"codex\" {\n  dir = \"~/x\"\n}"+mem, "t.hcl:2:3:", `dir = "~/x" starts with ~ but there is no home directory`)
	if c := parse(t, "mirror \"codex\" {\n  dir = \"/x\"\n}"+mem); c.Mirrors[0].Dir != "/x" {
		t.Errorf("dir %q, want /x", c.Mirrors[0].Dir)
	}
}

func TestDefaultSourceDir(t *testing.T) {
	for tool, want := range map[string]string{
		"claude-code": "/h/.claude/projects",
		"codex":       "/h/.codex/sessions",
		"pi":          "/h/.pi/agent/sessions",
		"auto":        "",
		"cursor":      "",
	} {
		if got := config.DefaultSourceDir(tool, "/h"); got != want {
			t.Errorf("DefaultSourceDir(%q) = %q, want %q", tool, got, want)
		}
	}
}

func TestTelemetryBlock(t *testing.T) {
	c := parse(t, "telemetry {\n  otlp_endpoint = \"https://collector:4318\"\n  headers = { \"x-api-key\" = \"k\" }\n}"+mem)
	want := config.Telemetry{OTLPEndpoint: "https://collector:4318", Headers: map[string]string{"x-api-key": "k"}, Timeout: config.DefaultTelemetryTimeout, Queue: config.DefaultTelemetryQueue}
	if c.Telemetry == nil || c.Telemetry.OTLPEndpoint != want.OTLPEndpoint || c.Telemetry.Headers["x-api-key"] != "k" || c.Telemetry.Timeout != want.Timeout || c.Telemetry.Queue != want.Queue {
		t.Fatalf("Telemetry = %+v; want %+v", c.Telemetry, want)
	}
	if c := parse(t, mem); c.Telemetry != nil {
		t.Fatalf("Telemetry without a block = %+v; want nil", c.Telemetry)
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"90d": 90 * 24 * time.Hour, "36h": 36 * time.Hour, "1d12h": 36 * time.Hour, "2.5d": 60 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := config.ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "-1d", "1dd", "1d-1h", "x", "1e3d", "99999999999d"} {
		if got, err := config.ParseAge(in); err == nil {
			t.Errorf("ParseAge(%q) = %v; want an error", in, got)
		}
	}
}

// FuzzParseAge: ParseAge never panics, and what it accepts is a
// non-negative duration that a day-free spelling of it gives back.
func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"90d", "36h", "1d12h", "2.5d", "0.5d30m", "d", "-1d", "1e3d", "99999999999d", "1d-1h", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := config.ParseAge(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseAge(%q) = %v, negative", s, d)
		}
		if again, err := config.ParseAge(d.String()); err != nil || again != d {
			t.Fatalf("ParseAge(%q) = %v; ParseAge(%q) = %v, %v", s, d, d.String(), again, err)
		}
	})
}
