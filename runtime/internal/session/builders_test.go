package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The events package's builders write inputs the core accepts, and the
// core refuses what a builder cannot refuse itself.

func newSession(t *testing.T) *session.Session {
	t.Helper()
	s, err := session.New(session.Options{Header: sdk.Header{FormatVersion: sdk.FormatVersion, ID: "builders"}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Input a builder cannot refuse (it returns no error) is rejected by
// Append with the code of the rule it breaks, and nothing is appended.
func TestInvalidInputIsRejectedAtAppend(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		rule string
		in   events.Input
		want sdk.Code
	}{
		{"a message id is non-empty", events.UserText(events.TextMessage{ID: "", Text: "hi"}), sdk.CodePayloadInvalid},
		{"an assistant source names its provider", events.AssistantText(1, 1, events.Model{Name: "m"}, events.TextMessage{ID: "a", Text: "hi"}), sdk.CodeMessageSourceInvalid},
		{"a tool message names its call", events.ToolResult(1, 1, events.ToolText{ID: "r", CallID: "", Text: "out"}), sdk.CodePayloadInvalid},
		{"turn/end has a reason", events.TurnEnd(1, events.Reason{}), sdk.CodePayloadInvalid},
		{"a block is an object", events.User(events.UserMessage{ID: "u", Kind: "prompt", Content: []events.Block{events.Block{}}}), sdk.CodePayloadInvalid},
		{"turn numbers are non-negative", events.TurnStart(-1), sdk.CodePayloadInvalid},
		{"a temperature is a finite number", events.RequestHeader(events.Header{Config: events.Config{Provider: "p", Model: "m", Temperature: &nan}}, events.HeaderInitial), sdk.CodeJSONSyntax},
		{"extra members are an object", events.TurnEnd(1, events.PluginReason("x", json.RawMessage(`[1]`))), sdk.CodeJSONSyntax},
		{"a stream record is JSON", events.AssistantAttempt(1, 1, json.RawMessage(`{"dt":`)), sdk.CodeJSONSyntax},
		{"the first header is initial", events.RequestHeader(events.Header{Config: events.Config{Provider: "p", Model: "m"}}, events.HeaderChange), sdk.CodeHeaderReasonInvalid},
		{"a tool-addition binds a header", events.Developer(0, 0, "d", 0, events.ToolAddition("t")), sdk.CodeDeveloperHeaderSeqInvalid},
		{"a replacement replaces earlier nodes", events.System(0, 0, events.TextMessage{ID: "s", Text: "x"}).Replacing(0, 0), sdk.CodeReplaceEndpointNotEarlier},
		{"reasoning is for assistants", events.User(events.UserMessage{ID: "u", Kind: "prompt", Content: []events.Block{events.Reasoning(events.Thought{Text: "r"})}}), sdk.CodePayloadInvalid},
	} {
		s := newSession(t)
		_, err := s.Append(context.Background(), c.in)
		var se *sdk.Error
		if !errors.As(err, &se) || se.Code != c.want {
			t.Errorf("%s: %v, want %s", c.rule, err, c.want)
		}
		if s.Len() != 0 {
			t.Errorf("%s: the session has %d events after a rejected append", c.rule, s.Len())
		}
	}
}
