package events

import (
	"encoding/json"
	"strconv"
)

// HeaderReason says why a request/header was written (docs/format.md).
type HeaderReason string

// The reasons of request/header.
const (
	// HeaderInitial is the first header of the log; it must be exactly the
	// first.
	HeaderInitial HeaderReason = "initial"
	// HeaderResume is the first request of a new agent loop over a log
	// that already has a header (a restart, a fork child).
	HeaderResume HeaderReason = "resume"
	// HeaderChange is a header that differs from the one in force.
	HeaderChange HeaderReason = "change"
	// HeaderSeries is an unchanged header written because a new message
	// series starts (e.g. after a surface replacement).
	HeaderSeries HeaderReason = "series"
)

// Header is the request settings from a request/header on (docs/format.md,
// EpochHeader), and whether that request starts a new series.
type Header struct {
	Config Config
	// AdapterDefaults names the config values the provider adapter filled
	// in rather than the caller; the zero value writes none.
	AdapterDefaults AdapterDefaults
	// Tools are the tools the model may call, with unique names; nil (or
	// empty) writes no tools member.
	Tools []ToolSchema
	// StartsSeries says that a request with reason initial, resume or
	// change also starts a new message series. It is written beside the
	// header, as data.startsSeries, and only when true.
	StartsSeries bool
}

// Config is the model configuration of a Header. Provider and Model must
// be non-empty; each other member is written only when set.
type Config struct {
	Provider, Model string
	ReasoningEffort string   // "" = absent
	MaxTokens       int64    // 0 = absent
	Temperature     *float64 // nil = absent
	Stop            []string // nil = absent; written as an array
	// Extra holds further members of the config, as a JSON object whose
	// members are written after the ones above; nil for none.
	Extra json.RawMessage
}

// AdapterDefaults marks config values the provider adapter filled in.
type AdapterDefaults struct {
	ReasoningEffort, MaxTokens bool
}

// ToolSchema declares one tool of a Header (docs/format.md).
type ToolSchema struct {
	Name        string          // non-empty, unique in the header
	Description string          // "" = absent
	Parameters  json.RawMessage // a JSON Schema object; nil = absent
	// DeferLoading marks a tool whose definition the provider loads only
	// when needed; written only when true.
	DeferLoading bool
}

func (c Config) append(b []byte) []byte {
	b = strMember(append(b, '{'), "provider", c.Provider)
	b = strMember(b, "model", c.Model)
	if c.ReasoningEffort != "" {
		b = strMember(b, "reasoningEffort", c.ReasoningEffort)
	}
	if c.MaxTokens != 0 {
		b = numMember(b, "maxTokens", c.MaxTokens)
	}
	if c.Temperature != nil {
		// The shortest literal that reads back as the same float64; NaN,
		// infinities and -0 come out as literals Append rejects.
		b = strconv.AppendFloat(member(b, "temperature"), *c.Temperature, 'g', -1, 64)
	}
	if c.Stop != nil {
		b = append(member(b, "stop"), '[')
		for i, s := range c.Stop {
			if i > 0 {
				b = append(b, ',')
			}
			b = str(b, s)
		}
		b = append(b, ']')
	}
	return append(extra(b, c.Extra), '}')
}

func (t ToolSchema) append(b []byte) []byte {
	b = strMember(append(b, '{'), "name", t.Name)
	if t.Description != "" {
		b = strMember(b, "description", t.Description)
	}
	if t.Parameters != nil {
		b = value(member(b, "parameters"), t.Parameters)
	}
	if t.DeferLoading {
		b = append(member(b, "deferLoading"), "true"...)
	}
	return append(b, '}')
}

// RequestHeader is request/header: the request settings h are in force
// from here on, for reason.
func RequestHeader(h Header, reason HeaderReason) Input {
	b := append(member([]byte{'{'}, "header"), '{')
	b = h.Config.append(member(b, "config"))
	if ad := h.AdapterDefaults; ad.ReasoningEffort || ad.MaxTokens {
		b = append(member(b, "adapterDefaults"), '{')
		if ad.ReasoningEffort {
			b = append(member(b, "reasoningEffort"), "true"...)
		}
		if ad.MaxTokens {
			b = append(member(b, "maxTokens"), "true"...)
		}
		b = append(b, '}')
	}
	if len(h.Tools) > 0 {
		b = append(member(b, "tools"), '[')
		for i, t := range h.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			b = t.append(b)
		}
		b = append(b, ']')
	}
	b = strMember(append(b, '}'), "reason", string(reason))
	if h.StartsSeries {
		b = append(member(b, "startsSeries"), "true"...)
	}
	return Input{Type: TypeRequestHeader, Data: append(b, '}')}
}

// ContextInfo is the provider, model and context window facts of
// request/context.
type ContextInfo struct {
	Model              Model
	ContextWindow      int64  // tokens; 0 = absent
	SystemPromptUpdate string // "" = absent
}

// RequestContext is request/context: the facts c, written next to a
// request/header when they change.
func RequestContext(c ContextInfo) Input {
	b := strMember([]byte{'{'}, "provider", c.Model.Provider)
	b = strMember(b, "model", c.Model.Name)
	if c.ContextWindow != 0 {
		b = numMember(b, "contextWindow", c.ContextWindow)
	}
	if c.SystemPromptUpdate != "" {
		b = strMember(b, "systemPromptUpdate", c.SystemPromptUpdate)
	}
	return Input{Type: TypeRequestContext, Data: append(b, '}')}
}

// TodoStatus is the state of one to-do item.
type TodoStatus string

// The states of a to-do item.
const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoCompleted  TodoStatus = "completed"
)

// Todo is one item of the agent's to-do list.
type Todo struct {
	Content string
	Status  TodoStatus
}

// TodoWrite is todo/write: the agent's whole to-do list, which replaces
// the one written before.
func TodoWrite(todos ...Todo) Input {
	b := append(member([]byte{'{'}, "todos"), '[')
	for i, t := range todos {
		if i > 0 {
			b = append(b, ',')
		}
		b = strMember(append(b, '{'), "content", t.Content)
		b = append(strMember(b, "status", string(t.Status)), '}')
	}
	return Input{Type: TypeTodoWrite, Data: append(b, "]}"...)}
}
