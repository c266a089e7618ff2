package pluginrpc

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// The watch capability (sdk.Watcher) over gRPC: the server streams the
// backend's lengths, or answers Unimplemented when it has none; the client
// turns Unimplemented into CONFIG_INVALID, since the host asks only plugins
// that declare sdk.CapabilityWatch.

// Watch serves the backend's sdk.Watcher: one reply per length it reports.
func (s *persistenceServer) Watch(req *logbookv1.WatchRequest, stream logbookv1.Persistence_WatchServer) error {
	w, err := served[sdk.Watcher](s, req.GetTenant(), "this persistence backend cannot watch a session (it implements no sdk.Watcher)")
	if err != nil {
		return err
	}
	var sendErr error
	err = w.Watch(stream.Context(), req.GetSessionId(), sdk.Offset(req.GetFrom()), func(length sdk.Offset) error {
		sendErr = stream.Send(&logbookv1.WatchReply{Length: int64(length)})
		return sendErr
	})
	if sendErr != nil {
		return sendErr
	}
	return toStatus(err)
}

// Watch implements sdk.Watcher over the Watch stream. It returns ctx's
// error once ctx ends and fn's error when fn fails (the stream is
// cancelled); a plugin that ends the stream on its own is IO_ERROR, since a
// watch only ends when its caller says so.
func (c *persistenceClient) Watch(ctx context.Context, id string, from sdk.Offset, fn func(length sdk.Offset) error) error {
	if err := sdk.ValidateSessionID(id); err != nil {
		return err
	}
	const call = "persistence.Watch"
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.rpc.Watch(wctx, &logbookv1.WatchRequest{SessionId: id, From: int64(from), Tenant: c.tenant})
	for err == nil {
		var r *logbookv1.WatchReply
		if r, err = st.Recv(); err == nil {
			if ferr := fn(sdk.Offset(r.GetLength())); ferr != nil {
				return ferr
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, io.EOF):
		return &sdk.Error{Code: sdk.CodeIOError, Op: errOp, SessionID: id, Detail: call + ": the plugin ended the watch on its own"}
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.Unimplemented {
		return &sdk.Error{Code: sdk.CodeConfigInvalid, Op: errOp, SessionID: id,
			Detail: "the persistence plugin cannot watch a session (it does not implement Watch); it must not declare the capability " + sdk.CapabilityWatch, Err: err}
	}
	return fromStatus(ctx, call, err)
}

var _ sdk.Watcher = (*persistenceClient)(nil)
