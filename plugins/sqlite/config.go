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
	// CompressData stores the data member of an event of 4096 bytes or more
	// as a zstd frame (level 3, with checksum) when that is smaller. Default
	// true. It affects only what this Backend writes; every Backend reads
	// both forms.
	CompressData bool
}

// The defaults of docs/operations.md, docs/storage.md.
const (
	DefaultJournalMode = "wal"
	DefaultBusyTimeout = 5 * time.Second
	maxBusyTimeoutMS   = math.MaxInt32
)

// DefaultConfig returns the default configuration for the database at
// path: journal mode "wal", busy timeout 5 s, data compression on.
func DefaultConfig(path string) Config {
	return Config{Path: path, JournalMode: DefaultJournalMode, BusyTimeout: DefaultBusyTimeout, CompressData: true}
}

// ParseConfig reads the plugin block's config as the host renders it
// (sdk.Configurable): a JSON object with the snake_case keys of the HCL
// block, each optional but path: {"path": "…", "journal_mode": "wal",
// "busy_timeout": 5000, "compress_data": true}. busy_timeout is in
// milliseconds; null means unset. Unknown keys, wrong types and values out
// of range are CONFIG_INVALID naming the key.
func ParseConfig(b []byte) (Config, error) {
	var raw struct {
		Path         *string          `json:"path"`
		JournalMode  *string          `json:"journal_mode"`
		BusyTimeout  *json.RawMessage `json:"busy_timeout"`
		CompressData *bool            `json:"compress_data"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Config{}, configErr("the sqlite config must be a JSON object with the keys path, journal_mode, busy_timeout and compress_data: %v", err)
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
	return nil
}

// memory reports whether c names an in-memory database.
func (c Config) memory() bool { return c.Path == MemoryPath }

func configErr(format string, args ...any) *sdk.Error {
	return sdk.Errorf(sdk.CodeConfigInvalid, op, format, args...)
}
