// Package events is logbook's event vocabulary for harnesses: Input, the
// event a harness appends, with a typed builder for every core event type
// a harness writes, and Event and TranscriptEntry, what a session hands
// back; CreateOptions and ListEntry, what a new session's header is made of
// and what a listing holds. The in-process runtime (package logbook) and
// the daemon client (package client) both take and return these types, so
// code that builds a turn reads the same against either. docs/format.md describes every
// type and payload.
//
// # Builders
//
// TurnStart, UserText, Assistant, ToolResult, TurnEnd and the other
// builders return the Input of one core event type a harness writes, with
// Data in the canonical form logbook stores (docs/format.md): the same
// bytes come back from the log. Surface events are appended to the
// surface; Input.Replacing turns one into a replacement. The compaction
// and store-only types (compaction/*, session/*) have no builders:
// logbook writes them itself. Where a builder would take several strings
// in a row (ids, names, texts), it takes a struct with named fields
// instead (Call, ToolText, TextMessage, UserMessage, Thought, TurnError),
// so two of them cannot be swapped without the code saying so.
//
// A builder never fails and never panics. What it cannot tell is wrong
// without knowing the session (an empty id, a negative turn, a tool call
// id no message asked for, JSON the caller passed that does not parse) is
// written as given, and Append rejects the event with the code of the
// rule it breaks.
package events

import (
	"encoding/json"
	"fmt"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Input is one event to append: a type, its data and the optional envelope
// members. logbook assigns seq and time, validates the whole event and
// stores the canonical envelope (docs/format.md).
type Input struct {
	Type string
	// Data is exactly one JSON value. It is validated losslessly and kept
	// as written: member order and number literals survive.
	Data            json.RawMessage
	SurfaceOp       *SurfaceOp // nil = absent
	SourceEventSeqs []sdk.Seq  // nil = absent; non-nil and empty = present and empty
	Ignorable       bool
}

// SurfaceOp is how a surface event changes the model's view: "append"
// (Replace false), or the replacement of the current surface nodes
// StartSeq … EndSeq, inclusive and in surface order, by the event.
type SurfaceOp struct {
	Replace          bool
	StartSeq, EndSeq sdk.Seq
}

// Append returns the "append" surface operation.
func Append() *SurfaceOp { return &SurfaceOp{} }

// Replace returns the surface operation replacing the current nodes start
// … end.
func Replace(start, end sdk.Seq) *SurfaceOp {
	return &SurfaceOp{Replace: true, StartSeq: start, EndSeq: end}
}

// Event is one stored event: its canonical envelope and the members read
// from it. Data is a sub-slice of Envelope; neither may be modified.
type Event struct {
	Seq             sdk.Seq
	Time            int64 // milliseconds since the Unix epoch
	Type            string
	Data            json.RawMessage
	SurfaceOp       *SurfaceOp // nil = absent
	SourceEventSeqs []sdk.Seq  // nil = absent
	Ignorable       bool
	// Envelope is the event exactly as the log holds it.
	Envelope json.RawMessage
}

// TranscriptEntry is one event that appended a message to the surface,
// with that message as it was recorded (before any rewrite, pruning or
// projection; empty messages included).
type TranscriptEntry struct {
	Seq     sdk.Seq
	Type    string
	Message json.RawMessage
}

// envelope is the JSON shape of a stored event, for ParseEvent.
type envelope struct {
	Seq             *sdk.Seq        `json:"seq"`
	Time            *int64          `json:"time"`
	Type            *string         `json:"type"`
	Data            json.RawMessage `json:"data"`
	SurfaceOp       json.RawMessage `json:"surfaceOp"`
	SourceEventSeqs []sdk.Seq       `json:"sourceEventSeqs"`
	Ignorable       bool            `json:"ignorable"`
}

// ParseEvent reads a canonical envelope, as logbook stores and sends it,
// into an Event that keeps b as its Envelope. It checks the shape, not the
// rules of docs/format.md (logbook checked those when it accepted the
// event); a missing member or a malformed surfaceOp is ENVELOPE_INVALID.
func ParseEvent(b []byte) (Event, error) {
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return Event{}, sdk.Errorf(sdk.CodeEnvelopeInvalid, "events", "not an event envelope: %v", err)
	}
	if env.Seq == nil || env.Time == nil || env.Type == nil || env.Data == nil {
		return Event{}, sdk.Errorf(sdk.CodeEnvelopeInvalid, "events", "an envelope needs seq, time, type and data")
	}
	ev := Event{Seq: *env.Seq, Time: *env.Time, Type: *env.Type, Data: env.Data, SourceEventSeqs: env.SourceEventSeqs, Ignorable: env.Ignorable, Envelope: b}
	if env.SurfaceOp != nil {
		op, err := parseSurfaceOp(env.SurfaceOp)
		if err != nil {
			return Event{}, err
		}
		ev.SurfaceOp = op
	}
	return ev, nil
}

func parseSurfaceOp(b json.RawMessage) (*SurfaceOp, error) {
	if string(b) == `"append"` {
		return Append(), nil
	}
	var r struct {
		Op       string   `json:"op"`
		StartSeq *sdk.Seq `json:"startSeq"`
		EndSeq   *sdk.Seq `json:"endSeq"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Op != "replace" || r.StartSeq == nil || r.EndSeq == nil {
		return nil, sdk.Errorf(sdk.CodeEnvelopeInvalid, "events", "surfaceOp %s is neither \"append\" nor a replace object", b)
	}
	return Replace(*r.StartSeq, *r.EndSeq), nil
}

// String renders the operation as the envelope writes it.
func (op SurfaceOp) String() string {
	if !op.Replace {
		return `"append"`
	}
	return fmt.Sprintf(`{"op":"replace","startSeq":%d,"endSeq":%d}`, op.StartSeq, op.EndSeq)
}
