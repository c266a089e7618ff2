package session

import (
	"encoding/json"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// msgRec is one model message: the recorded message of a surface event, or a
// message a projection decided for a node. Immutable once built.
type msgRec struct {
	seq sdk.Seq // the node it belongs to
	typ string  // the node's event type
	// val is the parsed message of a projection's decision; the zero Value
	// for a recorded message, whose parse the record drops (see view).
	val  jsonv.Value
	json []byte // its canonical bytes (clipped view, never written)
}

// view returns the parsed message, parsing its canonical bytes again
// when it keeps no parse.
func (m *msgRec) view() jsonv.Value {
	if m.val.Exists() {
		return m.val
	}
	doc, err := jsonv.Parse(m.json, jsonv.Options{})
	if err != nil {
		return jsonv.Value{} // canonical and validated: cannot happen
	}
	return doc.Root()
}

func newMsgRec(seq sdk.Seq, typ string, buf []byte, val jsonv.Value) *msgRec {
	start, end := val.Span()
	return &msgRec{seq: seq, typ: typ, val: val, json: buf[start:end:end]}
}

// MessageView is a read-only view of one derived model message.
type MessageView struct{ m *msgRec }

// IsZero reports whether v is the zero MessageView (no message).
func (v MessageView) IsZero() bool { return v.m == nil }

// ID returns the message id.
func (v MessageView) ID() string { s, _ := v.m.view().Get("id").Str(); return s }

// Role returns the message role.
func (v MessageView) Role() string { s, _ := v.m.view().Get("role").Str(); return s }

// NodeSeq returns the seq of the surface node the message belongs to.
func (v MessageView) NodeSeq() sdk.Seq { return v.m.seq }

// JSON returns a fresh copy of the message's canonical JSON.
func (v MessageView) JSON() []byte { return append([]byte(nil), v.m.json...) }

// View returns a read-only view of the parsed message. A recorded message
// is parsed from its stored bytes on each call: keep the view while you
// need it.
func (v MessageView) View() jsonv.Value { return v.m.view() }

// Decode unmarshals the message into v with encoding/json.
func (v MessageView) Decode(dst any) error { return json.Unmarshal(v.m.json, dst) }

// recordedMessage computes the message an event records (docs/format.md, without
// projections) and whether it yields a model message: user/message → its
// data; system, developer and assistant messages → data.message, yielding
// nothing when content is empty; tool/result → data.message (even if empty).
func recordedMessage(r *record) (m *msgRec, yields bool) {
	m, start, yields := messageOf(r)
	if m != nil {
		r.msgStart = uint32(start)
	}
	return m, yields
}

// messageOf is recordedMessage without the record's bookkeeping: the
// message, its offset in the envelope, and whether it yields one.
func messageOf(r *record) (m *msgRec, start int, yields bool) {
	var val jsonv.Value
	data, base := r.dataView(), 0
	if !r.data.Exists() {
		base = int(r.dataStart) // a fresh parse of the data alone
	}
	switch r.typ {
	case TypeUserMessage:
		val = data
	case TypeSystemMessage, TypeDeveloperMessage, TypeAssistantMessage, TypeToolResult:
		val = data.Get("message")
	default:
		return nil, 0, false
	}
	if val.Kind() != jsonv.Object {
		return nil, 0, false
	}
	start, end := val.Span()
	start, end = start+base, end+base
	m = &msgRec{seq: r.seq, typ: r.typ, json: r.env[start:end:end]}
	switch r.typ {
	case TypeSystemMessage, TypeDeveloperMessage, TypeAssistantMessage:
		return m, start, val.Get("content").Len() > 0
	}
	return m, start, true
}

// MessageOf returns the model message of a node (docs/format.md): projected[seq]
// when present, else the message the event records; ok is false when the
// node yields none. Detached readers pass Fold's Projected.
func MessageOf(e Event, projected map[sdk.Seq]MessageView) (MessageView, bool) {
	if p, ok := projected[e.r.seq]; ok {
		return p, true
	}
	if e.r.msg != nil && e.r.yields {
		return MessageView{e.r.msg}, true
	}
	m, _, yields := messageOf(e.r)
	if !yields {
		return MessageView{}, false
	}
	return MessageView{m}, true
}
