package pluginrpc

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// projectionClient implements sdk.Projector over gRPC.
type projectionClient struct {
	rpc logbookv1.ProjectionClient
}

func (c *projectionClient) Declare(ctx context.Context) ([]string, error) {
	rep, err := c.rpc.Declare(ctx, &logbookv1.DeclareRequest{})
	if err != nil {
		return nil, fromStatus(ctx, "projection.Declare", err)
	}
	return rep.GetTypes(), nil
}

func (c *projectionClient) Project(ctx context.Context, r sdk.ProjectRequest) ([]sdk.ProjectTarget, error) {
	rep, err := c.rpc.Project(ctx, &logbookv1.ProjectRequest{
		SessionId: r.SessionID,
		Event:     r.Event,
		Nodes:     fromSeqs(r.Nodes),
		Targets:   targetsToProto(r.Targets),
	})
	if err != nil {
		return nil, fromStatus(ctx, "projection.Project", err)
	}
	return targetsFromProto(rep.GetMessages()), nil
}
