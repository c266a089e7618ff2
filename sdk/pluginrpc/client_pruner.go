package pluginrpc

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// prunerClient implements sdk.Pruner over gRPC.
type prunerClient struct {
	rpc logbookv1.PrunerClient
}

func (c *prunerClient) Prune(ctx context.Context, sessionID string, nodes []sdk.PruneNode, budget sdk.PruneBudget) ([]sdk.PruneReplacement, error) {
	req := &logbookv1.PruneRequest{
		SessionId: sessionID,
		Nodes:     make([]*logbookv1.PruneNode, 0, len(nodes)),
		Budget: &logbookv1.PruneBudget{
			ThresholdChars: budget.ThresholdChars,
			HeadChars:      budget.HeadChars,
			TailChars:      budget.TailChars,
		},
	}
	for _, n := range nodes {
		req.Nodes = append(req.Nodes, &logbookv1.PruneNode{Seq: int64(n.Seq), CallId: n.CallID, Message: n.Message})
	}
	rep, err := c.rpc.Prune(ctx, req)
	if err != nil {
		return nil, fromStatus(ctx, "pruner.Prune", err)
	}
	var out []sdk.PruneReplacement
	for _, p := range rep.GetReplacements() {
		out = append(out, sdk.PruneReplacement{Seq: sdk.Seq(p.GetSeq()), Content: p.GetContent(), CharsBefore: p.GetCharsBefore(), CharsAfter: p.GetCharsAfter()})
	}
	return out, nil
}
