package session

import (
	"encoding/json"

	"github.com/seed-e5e476df/logbook/events"
)

// Shared returns e as package events hands events to a harness, without
// copying: Data and Envelope are sub-slices of the stored envelope and
// SourceEventSeqs is the stored slice, so the caller must not modify any
// of them (the log and every later read would see the change).
func (e Event) Shared() events.Event {
	r := e.r
	ev := events.Event{Seq: r.seq, Time: r.time, Type: r.typ, Data: r.env[r.dataStart:r.dataEnd:r.dataEnd], Ignorable: r.ignorable, Envelope: r.env}
	if r.meta.opOK {
		op := r.meta.op
		ev.SurfaceOp = &op
	}
	if r.meta.srcOK {
		ev.SourceEventSeqs = r.meta.sources[:len(r.meta.sources):len(r.meta.sources)]
	}
	return ev
}

// SharedJSON returns the message's canonical bytes without copying (nil
// for the zero MessageView); the caller must not modify them.
func (v MessageView) SharedJSON() json.RawMessage {
	if v.m == nil {
		return nil
	}
	return v.m.json
}

// SharedEnvelope returns the canonical envelope without copying: the stored
// bytes themselves, which never change, clipped to their length. The caller
// must not modify them. It is how the store hands a batch to its backends
// (whose Append does not keep or change its buffers) without a copy.
func (e Event) SharedEnvelope() []byte {
	env := e.r.env
	return env[:len(env):len(env)]
}
