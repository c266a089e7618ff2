package sqlite

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// MemoryPath is the Config.Path of a private in-memory database (tests).
const MemoryPath = ":memory:"

// Config configures a Backend (docs/storage.md). Start from DefaultConfig: the
// zero value is not valid.
type Config struct {
	// Path is the database file, or MemoryPath (":memory:") for a private
	// in-memory database that lives as long as the Backend and its Peers.
	// A relative path is taken against the working directory. Required.
	Path string
	// JournalMode is "wal" (the default), "delete", "truncate" or
	// "persist". An in-memory database always uses "memory".
	JournalMode string
	// BusyTimeout is how long a statement waits for a lock that another
	// connection (another process) holds before the call fails with
	// BACKEND_BUSY; 0 … 2147483647 ms, whole milliseconds. Default 5 s.
	BusyTimeout time.Duration
	// CompressData stores the data member of an event of CompressMinBytes
	// or more as a zstd frame (level 3, with checksum) when that is
	// smaller. Default true. It affects only what this Backend writes;
	// every Backend reads both forms.
	CompressData bool
	// CompressMinBytes is the size in bytes from which CompressData
	// compresses a data member: MinCompressMinBytes … MaxCompressMinBytes,
	// default DefaultCompressMinBytes. Like CompressData it affects only
	// what this Backend writes.
	CompressMinBytes int
}

// The defaults of docs/operations.md, docs/storage.md.
const (
	DefaultJournalMode = "wal"
	DefaultBusyTimeout = 5 * time.Second
	maxBusyTimeoutMS   = math.MaxInt32
	// DefaultCompressMinBytes is the default CompressMinBytes: on the long
	// agent session of internal/corpus (events of 30 B – 1.7 KB) every
	// data member from 256 bytes up shrinks, and none below 256 bytes does
	// (a frame's header, block header and checksum cost about 17 bytes).
	DefaultCompressMinBytes = 256
	// MinCompressMinBytes and MaxCompressMinBytes bound CompressMinBytes
	// (64 B – 1 MiB).
	MinCompressMinBytes = 64
	MaxCompressMinBytes = 1 << 20
)

// DefaultConfig returns the default configuration for the database at
// path: journal mode "wal", busy timeout 5 s, data compression on from
// DefaultCompressMinBytes.
func DefaultConfig(path string) Config {
	return Config{Path: path, JournalMode: DefaultJournalMode, BusyTimeout: DefaultBusyTimeout, CompressData: true, CompressMinBytes: DefaultCompressMinBytes}
}

// ParseConfig reads the plugin block's config as the host renders it
// (sdk.Configurable): a JSON object with the snake_case keys of the HCL
// block, each optional but path: {"path": "…", "journal_mode": "wal",
// "busy_timeout": 5000, "compress_data": true, "compress_min_bytes": 256}.
// busy_timeout is in milliseconds, compress_min_bytes in bytes; null means
// unset. Unknown keys, wrong types and values out
// of range are CONFIG_INVALID naming the key.
func ParseConfig(b []byte) (Config, error) {
	var raw struct {
		Path         *string          `json:"path"`
		JournalMode  *string          `json:"journal_mode"`
		BusyTimeout  *json.RawMessage `json:"busy_timeout"`
		CompressData *bool            `json:"compress_data"`
		CompressMin  *json.RawMessage `json:"compress_min_bytes"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Config{}, configErr("the sqlite config must be a JSON object with the keys path, journal_mode, busy_timeout, compress_data and compress_min_bytes: %v", err)
	}
	if dec.More() {
		return Config{}, configErr("the sqlite config has data after its JSON object")
	}
	if raw.Path == nil {
		return Config{}, configErr(`the sqlite config needs "path": a database file, or ":memory:"`)
	}
	c := DefaultConfig(*raw.Path)
	if raw.JournalMode != nil {
		c.JournalMode = *raw.JournalMode
	}
	if raw.BusyTimeout != nil && string(*raw.BusyTimeout) != "null" {
		ms, err := strconv.ParseInt(string(*raw.BusyTimeout), 10, 64)
		if err != nil {
			return Config{}, configErr("busy_timeout must be a whole number of milliseconds in 0 … %d; got %s", maxBusyTimeoutMS, *raw.BusyTimeout)
		}
		if ms < 0 || ms > maxBusyTimeoutMS {
			return Config{}, configErr("busy_timeout must be in 0 … %d milliseconds; got %d", maxBusyTimeoutMS, ms)
		}
		c.BusyTimeout = time.Duration(ms) * time.Millisecond
	}
	if raw.CompressData != nil {
		c.CompressData = *raw.CompressData
	}
	if raw.CompressMin != nil && string(*raw.CompressMin) != "null" {
		n, err := strconv.ParseInt(string(*raw.CompressMin), 10, 64)
		if err != nil || n < MinCompressMinBytes || n > MaxCompressMinBytes {
			return Config{}, compressMinErr(string(*raw.CompressMin))
		}
		c.CompressMinBytes = int(n)
	}
	return c, c.validate()
}

// validate checks c as Open does.
func (c Config) validate() error {
	if c.Path == "" {
		return configErr(`the sqlite path is empty; set it to a database file, or ":memory:"`)
	}
	switch c.JournalMode {
	case "wal", "delete", "truncate", "persist":
	default:
		return configErr("journal_mode must be wal, delete, truncate or persist; got %s", strconv.Quote(c.JournalMode))
	}
	if ms := c.BusyTimeout.Milliseconds(); c.BusyTimeout < 0 || ms > maxBusyTimeoutMS || time.Duration(ms)*time.Millisecond != c.BusyTimeout {
		return configErr("busy_timeout must be whole milliseconds in 0 … %d ms; got %v", maxBusyTimeoutMS, c.BusyTimeout)
	}
	if c.CompressMinBytes < MinCompressMinBytes || c.CompressMinBytes > MaxCompressMinBytes {
		return compressMinErr(strconv.Itoa(c.CompressMinBytes))
	}
	return nil
}

// compressMinErr is the CONFIG_INVALID of a compress_min_bytes that is not
// a whole number in range; got is the value as given.
func compressMinErr(got string) *sdk.Error {
	return configErr("compress_min_bytes must be a whole number of bytes in %d … %d (1 MiB); got %s", MinCompressMinBytes, MaxCompressMinBytes, got)
}

// memory reports whether c names an in-memory database.
func (c Config) memory() bool { return c.Path == MemoryPath }

func configErr(format string, args ...any) *sdk.Error {
	return sdk.Errorf(sdk.CodeConfigInvalid, op, format, args...)
}
