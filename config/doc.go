// Package config loads logbook's HCL configuration: where data lives, the
// host's write-behind and message-size limits, the ordered persistence
// backends, the optional compaction profile and the plugin blocks that name
// third-party binaries (docs/operations.md).
//
// # File format
//
// A config file is HCL native syntax (not HCL JSON). Keys are snake_case:
//
//	data_dir             = "./logbook-data"  # relative: against the config file's directory
//	write_window         = "200ms"           # 1ms – 60s
//	max_pending_bytes    = 67108864          # ≥ max_event_bytes
//	retry_max_backoff    = "5s"              # ≥ write_window
//	max_event_bytes      = 16777216          # 1 KiB – 1 GiB
//	rpc_max_bytes        = 33554432          # ≥ max_event_bytes + 1 MiB, ≤ 2 GiB − 1
//	plugin_start_timeout = "10s"             # > 0
//	auto_mtls            = true              # turn off only in tests
//
//	persistence "jsonl" {                    # the first block is the primary
//	  root        = "sessions"               # default: data_dir
//	  compression = "zstd"                   # "zstd" | "none"
//	  zstd_level  = "default"                # "fastest" | "default" | "better" | "best"
//	}
//	persistence "sqlite" {                   # every further block is a mirror
//	  path          = "sessions.db"          # default; ":memory:" allowed
//	  journal_mode  = "wal"                  # wal | delete | truncate | persist
//	  busy_timeout  = 5000                   # milliseconds, 0 – 2147483647
//	  compress_data = true
//	  compress_min_bytes = 256               # bytes, 64 – 1048576
//	}
//	persistence "memory" {}
//
//	compaction {                             # absent = headless
//	  summarizer = "compactor-summary"       # required
//	  pruner     = "pruner"                  # optional
//	  threshold_ratio = 0.8
//	  retain_ratio    = 0.16                 # or retain_tokens = 20000
//	  model_policy {
//	    provider = "deepseek"
//	    model    = "deepseek-chat"
//	    threshold_ratio = 0.7
//	  }
//	  prune_threshold_chars  = 8192
//	  spill_max_inline_bytes = 50000         # 0 = spill disabled
//	}
//
//	mirror "claude-code" {                   # serve imports these files live
//	  dir          = "~/.claude/projects"    # the default; relative: against the config file's directory
//	  poll         = false                   # true: stat every 250ms instead of notifications
//	  idle_release = "1m"                    # release a mirrored session idle this long; >= 1s
//	}
//
//	auth {                                   # credentials serve accepts (docs/operations.md)
//	  tokens_file = "tokens"                 # default <data_dir>/tokens, or the postgres primary's schema; relative: against data_dir
//	  jwt {                                  # absent = no JWT accepted
//	    public_key_file = "idp.pem"          # PEM public keys, or jwks_file = "idp.jwks" (exactly one); relative: against the config file's directory
//	    issuer       = "https://id.example"  # required: the iss every token carries
//	    audience     = "logbook"             # required: one of each token's aud
//	    tenant_claim = "tenant"              # claim holding the tenant ("*" only with role operator)
//	    role_claim   = "role"                # claim holding read | write | admin | operator
//	    leeway       = "30s"                 # clock skew on exp, nbf, iat; 0 – 5m
//	  }
//	}
//
//	plugin "my-backend" {
//	  command = "/opt/logbook/my-backend"    # no command = a bundled plugin
//	  args    = ["--quiet"]
//	  sha256  = "<64 lowercase hex digits>"  # only with command
//	  config { endpoint = env("MY_BACKEND_URL") }
//	}
//
// Every expression may call env("NAME"), which returns the environment
// variable's value at parse time, or "" when it is unset. No other functions
// and no variables exist. Values are typed strictly: a number key does not
// accept a string (so env() only feeds string keys and opaque plugin
// config). A key set to null counts as unset.
//
// Durations are strings parsed by time.ParseDuration ("200ms", "5s").
// Byte sizes are whole numbers of bytes.
//
// # Paths
//
// data_dir is resolved once, at parse time: a relative data_dir is joined to
// the directory of the file name given to Parse or Load (for the embedded
// default.hcl and headless.hcl that directory is ".", so data_dir is relative
// to the process's working directory). The result is kept as is — absolute
// when the config path was absolute, relative otherwise; filepath.Abs is never
// called. Paths inside blocks (jsonl root, sqlite path, spill_root) that are
// relative are joined to DataDir; see Config.ResolvePath. A plugin command
// containing a path separator and not absolute is joined to the config file's
// directory; a bare command name is kept for a PATH lookup. A mirror dir
// that is relative is joined to the config file's directory, and one that
// starts with "~/" to the home directory. The auth block's tokens_file is joined to
// DataDir; its jwt key files (public_key_file, jwks_file) are joined to the
// config file's directory.
//
// # Plugin config as JSON
//
// A plugin's `config { ... }` block and the body of a persistence block for a
// third-party backend are opaque: they are converted to one JSON object and
// handed to the plugin's Configure (sdk.Configurable). Attributes become
// members with their evaluated values (strings, numbers, bools, null, lists
// and tuples as arrays, objects and maps as objects). A nested block `b { }`
// becomes member "b" holding an object; several unlabeled blocks of one type
// become an array of objects in source order; labels nest: `b "x" "y" { }`
// becomes {"b": {"x": {"y": {…}}}}. A name used both as an attribute and a
// block, a label path used twice, or labeled and unlabeled blocks of one
// type are CONFIG_INVALID. An empty body is "{}".
//
// For a bundled backend (jsonl, sqlite, memory) the body is checked against
// the schema above, defaults are filled in and paths resolved, and
// Persistence.Config holds those settings keyed by their HCL names.
// A plugin block whose name is used by a persistence block may give command,
// args and sha256 but no config block: the persistence block's body is that
// backend's config.
//
// # Errors
//
// Every failure is reported as an *sdk.Error with Code CONFIG_INVALID and Op
// "config" whose Detail starts with `file:line:col:` (the start of the
// offending key, label or block) and names the key and the rule, e.g.
//
//	default.hcl:7:3: threshold_ratio = 1.5 must be in (0, 1]
//
// One problem is returned as that *sdk.Error; several are returned as
// errors.Join of one *sdk.Error each, in source order, so errors.Is(err,
// sdk.CodeConfigInvalid) and sdk.CodeOf(err) work either way. HCL syntax
// errors stop the load before any key is checked. The only errors whose
// Detail does not start with a line and column are those of Load that fail to
// read the file at all: their Detail starts with the path and they wrap the
// cause (errors.Is(err, fs.ErrNotExist) works).
package config
