package postgres

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Config configures a Backend (docs/storage.md). Start from DefaultConfig:
// the zero value is not valid.
type Config struct {
	// DSN is the libpq connection string or postgres:// URL of the
	// database. Required. Its password never appears in an error or a
	// log line of this package.
	DSN string
	// Schema is the PostgreSQL schema holding logbook's tables, created
	// when missing: a lowercase SQL identifier ([a-z_][a-z0-9_]*, at most
	// 63 bytes, not starting with pg_). Default DefaultSchema.
	Schema string
	// MaxConns bounds the pool of connections that appends and reads use,
	// 1 … MaxMaxConns; default DefaultMaxConns. The connection holding
	// the write claims (see the package documentation) is not counted.
	MaxConns int
	// HostName is the name this backend records as the owner of the
	// sessions it opens for writing, which another host's ALREADY_OWNED
	// names: 1 … 255 bytes of UTF-8 without control characters. Default
	// "<hostname>:<pid>".
	HostName string
	// CompressData stores an envelope of CompressMinBytes or more as a
	// zstd frame (level 3, with checksum) when that is smaller. Default
	// true. Every Backend reads both forms.
	CompressData bool
	// CompressMinBytes is the envelope size from which CompressData
	// compresses, MinCompressMinBytes … MaxCompressMinBytes; default
	// DefaultCompressMinBytes.
	CompressMinBytes int
}

// The defaults and bounds of docs/storage.md.
const (
	DefaultSchema   = "logbook"
	DefaultMaxConns = 8
	MaxMaxConns     = 1000
	// DefaultCompressMinBytes is the default CompressMinBytes, as the
	// SQLite backend's: on the agent sessions of internal/corpus, an
	// envelope of 256 bytes or more shrinks.
	DefaultCompressMinBytes = 256
	// MinCompressMinBytes and MaxCompressMinBytes bound CompressMinBytes
	// (64 B – 1 MiB).
	MinCompressMinBytes = 64
	MaxCompressMinBytes = 1 << 20
	maxHostName         = 255
)

// DefaultConfig returns the default configuration for the database dsn:
// schema "logbook", 8 pooled connections, host name "<hostname>:<pid>",
// compression on from DefaultCompressMinBytes.
func DefaultConfig(dsn string) Config {
	return Config{DSN: dsn, Schema: DefaultSchema, MaxConns: DefaultMaxConns, HostName: defaultHostName(), CompressData: true, CompressMinBytes: DefaultCompressMinBytes}
}

func defaultHostName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "localhost"
	}
	return h + ":" + strconv.Itoa(os.Getpid())
}

// ParseConfig reads the plugin block's config as the host renders it
// (sdk.Configurable): a JSON object with the snake_case keys of the HCL
// block, each optional but dsn: {"dsn": "…", "schema": "logbook",
// "max_conns": 8, "host_name": "…", "compress_data": true,
// "compress_min_bytes": 256}; null means unset. Unknown keys, wrong types
// and values out of range are CONFIG_INVALID naming the key.
func ParseConfig(b []byte) (Config, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return Config{}, configErr("the postgres config must be a JSON object with the keys dsn, schema, max_conns, host_name, compress_data and compress_min_bytes")
	}
	if dec.More() {
		return Config{}, configErr("the postgres config has data after its JSON object")
	}
	c := DefaultConfig("")
	for key, v := range raw {
		if string(v) == "null" {
			continue
		}
		var err error
		switch key {
		case "dsn":
			err = str(v, &c.DSN)
		case "schema":
			err = str(v, &c.Schema)
		case "host_name":
			err = str(v, &c.HostName)
		case "max_conns":
			c.MaxConns, err = integer(v)
		case "compress_min_bytes":
			c.CompressMinBytes, err = integer(v)
		case "compress_data":
			err = json.Unmarshal(v, &c.CompressData)
		default:
			return Config{}, configErr("unknown key %s in the postgres config; the keys are dsn, schema, max_conns, host_name, compress_data and compress_min_bytes", strconv.Quote(key))
		}
		if err != nil {
			return Config{}, configErr("%s has the wrong type: %v", key, err)
		}
	}
	if _, ok := raw["dsn"]; !ok {
		return Config{}, configErr(`the postgres config needs "dsn": a connection string such as "host=/var/run/postgresql dbname=logbook"`)
	}
	return c, c.validate()
}

func str(v json.RawMessage, dst *string) error { return json.Unmarshal(v, dst) }

func integer(v json.RawMessage) (int, error) {
	n, err := strconv.ParseInt(string(v), 10, 32)
	if err != nil {
		return 0, &json.UnsupportedValueError{Str: "want a whole number, got " + string(v)}
	}
	return int(n), nil
}

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// validate checks c as Open does.
func (c Config) validate() error {
	if c.DSN == "" {
		return configErr(`dsn is empty; set it to a connection string such as "host=/var/run/postgresql dbname=logbook"`)
	}
	if _, err := pgxpool.ParseConfig(c.DSN); err != nil {
		return &sdk.Error{Code: sdk.CodeConfigInvalid, Op: op, Detail: "dsn does not parse as a PostgreSQL connection string", Err: redact(err, c.DSN)}
	}
	if !schemaName.MatchString(c.Schema) || len(c.Schema) >= 3 && c.Schema[:3] == "pg_" {
		return configErr("schema must be a lowercase SQL identifier ([a-z_][a-z0-9_]*, at most 63 bytes, not starting with pg_); got %s", strconv.Quote(c.Schema))
	}
	if c.MaxConns < 1 || c.MaxConns > MaxMaxConns {
		return configErr("max_conns must be in 1 … %d; got %d", MaxMaxConns, c.MaxConns)
	}
	if !validHostName(c.HostName) {
		return configErr("host_name must be 1 … %d bytes of UTF-8 without control characters; got %s", maxHostName, strconv.Quote(c.HostName))
	}
	if c.CompressMinBytes < MinCompressMinBytes || c.CompressMinBytes > MaxCompressMinBytes {
		return configErr("compress_min_bytes must be a whole number of bytes in %d … %d (1 MiB); got %d", MinCompressMinBytes, MaxCompressMinBytes, c.CompressMinBytes)
	}
	return nil
}

func validHostName(s string) bool {
	if s == "" || len(s) > maxHostName || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func configErr(format string, args ...any) *sdk.Error {
	return sdk.Errorf(sdk.CodeConfigInvalid, op, format, args...)
}
