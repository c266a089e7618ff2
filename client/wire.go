package client

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// This file converts between the wire messages and the package's values.

// header decodes a stored header the server sent; want is the session id
// it must name ("" = any).
func header(text, want string) (sdk.Header, error) {
	return headerjson.Decode([]byte(text), want, "the server's reply")
}

// parseEvents reads the envelopes of a reply, byte for byte, into events.
func parseEvents(texts []string) ([]events.Event, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	out := make([]events.Event, len(texts))
	for i, t := range texts {
		ev, err := events.ParseEvent([]byte(t))
		if err != nil {
			return nil, err
		}
		out[i] = ev
	}
	return out, nil
}

// raw returns the JSON texts of a reply as JSON values, byte for byte.
func raw(texts []string) []json.RawMessage {
	out := make([]json.RawMessage, len(texts))
	for i, t := range texts {
		out[i] = json.RawMessage(t)
	}
	return out
}

// protoInput is one input on the wire.
func protoInput(in events.Input) *logbookv1.AppendInput {
	p := &logbookv1.AppendInput{Type: in.Type, Data: string(in.Data), Ignorable: in.Ignorable}
	if op := in.SurfaceOp; op != nil {
		p.SurfaceOp = &logbookv1.SurfaceOp{Replace: op.Replace, StartSeq: int64(op.StartSeq), EndSeq: int64(op.EndSeq)}
	}
	if in.SourceEventSeqs != nil {
		p.SourceEventSeqs = &logbookv1.SourceEventSeqs{Seqs: make([]int64, len(in.SourceEventSeqs))}
		for i, s := range in.SourceEventSeqs {
			p.SourceEventSeqs.Seqs[i] = int64(s)
		}
	}
	return p
}

func protoInputs(ins []events.Input) []*logbookv1.AppendInput {
	out := make([]*logbookv1.AppendInput, len(ins))
	for i, in := range ins {
		out[i] = protoInput(in)
	}
	return out
}

// expectedSeq is an ExpectedSeq on the wire.
func expectedSeq(o *sdk.Offset) *int64 {
	if o == nil {
		return nil
	}
	v := int64(*o)
	return &v
}

// invalidData returns the inputs before the first one whose data is not
// valid UTF-8, and the JSON_INVALID_UTF8 error of that input (nil when
// every input's data is valid). The wire carries data as a protobuf string,
// which cannot hold invalid UTF-8, so the client refuses such an event
// where the server's validation (docs/format.md) would have.
func invalidData(id string, ins []events.Input) ([]events.Input, *sdk.Error) {
	for i, in := range ins {
		if utf8.Valid(in.Data) {
			continue
		}
		off := 0
		for off < len(in.Data) {
			r, size := utf8.DecodeRune(in.Data[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		e := sdk.Errorf(sdk.CodeJSONInvalidUTF8, "append", "invalid UTF-8 at byte offset %d of the data of event %d of the call, a %s (refused by the client: the Sessions API carries data as text)", off, i, strconv.Quote(in.Type))
		e.SessionID = id
		return ins[:i], e
	}
	return ins, nil
}

// BackendStatus is one backend's part of a flush.
type BackendStatus struct {
	Name       string
	DurableSeq sdk.Cursor // the backend's watermark after the flush; -1 when it holds nothing
}

// FlushResult is a flush fan-out's result (docs/architecture.md).
type FlushResult struct {
	Participated bool // false: no backend is attached, which proves no durability
	Backends     []BackendStatus
}

func flushResult(p *logbookv1.SessionsFlushReply) FlushResult {
	r := FlushResult{Participated: p.GetParticipated()}
	for _, b := range p.GetBackends() {
		r.Backends = append(r.Backends, BackendStatus{Name: b.GetName(), DurableSeq: sdk.Cursor(b.GetDurableSeq())})
	}
	return r
}

// firstSeqOf returns the seq of the first event; with none, the expected
// length or -1 (unknown).
func firstSeqOf(evs []events.Event, expected *sdk.Offset) int64 {
	if len(evs) > 0 {
		return int64(evs[0].Seq)
	}
	if expected != nil {
		return int64(*expected)
	}
	return -1
}
