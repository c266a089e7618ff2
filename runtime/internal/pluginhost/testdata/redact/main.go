// Command redact is a test projection plugin: projection:redact/text events
// replace the text of their targets' messages with the event's "text".
package main

import (
	"context"
	"encoding/json"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

type projector struct{}

func (projector) Declare(context.Context) ([]string, error) {
	return []string{"projection:redact/text"}, nil
}

func (projector) Project(_ context.Context, r sdk.ProjectRequest) ([]sdk.ProjectTarget, error) {
	var env struct {
		Data struct {
			Text string `json:"text"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.Event, &env); err != nil {
		return nil, err
	}
	if env.Data.Text == "fail" {
		return nil, sdk.Errorf(sdk.CodeIOError, "redact", "asked to fail")
	}
	out := make([]sdk.ProjectTarget, 0, len(r.Targets))
	for _, t := range r.Targets {
		var m map[string]any
		if err := json.Unmarshal(t.Message, &m); err != nil {
			return nil, err
		}
		m["content"] = []any{map[string]any{"type": "text", "text": env.Data.Text}}
		if env.Data.Text == "change-id" {
			m["id"] = "other"
		}
		b, _ := json.Marshal(m)
		out = append(out, sdk.ProjectTarget{Seq: t.Seq, EventType: t.EventType, Message: b})
	}
	return out, nil
}

func main() {
	pluginrpc.Serve(pluginrpc.ServeConfig{
		Info:      sdk.Info{Name: "redact", Version: "test", Kinds: []sdk.Kind{sdk.KindProjection}},
		Projector: projector{},
	})
}
