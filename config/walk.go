package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/seed-e5e476df/logbook/sdk"
)

var topSchema = schema{
	where: "at top level",
	attrs: []string{
		"data_dir", "write_window", "max_pending_bytes", "retry_max_backoff",
		"max_event_bytes", "rpc_max_bytes", "plugin_start_timeout", "auto_mtls",
		"max_pending_bytes_total", "write_backpressure_timeout", "max_live_sessions",
	},
	blocks: []string{"persistence", "compaction", "plugin", "retention", "serve", "mirror", "telemetry", "auth"},
}

// pluginInfo is what the other blocks need to know about a plugin block.
type pluginInfo struct {
	hasCommand bool
	config     *hcl.Range // the config block, when there is one
}

func (d *decoder) top(body *hclsyntax.Body) *Config {
	attrs, blocks := d.content(body, topSchema)
	fileStart := hcl.Range{Filename: d.filename, Start: hcl.InitialPos, End: hcl.InitialPos}
	c := &Config{
		WriteWindow:        DefaultWriteWindow,
		MaxPendingBytes:    DefaultMaxPendingBytes,
		RetryMaxBackoff:    DefaultRetryMaxBackoff,
		MaxEventBytes:      sdk.DefaultMaxEventBytes,
		RPCMaxBytes:        sdk.DefaultRPCMaxBytes,
		PluginStartTimeout: DefaultPluginStartTimeout,
		AutoMTLS:           true,

		MaxPendingBytesTotal:     DefaultMaxPendingBytesTotal,
		WriteBackpressureTimeout: DefaultWriteBackpressureTimeout,
		MaxLiveSessions:          DefaultMaxLiveSessions,
		Serve:                    Serve{IdleRelease: DefaultIdleRelease},
	}

	dataDir := DefaultDataDir
	d.nonEmpty(attrs["data_dir"], &dataDir, "")
	if !filepath.IsAbs(dataDir) {
		dataDir = filepath.Join(d.baseDir, dataDir)
	}
	if d.dataDir != "" { // the override is relative to the working directory
		dataDir = d.dataDir
	}
	c.DataDir = filepath.Clean(dataDir)

	ww := d.duration(attrs["write_window"], &c.WriteWindow, minWriteWindow, maxWriteWindow)
	rb := d.duration(attrs["retry_max_backoff"], &c.RetryMaxBackoff, 0, 0)
	me := d.intRange(attrs["max_event_bytes"], &c.MaxEventBytes, sdk.MinMaxEventBytes, sdk.MaxMaxEventBytes, "1024 (1 KiB) and 1073741824 (1 GiB)")
	mp := d.intMin(attrs["max_pending_bytes"], &c.MaxPendingBytes, 0)
	rpc := d.intRange(attrs["rpc_max_bytes"], &c.RPCMaxBytes, 0, sdk.MaxRPCMaxBytes, "0 and 2147483647 (2 GiB - 1)")
	d.duration(attrs["plugin_start_timeout"], &c.PluginStartTimeout, time.Nanosecond, 0)
	d.boolean(attrs["auto_mtls"], &c.AutoMTLS)
	mt := d.intMin(attrs["max_pending_bytes_total"], &c.MaxPendingBytesTotal, 0)
	d.duration(attrs["write_backpressure_timeout"], &c.WriteBackpressureTimeout, time.Nanosecond, 0)
	d.intMin(attrs["max_live_sessions"], &c.MaxLiveSessions, 1)

	if mp != bad && mt != bad && c.MaxPendingBytesTotal < c.MaxPendingBytes {
		d.errorf(first(attrs, fileStart, "max_pending_bytes_total", "max_pending_bytes"),
			"max_pending_bytes_total (%d) must be >= max_pending_bytes (%d)", c.MaxPendingBytesTotal, c.MaxPendingBytes)
	}

	if me != bad && mp != bad && c.MaxPendingBytes < c.MaxEventBytes {
		d.errorf(first(attrs, fileStart, "max_pending_bytes", "max_event_bytes"),
			"max_pending_bytes (%d) must be >= max_event_bytes (%d)", c.MaxPendingBytes, c.MaxEventBytes)
	}
	if ww != bad && rb != bad && c.RetryMaxBackoff < c.WriteWindow {
		d.errorf(first(attrs, fileStart, "retry_max_backoff", "write_window"),
			"retry_max_backoff (%s) must be >= write_window (%s)", c.RetryMaxBackoff, c.WriteWindow)
	}
	if me != bad && rpc != bad && c.RPCMaxBytes < int64(sdk.MinRPCMaxBytes(int(c.MaxEventBytes))) {
		d.errorf(first(attrs, fileStart, "rpc_max_bytes", "max_event_bytes"),
			"rpc_max_bytes (%d) must be >= max_event_bytes + 1 MiB (%d)", c.RPCMaxBytes, sdk.MinRPCMaxBytes(int(c.MaxEventBytes)))
	}

	var persist, compact, plugs, retain, serve, mirror, telemetry, auth []*hclsyntax.Block
	for _, b := range blocks {
		switch b.Type {
		case "persistence":
			persist = append(persist, b)
		case "compaction":
			compact = append(compact, b)
		case "plugin":
			plugs = append(plugs, b)
		case "retention":
			retain = append(retain, b)
		case "serve":
			serve = append(serve, b)
		case "mirror":
			mirror = append(mirror, b)
		case "telemetry":
			telemetry = append(telemetry, b)
		case "auth":
			auth = append(auth, b)
		}
	}
	plugins := d.plugins(c, plugs)
	d.persistence(c, persist, plugins, fileStart)
	d.compaction(c, compact, plugins)
	d.retention(c, retain)
	d.serve(c, serve)
	d.mirrors(c, mirror)
	d.telemetry(c, telemetry)
	d.auth(c, auth)
	return c
}

// label checks that b has exactly one label, a valid plugin name, and
// returns it.
func (d *decoder) label(b *hclsyntax.Block) (string, bool) {
	if len(b.Labels) != 1 {
		d.errorf(b.TypeRange, `%s block needs exactly one label, the plugin name: %s "name" { ... }`, b.Type, b.Type)
		return "", false
	}
	name := b.Labels[0]
	if !pluginNameRE.MatchString(name) {
		d.errorf(b.LabelRanges[0], `%s %q: plugin names must match [a-z0-9][a-z0-9._-]{0,63}`, b.Type, name)
		return "", false
	}
	return name, true
}

func (d *decoder) noLabels(b *hclsyntax.Block) {
	if len(b.Labels) != 0 {
		d.errorf(b.LabelRanges[0], "%s block takes no label: write %s { ... }", b.Type, b.Type)
	}
}

func (d *decoder) plugins(c *Config, blocks []*hclsyntax.Block) map[string]*pluginInfo {
	infos := make(map[string]*pluginInfo)
	seen := make(map[string]hcl.Range)
	for _, b := range blocks {
		name, ok := d.label(b)
		if !ok {
			continue
		}
		if at, dup := seen[name]; dup {
			d.errorf(b.LabelRanges[0], "plugin %q is declared twice (first at %s)", name, d.pos(at))
			continue
		}
		seen[name] = b.TypeRange
		info := &pluginInfo{}
		infos[name] = info
		where := fmt.Sprintf("in plugin %q", name)
		attrs, inner := d.content(b.Body, schema{where: where, attrs: []string{"command", "args", "sha256"}, blocks: []string{"config"}})
		p := Plugin{Name: name, Config: json.RawMessage("{}")}

		cmdSt := d.nonEmpty(attrs["command"], &p.Command, "; omit command for a bundled plugin")
		if cmdSt == set {
			info.hasCommand = true
			if !filepath.IsAbs(p.Command) && strings.ContainsRune(p.Command, filepath.Separator) {
				p.Command = filepath.Join(d.baseDir, p.Command)
			}
		} else if cmdSt == unset {
			if _, ok := LookupBundled(name); !ok {
				d.errorf(b.LabelRanges[0], `plugin %q has no command and is not bundled (bundled: %s); set command = "/path/to/plugin"`, name, bundledNames())
			}
		}
		if d.strings(attrs["args"], &p.Args) == set && cmdSt == unset {
			d.errorf(attrs["args"].SrcRange, "args needs command: a bundled plugin takes no arguments")
		}
		var sum string
		if d.str(attrs["sha256"], &sum) == set {
			switch {
			case cmdSt == unset:
				d.errorf(attrs["sha256"].SrcRange, "sha256 needs command: a bundled plugin is part of the logbook binary")
			case !sha256RE.MatchString(sum):
				d.errorf(attrs["sha256"].SrcRange, "sha256 = %q must be 64 lowercase hex digits", sum)
			default:
				p.SHA256 = sum
			}
		}
		for i, cb := range inner {
			if i > 0 {
				d.errorf(cb.TypeRange, "config block is declared twice in plugin %q (first at %s)", name, d.pos(inner[0].TypeRange))
				continue
			}
			d.noLabels(cb)
			r := cb.TypeRange
			info.config = &r
			if js, ok := d.opaque(cb.Body); ok {
				p.Config = js
			}
		}
		c.Plugins = append(c.Plugins, p)
	}
	return infos
}

func (d *decoder) persistence(c *Config, blocks []*hclsyntax.Block, plugins map[string]*pluginInfo, fileStart hcl.Range) {
	if len(blocks) == 0 {
		d.errorf(fileStart, `at least one persistence block is required, e.g. persistence "jsonl" {}; the first is the primary`)
		return
	}
	seen := make(map[string]hcl.Range)
	for _, b := range blocks {
		name, ok := d.label(b)
		if !ok {
			continue
		}
		if at, dup := seen[name]; dup {
			d.errorf(b.LabelRanges[0], "persistence %q is declared twice (first at %s); each backend may appear once", name, d.pos(at))
			continue
		}
		seen[name] = b.TypeRange
		info := plugins[name]
		if info != nil && info.config != nil {
			d.errorf(*info.config, "plugin %q is a persistence backend: put its settings in the persistence %q block, not in a config block", name, name)
		}
		where := fmt.Sprintf("in persistence %q", name)
		p := Persistence{Name: name}
		switch name {
		case "jsonl":
			p.JSONL = d.jsonl(c, b.Body, where)
			p.Config = p.JSONL.json()
		case "sqlite":
			p.SQLite = d.sqlite(c, b.Body, where)
			p.Config = p.SQLite.json()
		case "memory":
			d.content(b.Body, schema{where: where})
			p.Config = json.RawMessage("{}")
		case "postgres":
			// The plugin checks its own keys (CONFIG_INVALID naming the
			// key when it is configured), so env() can supply the DSN.
			js, ok := d.opaque(b.Body)
			if !ok {
				continue
			}
			p.Config = js
		default:
			kind, isBundled := LookupBundled(name)
			switch {
			case isBundled && (info == nil || !info.hasCommand):
				d.errorf(b.LabelRanges[0], "persistence %q: %s is the bundled %s plugin, not a persistence backend", name, name, kind)
				continue
			case info == nil:
				d.errorf(b.LabelRanges[0], `persistence %q names no bundled backend (jsonl, sqlite, memory, postgres) and no plugin %q block; add plugin %q { command = "/path/to/plugin" }`, name, name, name)
				continue
			}
			js, ok := d.opaque(b.Body)
			if !ok {
				continue
			}
			p.Config = js
		}
		c.Persistence = append(c.Persistence, p)
	}
}

func (d *decoder) jsonl(c *Config, body *hclsyntax.Body, where string) *JSONL {
	attrs, _ := d.content(body, schema{where: where, attrs: []string{"root", "compression", "zstd_level"}})
	j := &JSONL{Compression: DefaultJSONLCompression, ZstdLevel: DefaultJSONLZstdLevel}
	var root string
	d.nonEmpty(attrs["root"], &root, " (omit root to use data_dir)")
	j.Root = c.ResolvePath(root)
	d.enum(attrs["compression"], &j.Compression, "zstd", "none")
	lvl := d.enum(attrs["zstd_level"], &j.ZstdLevel, "fastest", "default", "better", "best")
	if j.Compression == "none" {
		if lvl == set {
			d.errorf(attrs["zstd_level"].SrcRange, `zstd_level needs compression = "zstd" (compression is "none")`)
		}
		j.ZstdLevel = ""
	}
	return j
}

func (j *JSONL) json() json.RawMessage {
	m := map[string]any{"root": j.Root, "compression": j.Compression}
	if j.ZstdLevel != "" {
		m["zstd_level"] = j.ZstdLevel
	}
	return mustJSON(m)
}

func (d *decoder) sqlite(c *Config, body *hclsyntax.Body, where string) *SQLite {
	attrs, _ := d.content(body, schema{where: where, attrs: []string{"path", "journal_mode", "busy_timeout", "compress_data", "compress_min_bytes"}})
	s := &SQLite{Path: DefaultSQLitePath, JournalMode: DefaultSQLiteJournalMode, BusyTimeout: DefaultSQLiteBusyTimeout, CompressData: true, CompressMinBytes: DefaultSQLiteCompressMinBytes}
	d.nonEmpty(attrs["path"], &s.Path, ` (use ":memory:" for an in-memory database)`)
	if s.Path != ":memory:" {
		s.Path = c.ResolvePath(s.Path)
	}
	d.enum(attrs["journal_mode"], &s.JournalMode, "wal", "delete", "truncate", "persist")
	ms := s.BusyTimeout.Milliseconds()
	if d.intRange(attrs["busy_timeout"], &ms, 0, maxBusyTimeoutMS, "0 and 2147483647 (milliseconds)") == set {
		s.BusyTimeout = time.Duration(ms) * time.Millisecond
	}
	d.boolean(attrs["compress_data"], &s.CompressData)
	n := int64(s.CompressMinBytes)
	if d.intRange(attrs["compress_min_bytes"], &n, 64, 1<<20, "64 and 1048576 (bytes, 1 MiB)") == set {
		s.CompressMinBytes = int(n)
	}
	return s
}

func (s *SQLite) json() json.RawMessage {
	return mustJSON(map[string]any{
		"path":               s.Path,
		"journal_mode":       s.JournalMode,
		"busy_timeout":       s.BusyTimeout.Milliseconds(),
		"compress_data":      s.CompressData,
		"compress_min_bytes": s.CompressMinBytes,
	})
}

var compactionSchema = schema{
	where: "in compaction",
	attrs: []string{
		"summarizer", "pruner", "auto", "threshold_ratio", "retain_ratio", "retain_tokens",
		"summarization_provider", "summarization_model", "max_tokens", "compaction_retries",
		"max_overflow_retries", "prune_threshold_chars", "prune_head_chars", "prune_tail_chars",
		"spill_max_inline_bytes", "spill_exempt_tools", "spill_root",
	},
	blocks: []string{"model_policy"},
}

func (d *decoder) compaction(c *Config, blocks []*hclsyntax.Block, plugins map[string]*pluginInfo) {
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks[1:] {
		d.errorf(b.TypeRange, "compaction block is declared twice (first at %s)", d.pos(blocks[0].TypeRange))
	}
	b := blocks[0]
	d.noLabels(b)
	attrs, policies := d.content(b.Body, compactionSchema)
	k := &Compaction{
		Auto:               true,
		ThresholdRatio:     DefaultThresholdRatio,
		RetainRatio:        DefaultRetainRatio,
		MaxTokens:          DefaultMaxTokens,
		CompactionRetries:  DefaultCompactionRetries,
		MaxOverflowRetries: DefaultMaxOverflowRetries,
		Prune: PruneBudget{
			ThresholdChars: DefaultPruneThresholdChars,
			HeadChars:      DefaultPruneHeadChars,
			TailChars:      DefaultPruneTailChars,
		},
		Spill: Spill{ExemptTools: []string{"read"}},
	}

	switch st := d.str(attrs["summarizer"], &k.Summarizer); {
	case st == unset:
		d.errorf(b.TypeRange, `compaction block needs summarizer, a summarizer plugin name such as "compactor-summary"`)
	case st == set:
		d.pluginRef(attrs["summarizer"], k.Summarizer, "summarizer", plugins)
	}
	if d.str(attrs["pruner"], &k.Pruner) == set && k.Pruner != "" {
		d.pluginRef(attrs["pruner"], k.Pruner, "pruner", plugins)
	}
	d.boolean(attrs["auto"], &k.Auto)

	th := d.ratio(attrs["threshold_ratio"], &k.ThresholdRatio)
	rr := d.ratio(attrs["retain_ratio"], &k.RetainRatio)
	var tokens int64
	rt := d.intMin(attrs["retain_tokens"], &tokens, 0)
	switch {
	case attrs["retain_ratio"] != nil && attrs["retain_tokens"] != nil && rr != unset && rt != unset:
		d.errorf(attrs["retain_tokens"].SrcRange, "retain_tokens and retain_ratio are exclusive: set one of them")
		rr = bad
	case rt == set:
		k.RetainTokens, k.RetainRatio = &tokens, 0
	case th != bad && rr != bad && k.RetainRatio >= k.ThresholdRatio:
		d.errorf(first(attrs, b.TypeRange, "retain_ratio", "threshold_ratio"),
			"retain_ratio (%g) must be < threshold_ratio (%g)", k.RetainRatio, k.ThresholdRatio)
		rr = bad
	}
	d.bothOrNeither(attrs, "summarization_provider", &k.SummarizationProvider, "summarization_model", &k.SummarizationModel)
	mt := d.intMin(attrs["max_tokens"], &k.MaxTokens, 1)
	retries, overflow := int64(k.CompactionRetries), int64(k.MaxOverflowRetries)
	if d.intMin(attrs["compaction_retries"], &retries, 0) == set {
		k.CompactionRetries = int(retries)
	}
	if d.intMin(attrs["max_overflow_retries"], &overflow, 0) == set {
		k.MaxOverflowRetries = int(overflow)
	}

	pb := &k.Prune
	s1 := d.intMin(attrs["prune_threshold_chars"], &pb.ThresholdChars, 0)
	s2 := d.intMin(attrs["prune_head_chars"], &pb.HeadChars, 0)
	s3 := d.intMin(attrs["prune_tail_chars"], &pb.TailChars, 0)
	if s1 != bad && s2 != bad && s3 != bad && pb.HeadChars+PruneMarkerCodePoints+pb.TailChars > pb.ThresholdChars {
		d.errorf(first(attrs, b.TypeRange, "prune_head_chars", "prune_tail_chars", "prune_threshold_chars"),
			"prune_head_chars (%d) + marker (%d) + prune_tail_chars (%d) must be <= prune_threshold_chars (%d)",
			pb.HeadChars, PruneMarkerCodePoints, pb.TailChars, pb.ThresholdChars)
	}

	d.intMin(attrs["spill_max_inline_bytes"], &k.Spill.MaxInlineBytes, 0)
	d.strings(attrs["spill_exempt_tools"], &k.Spill.ExemptTools)
	var spillRoot = DefaultSpillRoot
	d.nonEmpty(attrs["spill_root"], &spillRoot, " (omit spill_root to use data_dir/spill)")
	k.Spill.Root = c.ResolvePath(spillRoot)

	blockOK := th != bad && rr != bad && mt != bad
	seen := make(map[[2]string]hcl.Range)
	for _, pb := range policies {
		if mp, ok := d.modelPolicy(k, pb, blockOK); ok {
			key := [2]string{mp.Provider, mp.Model}
			if at, dup := seen[key]; dup {
				d.errorf(pb.TypeRange, "model_policy for provider %q, model %q is declared twice (first at %s)", mp.Provider, mp.Model, d.pos(at))
				continue
			}
			seen[key] = pb.TypeRange
			k.ModelPolicies = append(k.ModelPolicies, mp)
		}
	}
	c.Compaction = k
}

// bothOrNeither reads two strings that must be set together.
func (d *decoder) bothOrNeither(attrs map[string]*hclsyntax.Attribute, ka string, a *string, kb string, b *string) {
	sa, sb := d.str(attrs[ka], a), d.str(attrs[kb], b)
	if sa == bad || sb == bad {
		return
	}
	switch {
	case *a != "" && *b == "":
		d.errorf(attrs[ka].SrcRange, "%s = %q needs %s too (both or neither)", ka, *a, kb)
	case *a == "" && *b != "":
		d.errorf(attrs[kb].SrcRange, "%s = %q needs %s too (both or neither)", kb, *b, ka)
	}
}

// pluginRef checks that a compaction key names a plugin of the given kind:
// a bundled one of that kind, or one with a plugin block.
func (d *decoder) pluginRef(a *hclsyntax.Attribute, name, kind string, plugins map[string]*pluginInfo) {
	if !pluginNameRE.MatchString(name) {
		d.errorf(a.SrcRange, "%s = %q must be a plugin name matching [a-z0-9][a-z0-9._-]{0,63}", a.Name, name)
		return
	}
	info := plugins[name]
	if info != nil && info.hasCommand {
		return // a third-party binary: its kinds are known only after the handshake
	}
	if k, ok := LookupBundled(name); ok {
		if string(k) != kind {
			d.errorf(a.SrcRange, "%s = %q must name a %s plugin; %s is the bundled %s plugin", a.Name, name, kind, name, k)
		}
		return
	}
	if info == nil {
		d.errorf(a.SrcRange, `%s = %q names no bundled plugin and no plugin %q block; add plugin %q { command = "/path/to/plugin" }`, a.Name, name, name, name)
	}
	// info != nil without a command: the plugin block already reported it.
}

func (d *decoder) modelPolicy(k *Compaction, b *hclsyntax.Block, blockOK bool) (ModelPolicy, bool) {
	d.noLabels(b)
	attrs, _ := d.content(b.Body, schema{
		where: "in model_policy",
		attrs: []string{"provider", "model", "threshold_ratio", "retain_ratio", "retain_tokens", "max_tokens"},
	})
	mp := ModelPolicy{
		ThresholdRatio: k.ThresholdRatio,
		RetainRatio:    k.RetainRatio,
		RetainTokens:   k.RetainTokens,
		MaxTokens:      k.MaxTokens,
	}
	ok := true
	for _, key := range []string{"provider", "model"} {
		dst := &mp.Provider
		if key == "model" {
			dst = &mp.Model
		}
		switch d.nonEmpty(attrs[key], dst, "") {
		case unset:
			d.errorf(b.TypeRange, "model_policy block needs %s (provider and model are both required)", key)
			ok = false
		case bad:
			ok = false
		}
	}
	th := d.ratio(attrs["threshold_ratio"], &mp.ThresholdRatio)
	var ratio float64
	rr := d.ratio(attrs["retain_ratio"], &ratio)
	var tokens int64
	rt := d.intMin(attrs["retain_tokens"], &tokens, 0)
	mt := d.intMin(attrs["max_tokens"], &mp.MaxTokens, 1)
	switch {
	case attrs["retain_ratio"] != nil && attrs["retain_tokens"] != nil && rr != unset && rt != unset:
		d.errorf(attrs["retain_tokens"].SrcRange, "retain_tokens and retain_ratio are exclusive: set one of them")
		ok = false
	case rr == set:
		mp.RetainRatio, mp.RetainTokens = ratio, nil
	case rt == set:
		mp.RetainRatio, mp.RetainTokens = 0, &tokens
	}
	if th == bad || rr == bad || rt == bad || mt == bad {
		ok = false
	}
	// Check the effective retain ratio against the effective threshold when
	// the policy changes either; the block's own pair was checked already.
	if ok && (blockOK || rr == set && th == set) && mp.RetainTokens == nil && (rr == set || th == set) && mp.RetainRatio >= mp.ThresholdRatio {
		d.errorf(first(attrs, b.TypeRange, "retain_ratio", "threshold_ratio"),
			"retain_ratio (%g) must be < threshold_ratio (%g) in model_policy for %s/%s", mp.RetainRatio, mp.ThresholdRatio, mp.Provider, mp.Model)
		ok = false
	}
	if k.RetainTokens != nil && mp.RetainTokens == k.RetainTokens {
		t := *k.RetainTokens // a copy, so policies never share the block's pointer
		mp.RetainTokens = &t
	}
	return mp, ok
}
