package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// Name is the plugin's name and what Describe reports.
const Name = "jsonl"

// The compression modes of docs/storage.md.
const (
	CompressionZstd = "zstd"
	CompressionNone = "none"
)

// Config is the backend's configuration: the `config` body of its plugin
// block (docs/storage.md), which the host passes to Configure as a JSON object
// with the HCL snake_case keys.
type Config struct {
	// Root is the directory that holds one directory per session. Required.
	// It is created (0700) at the first materialization; an existing root
	// must be a readable directory. A relative root is resolved against the
	// working directory when the backend is made or configured.
	Root string `json:"root"`
	// Compression is "zstd" or "none". Default "zstd".
	Compression string `json:"compression,omitempty"`
	// ZstdLevel is the zstd encoder level: "fastest", "default", "better"
	// or "best" (klauspost/compress SpeedFastest … SpeedBestCompression).
	// Default "default" (SpeedDefault). Only with compression "zstd".
	ZstdLevel string `json:"zstd_level,omitempty"`
}

// ConfigSchema is the JSON Schema of Config that GetInfo reports.
const ConfigSchema = `{"type":"object","additionalProperties":false,"required":["root"],"properties":{` +
	`"root":{"type":"string","minLength":1,"description":"directory holding one directory per session; created 0700 when missing"},` +
	`"compression":{"enum":["zstd","none"],"default":"zstd"},` +
	`"zstd_level":{"enum":["fastest","default","better","best"],"default":"default","description":"only with compression zstd"}}}`

var zstdLevels = map[string]zstd.EncoderLevel{
	"fastest": zstd.SpeedFastest,
	"default": zstd.SpeedDefault,
	"better":  zstd.SpeedBetterCompression,
	"best":    zstd.SpeedBestCompression,
}

// ParseConfig decodes a config object: unknown keys, a missing root and
// values outside the allowed sets are CONFIG_INVALID naming the key. The
// result has its defaults filled in and an absolute root.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Config{}, configInvalid("the jsonl config must be a JSON object; got %s", clipText(trimmed))
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, configInvalid("the jsonl config does not decode (allowed keys: root, compression, zstd_level): %v", err)
	}
	if dec.More() {
		return Config{}, configInvalid("the jsonl config has data after its object")
	}
	return c.normalize()
}

// normalize checks c and fills in its defaults.
func (c Config) normalize() (Config, error) {
	if c.Root == "" {
		return Config{}, configInvalid(`the jsonl config needs root, the directory for the sessions (root = "/var/lib/logbook")`)
	}
	abs, err := filepath.Abs(c.Root)
	if err != nil {
		return Config{}, configInvalid("root %s cannot be made absolute: %v", strconv.Quote(c.Root), err)
	}
	c.Root = abs
	switch c.Compression {
	case "":
		c.Compression = CompressionZstd
	case CompressionZstd, CompressionNone:
	default:
		return Config{}, configInvalid(`compression = %s must be one of "zstd", "none"`, strconv.Quote(c.Compression))
	}
	if c.ZstdLevel != "" && c.Compression != CompressionZstd {
		return Config{}, configInvalid(`zstd_level needs compression = "zstd"; compression is %s`, strconv.Quote(c.Compression))
	}
	if c.Compression == CompressionZstd {
		if c.ZstdLevel == "" {
			c.ZstdLevel = "default"
		}
		if _, ok := zstdLevels[c.ZstdLevel]; !ok {
			return Config{}, configInvalid(`zstd_level = %s must be one of "fastest", "default", "better", "best"`, strconv.Quote(c.ZstdLevel))
		}
	}
	return c, nil
}

// checkRoot requires an existing root to be a readable directory.
func checkRoot(fsys vfs.FS, root string) error {
	fi, err := fsys.Stat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // created at the first materialization
	}
	if err != nil {
		return configInvalid("root %s: %v", strconv.Quote(root), err)
	}
	if !fi.IsDir() {
		return configInvalid("root %s exists and is not a directory", strconv.Quote(root))
	}
	if _, err := fsys.ReadDir(root); err != nil {
		return configInvalid("root %s is not a readable directory: %v", strconv.Quote(root), err)
	}
	return nil
}

// Configure implements sdk.Configurable: it applies the plugin block's
// config (see ParseConfig). The plugin host calls it once, before any other
// call; a backend made by New may be reconfigured only while none of its
// tenant views has an open handle. Every view sees the new configuration.
func (b *Backend) Configure(ctx context.Context, config []byte) error {
	if err := handles.Ended(ctx, op, "configure"); err != nil {
		return err
	}
	c, err := ParseConfig(config)
	if err != nil {
		return err
	}
	if err := checkRoot(b.fs, c.Root); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.base.handles.Len()
	for _, v := range b.views {
		n += v.handles.Len()
	}
	if n > 0 {
		return configInvalid("the jsonl backend has %d open handles; it can be configured only before use", n)
	}
	b.cfg = c
	b.configured = true
	for _, v := range b.views {
		v.synced.Store(false) // another root
	}
	b.enc = nil // made for the new level on first use
	return nil
}

// ServeConfig is what a jsonl plugin process serves: Info (name "jsonl",
// kind persistence, the config schema, the capabilities
// sdk.CapabilityCopyPrefix, sdk.CapabilityCheckpoint, sdk.CapabilityWatch,
// sdk.CapabilityReadFrames, sdk.CapabilityDelete, sdk.CapabilityImport and
// sdk.CapabilityTenants) and one unconfigured Backend on the OS file
// system as both the Persistence and the Configurable. Both
// cmd/logbook (`logbook plugin jsonl`) and cmd/logbook-jsonl serve it.
func ServeConfig(version string) pluginrpc.ServeConfig {
	b := newBackend(options{fs: vfs.OS()})
	return pluginrpc.ServeConfig{
		Info: sdk.Info{
			Name:         Name,
			Version:      version,
			Kinds:        []sdk.Kind{sdk.KindPersistence},
			ConfigSchema: ConfigSchema,
			Capabilities: []string{sdk.CapabilityCopyPrefix, sdk.CapabilityCheckpoint, sdk.CapabilityWatch, sdk.CapabilityReadFrames, sdk.CapabilityDelete, sdk.CapabilityImport, sdk.CapabilityTenants},
		},
		Persistence:  b,
		Configurable: b,
	}
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
