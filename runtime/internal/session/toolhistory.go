package session

import (
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// ToolSchema is one tool schema: its name and canonical JSON.
type ToolSchema struct {
	Name string
	JSON []byte
}

// ToolUpdate is one developer/message's change of tool availability.
type ToolUpdate struct {
	MessageID string
	Additions []ToolSchema
	Removals  []string
}

// ToolHistory is the immutable tool-history fold of docs/format.md: the tools a
// request offers and the incremental updates recorded since the baseline.
// Its slices are shared between callers and never written again; do not
// modify them.
type ToolHistory struct {
	Tools   []ToolSchema
	Updates []ToolUpdate
}

// ToolHistory returns the current tool-history snapshot.
func (s *Session) ToolHistory() ToolHistory {
	if t := s.pub.Load().tools; t != nil {
		return *t
	}
	return ToolHistory{}
}

func toolSchemas(tools jsonv.Value) []ToolSchema {
	if tools.Len() == 0 {
		return nil
	}
	out := make([]ToolSchema, 0, tools.Len())
	for _, t := range tools.Elements() {
		name, _ := t.Get("name").Str()
		out = append(out, ToolSchema{Name: name, JSON: t.Bytes()})
	}
	return out
}

// toolFold is the incremental state of docs/format.md.
type toolFold struct {
	declared  map[string]string // name → canonical schema bytes
	available map[string]bool
	active    []ToolSchema
	baseline  []ToolSchema
	updates   []ToolUpdate
	seen      bool // a header was folded
	snapshot  *ToolHistory
}

// header folds a request/header.
func (f *toolFold) header(r *record) {
	tools := toolSchemas(r.dataView().Get("header").Get("tools"))
	reason := r.dataView().Get("reason")
	series, _ := r.dataView().Get("startsSeries").Bool()
	fresh := !f.seen || reason.StrEqual("series") || series
	for _, t := range tools {
		if d, ok := f.declared[t.Name]; ok && d != string(t.JSON) {
			fresh = true
		}
	}
	f.seen = true
	if fresh {
		f.declared = make(map[string]string, len(tools))
		f.available = make(map[string]bool, len(tools))
		for _, t := range tools {
			f.available[t.Name] = true
		}
		f.baseline = tools
		f.updates = nil
	}
	for _, t := range tools {
		f.declared[t.Name] = string(t.JSON)
	}
	f.active = tools
	f.publish()
}

// developer folds a developer/message; header resolves its headerSeq.
func (f *toolFold) developer(r *record, header func(seq int64) *record) {
	msg := r.dataView().Get("message")
	id, _ := msg.Get("id").Str()
	u := ToolUpdate{MessageID: id}
	var headerTools jsonv.Value
	if hs := r.dataView().Get("headerSeq"); hs.Exists() {
		n, _ := hs.Int()
		if h := header(n); h != nil {
			headerTools = h.dataView().Get("header").Get("tools")
		}
	}
	if f.available == nil {
		f.available = map[string]bool{}
	}
	for _, b := range msg.Get("content").Elements() {
		name, _ := b.Get("toolName").Str()
		switch {
		case b.Get("type").StrEqual("tool-addition"):
			for _, t := range headerTools.Elements() {
				if t.Get("name").StrEqual(name) {
					u.Additions = append(u.Additions, ToolSchema{Name: name, JSON: t.Bytes()})
				}
			}
			f.available[name] = true
		case b.Get("type").StrEqual("tool-removal"):
			u.Removals = append(u.Removals, name)
			delete(f.available, name)
		}
	}
	f.updates = append(f.updates, u)
	f.publish()
}

func (f *toolFold) publish() {
	same := len(f.active) == len(f.available)
	for _, t := range f.active {
		if !f.available[t.Name] {
			same = false
		}
	}
	if !same {
		f.snapshot = &ToolHistory{Tools: clip(f.active), Updates: []ToolUpdate{}}
		return
	}
	f.snapshot = &ToolHistory{Tools: clip(f.baseline), Updates: clip(f.updates)}
}

func clip[T any](s []T) []T { return s[:len(s):len(s)] }
