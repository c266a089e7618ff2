package session

import (
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// HeaderView is a folded request header (docs/format.md): the canonical header of a
// request/header event, read-only.
type HeaderView struct{ r *record }

// Seq returns the seq of the request/header event.
func (h HeaderView) Seq() sdk.Seq { return h.r.seq }

// Reason returns the event's reason: initial, resume, change or series.
func (h HeaderView) Reason() string { s, _ := h.r.dataView().Get("reason").Str(); return s }

// StartsSeries reports whether the event carries startsSeries: true.
func (h HeaderView) StartsSeries() bool { b, _ := h.r.dataView().Get("startsSeries").Bool(); return b }

// View returns a read-only view of the canonical EpochHeader.
func (h HeaderView) View() jsonv.Value { return h.r.dataView().Get("header") }

// JSON returns a fresh copy of the canonical EpochHeader bytes. Stored headers
// are canonical already (docs/format.md rejects the non-canonical shapes).
func (h HeaderView) JSON() []byte { return h.View().Bytes() }

// Config returns a read-only view of the header's config.
func (h HeaderView) Config() jsonv.Value { return h.View().Get("config") }

// Tools returns the header's tool schemas as canonical JSON, in order; nil
// when the header has none.
func (h HeaderView) Tools() []ToolSchema { return toolSchemas(h.View().Get("tools")) }

// CanonicalHeader returns the canonical form of an EpochHeader (docs/format.md):
// config as given, adapterDefaults only if a flag is true, tools only if
// non-empty. The input must be lossless JSON (docs/format.md).
func CanonicalHeader(header []byte) ([]byte, error) {
	doc, err := jsonv.Parse(header, jsonv.Options{})
	if err != nil {
		return nil, err
	}
	h := doc.Root()
	if h.Kind() != jsonv.Object {
		return nil, sdk.Errorf(sdk.CodeHeaderInvalid, "header", "a header must be a JSON object; got %s", h.Bytes())
	}
	out := []byte{'{'}
	first := true
	for k, v := range h.Members() {
		switch {
		case k.StrEqual("adapterDefaults") && !anyTrueFlag(v):
			continue
		case k.StrEqual("tools") && v.Kind() == jsonv.Array && v.Len() == 0:
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = k.AppendRaw(out)
		out = append(out, ':')
		out = v.AppendRaw(out)
	}
	return append(out, '}'), nil
}

func anyTrueFlag(v jsonv.Value) bool {
	for _, f := range v.Members() {
		if b, ok := f.Bool(); ok && b {
			return true
		}
	}
	return false
}

// HeaderEqual compares two canonical EpochHeaders (docs/format.md): config
// value-equal; equal adapterDefaults flags (absent = false); tools of equal
// length and pairwise byte-equal in order.
func HeaderEqual(a, b jsonv.Value) bool {
	if !jsonv.Equal(a.Get("config"), b.Get("config")) {
		return false
	}
	for _, flag := range [...]string{"reasoningEffort", "maxTokens"} {
		fa, _ := a.Get("adapterDefaults").Get(flag).Bool()
		fb, _ := b.Get("adapterDefaults").Get(flag).Bool()
		if fa != fb {
			return false
		}
	}
	ta, tb := a.Get("tools"), b.Get("tools")
	if ta.Len() != tb.Len() {
		return false
	}
	for i := range ta.Len() {
		if !rawEqual(ta.Index(i), tb.Index(i)) {
			return false
		}
	}
	return true
}

// rawEqual reports byte-equality of canonical encodings.
func rawEqual(a, b jsonv.Value) bool {
	return string(a.Bytes()) == string(b.Bytes())
}

// RequestHeader returns the folded header: the canonical header of the last
// request/header event; false before any.
func (s *Session) RequestHeader() (HeaderView, bool) {
	p := s.pub.Load()
	if p.header == nil {
		return HeaderView{}, false
	}
	return HeaderView{p.header}, true
}

// FoldRequestHeader is the detached form of RequestHeader over events[from:].
func FoldRequestHeader(events EventList, from sdk.Offset) (HeaderView, bool) {
	for i := events.Len() - 1; i >= int(from)-int(events.base) && i >= 0; i-- {
		if r := events.records[i]; r.typ == TypeRequestHeader {
			return HeaderView{r}, true
		}
	}
	return HeaderView{}, false
}

// RequestContext returns the data of the last request/context event
// (docs/format.md) as a read-only view; false before any.
func (s *Session) RequestContext() (jsonv.Value, bool) {
	p := s.pub.Load()
	if p.context == nil {
		return jsonv.Value{}, false
	}
	return p.context.dataView(), true
}

// checkDeveloperBinding runs step S5 (docs/format.md).
func (s *Session) checkDeveloperBinding(r *record) error {
	hs := r.dataView().Get("headerSeq")
	if !hs.Exists() {
		return nil
	}
	h, _ := seqValue(hs)
	if h < s.surf.base {
		return nil // a window cannot see the header; the binding was checked when the event was accepted
	}
	if h >= r.seq {
		return sdk.Errorf(sdk.CodeDeveloperHeaderSeqInvalid, "session", "headerSeq %d is not earlier than seq %d", h, r.seq)
	}
	header := s.recordAt(h)
	if header.typ != TypeRequestHeader {
		return sdk.Errorf(sdk.CodeDeveloperHeaderSeqInvalid, "session", "headerSeq %d is a %s, not a request/header", h, header.typ)
	}
	tools := header.dataView().Get("header").Get("tools")
	for _, block := range r.dataView().Get("message").Get("content").Elements() {
		if !block.Get("type").StrEqual("tool-addition") {
			continue
		}
		name, _ := block.Get("toolName").Str()
		var schema jsonv.Value
		count := 0
		for _, t := range tools.Elements() {
			if t.Get("name").StrEqual(name) {
				schema = t
				count++
			}
		}
		if count != 1 {
			return sdk.Errorf(sdk.CodeDeveloperToolNotInHeader, "session", "tool-addition %q must name exactly one schema of the header at headerSeq %d; found %d", name, h, count)
		}
		if schema.Get("description").Kind() != jsonv.String || schema.Get("parameters").Kind() != jsonv.Object {
			return sdk.Errorf(sdk.CodeDeveloperToolIncomplete, "session", "tool %q in the header at headerSeq %d needs a string description and an object parameters", name, h)
		}
		if d := schema.Get("deferLoading"); d.Exists() {
			if b, ok := d.Bool(); !ok || !b {
				return sdk.Errorf(sdk.CodeDeveloperToolDeferLoading, "session", "tool %q: deferLoading must be true when present; got %s", name, d.Bytes())
			}
		}
	}
	return nil
}
