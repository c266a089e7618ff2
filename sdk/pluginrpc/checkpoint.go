package pluginrpc

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// The checkpoint capability (sdk.Checkpointer) over gRPC: the server
// serves the backend's, or answers Unimplemented when it has none; the
// client turns Unimplemented into "no checkpoint" on reads and into
// CONFIG_INVALID on writes, so a host can always ask.

// WriteCheckpoint serves the backend's sdk.Checkpointer.
func (s *persistenceServer) WriteCheckpoint(ctx context.Context, req *logbookv1.WriteCheckpointRequest) (*logbookv1.Empty, error) {
	c, err := served[sdk.Checkpointer](s, req.GetTenant(), noCheckpoints)
	if err != nil {
		return nil, err
	}
	if err := c.WriteCheckpoint(ctx, req.GetHandle(), sdk.Offset(req.GetEvents()), req.GetData()); err != nil {
		return nil, toStatus(err)
	}
	return &logbookv1.Empty{}, nil
}

// ReadCheckpoint serves the backend's sdk.Checkpointer.
func (s *persistenceServer) ReadCheckpoint(ctx context.Context, req *logbookv1.HandleRequest) (*logbookv1.CheckpointReply, error) {
	c, err := served[sdk.Checkpointer](s, req.GetTenant(), noCheckpoints)
	if err != nil {
		return nil, err
	}
	events, data, found, err := c.ReadCheckpoint(ctx, req.GetHandle())
	if err != nil {
		return nil, toStatus(err)
	}
	return &logbookv1.CheckpointReply{Found: found, Events: int64(events), Data: data}, nil
}

const noCheckpoints = "this persistence backend stores no checkpoints (it implements no sdk.Checkpointer)"

// WriteCheckpoint implements sdk.Checkpointer over the plugin.
func (c *persistenceClient) WriteCheckpoint(ctx context.Context, handle string, events sdk.Offset, data []byte) error {
	if err := checkHandle(handle); err != nil {
		return err
	}
	_, err := c.rpc.WriteCheckpoint(ctx, &logbookv1.WriteCheckpointRequest{Handle: handle, Events: int64(events), Data: data, Tenant: c.tenant})
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unimplemented {
		return &sdk.Error{Code: sdk.CodeConfigInvalid, Op: errOp, Detail: "the persistence plugin stores no checkpoints", Err: err}
	}
	return fromStatus(ctx, "persistence.WriteCheckpoint", err)
}

// ReadCheckpoint implements sdk.Checkpointer over the plugin; a plugin
// without the capability has no checkpoint.
func (c *persistenceClient) ReadCheckpoint(ctx context.Context, handle string) (sdk.Offset, []byte, bool, error) {
	if err := checkHandle(handle); err != nil {
		return 0, nil, false, err
	}
	r, err := c.rpc.ReadCheckpoint(ctx, &logbookv1.HandleRequest{Handle: handle, Tenant: c.tenant})
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unimplemented {
		return 0, nil, false, nil
	}
	if err != nil {
		return 0, nil, false, fromStatus(ctx, "persistence.ReadCheckpoint", err)
	}
	return sdk.Offset(r.GetEvents()), r.GetData(), r.GetFound(), nil
}
