// Command pruneplugin is a minimal logbook plugin for the subprocess test of
// package pluginrpc: a pruner that echoes its nodes, failing with
// CONFIG_INVALID for a budget of zero.
package main

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

type pruner struct{}

func (pruner) Prune(_ context.Context, sessionID string, nodes []sdk.PruneNode, b sdk.PruneBudget) ([]sdk.PruneReplacement, error) {
	if b.ThresholdChars == 0 {
		e := sdk.Errorf(sdk.CodeConfigInvalid, "pruneplugin", "thresholdChars must be > 0; got %d", b.ThresholdChars)
		e.SessionID = sessionID
		return nil, e
	}
	out := make([]sdk.PruneReplacement, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, sdk.PruneReplacement{Seq: n.Seq, Content: n.Message, CharsBefore: int64(len(n.Message)), CharsAfter: int64(len(n.Message))})
	}
	return out, nil
}

func main() {
	pluginrpc.Serve(pluginrpc.ServeConfig{
		Info:   sdk.Info{Name: "pruneplugin", Version: "test", Kinds: []sdk.Kind{sdk.KindPruner}},
		Pruner: pruner{},
	})
}
