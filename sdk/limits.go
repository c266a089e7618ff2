package sdk

import "math"

// The limits below are the one definition of every rule the host checks
// that a backend checks too: the host's session, its store, the server, the
// CLI, the plugin RPC layer and every first-party backend use these names,
// so a backend never refuses, on one of these rules, what the host accepted.
const (
	// MaxJSONDepth is the deepest nesting an event's data value may have:
	// the data value's own outermost container is depth 1, and whatever
	// encloses data (the envelope, a batch) is not counted. It is fixed.
	MaxJSONDepth = 512

	// DefaultMaxEventBytes is the default cap on one canonical envelope.
	DefaultMaxEventBytes = 16 << 20 // 16 MiB
	// MinMaxEventBytes and MaxMaxEventBytes bound a configured cap on one
	// canonical envelope.
	MinMaxEventBytes = 1 << 10 // 1 KiB
	MaxMaxEventBytes = 1 << 30 // 1 GiB

	// DefaultRPCMaxBytes is the default cap on one plugin request or reply;
	// MaxRPCMaxBytes is the largest cap, that of a gRPC message.
	DefaultRPCMaxBytes = 32 << 20 // 32 MiB
	MaxRPCMaxBytes     = math.MaxInt32

	// EventFraming is the room allowed around one event in a message that
	// carries it: a plugin request holds MaxEventBytes plus at least this
	// much, and a server request or CLI input line carries one event's
	// raw input plus this much.
	EventFraming = 1 << 20 // 1 MiB

	// MaxCallIDBytes is the longest tool-call id an append accepts, in
	// bytes of the decoded UTF-8 string: tool/call.callId,
	// tool/result.message.toolCallId (and its source.callId) and the id of
	// a tool-call block of an assistant/message. A stored log written
	// before the rule may hold longer ones; they are read as they are.
	MaxCallIDBytes = 128

	// MaxFileNameBytes is the longest file name logbook makes from a
	// caller's value (a session id, a child id): a name that would be
	// longer is shortened with a hash (sdk/durable.FitName), as most file
	// systems refuse a name of more than 255 bytes.
	MaxFileNameBytes = 255
)

// RPCMaxBytesEnv is the environment variable in which the host hands a
// plugin process its RPCMaxBytes (a decimal byte count), so that both ends
// of the connection apply the same cap to a request and a reply.
const RPCMaxBytesEnv = "LOGBOOK_RPC_MAX_BYTES"

// MaxRawEventBytes is the cap on one event's raw input (its data as given,
// before the canonical encoding shrinks it) for a cap of maxEventBytes on
// the canonical envelope: twice that.
func MaxRawEventBytes(maxEventBytes int) int { return 2 * maxEventBytes }

// MaxEventMessageBytes is the cap on one server request message or CLI
// input line that carries one event, for a cap of maxEventBytes: the raw
// input cap plus EventFraming.
func MaxEventMessageBytes(maxEventBytes int) int {
	return MaxRawEventBytes(maxEventBytes) + EventFraming
}

// MinRPCMaxBytes is the smallest plugin request cap that carries one event
// of maxEventBytes with its framing.
func MinRPCMaxBytes(maxEventBytes int) int { return maxEventBytes + EventFraming }
