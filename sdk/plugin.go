package sdk

import "context"

// ProtocolVersion is the one integer protocol version a plugin process
// serves for all its kinds (docs/architecture.md). The host refuses other versions.
const ProtocolVersion = 1

// The go-plugin handshake of docs/architecture.md.
const (
	MagicCookieKey   = "LOGBOOK_PLUGIN"
	MagicCookieValue = "logbook-plugin-v1"
)

// Kind is a plugin kind.
type Kind string

// The plugin kinds.
const (
	KindPersistence Kind = "persistence"
	KindSummarizer  Kind = "summarizer"
	KindPruner      Kind = "pruner"
	KindProjection  Kind = "projection"
)

// EventTypeDecl is a log-only event type a plugin declares (class P,
// docs/format.md), with the ignorable flag its events must carry.
type EventTypeDecl struct {
	Type      string
	Ignorable bool
}

// Info describes a plugin: what GetInfo returns.
type Info struct {
	Name             string // [a-z0-9][a-z0-9._-]{0,63}
	Version          string // the plugin's own version, free form
	Kinds            []Kind
	ProtocolVersions []int
	// ConfigSchema documents the plugin's config block (free-form text,
	// e.g. a JSON Schema); empty when it takes none.
	ConfigSchema string
	// EventTypes are the log-only types the plugin declares (class P).
	EventTypes []EventTypeDecl
	// Capabilities are optional features, e.g. "select-range" for a
	// summarizer that chooses its own span.
	Capabilities []string
}

// Configurable is implemented by plugins that take a config block. The host
// calls Configure once after the handshake, before any other call, with the
// plugin block's `config` body rendered as JSON (an object; "{}" when empty).
type Configurable interface {
	Configure(ctx context.Context, config []byte) error
}
