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

// The read-frames capability (sdk.FrameReader) over gRPC: the server sends
// the backend's frames in messages of at most chunkBytes of frame data,
// splitting a larger frame into parts; the client joins the parts and
// turns Unimplemented (a plugin without the capability) into framed false.

// ReadFrames serves the backend's sdk.FrameReader.
func (s *persistenceServer) ReadFrames(req *logbookv1.ReadRequest, stream logbookv1.Persistence_ReadFramesServer) error {
	fr, err := served[sdk.FrameReader](s, req.GetTenant(), "this persistence backend cannot read frames (it implements no sdk.FrameReader)")
	if err != nil {
		return err
	}
	var msg []*logbookv1.StoredFrame
	size := 0
	send := func() error {
		if len(msg) == 0 {
			return nil
		}
		err := stream.Send(&logbookv1.FramesChunk{Frames: msg})
		msg, size = nil, 0
		return err
	}
	var sendErr error
	framed, err := fr.ReadFrames(stream.Context(), req.GetHandle(), sdk.Offset(req.GetOffset()), req.GetLength(), func(frames []sdk.Frame) error {
		for _, f := range frames {
			for data := f.Data; ; {
				if size > 0 && size+len(data) > s.chunkBytes {
					if sendErr = send(); sendErr != nil {
						return sendErr
					}
				}
				part := data[:min(len(data), s.chunkBytes)]
				data = data[len(part):]
				msg = append(msg, &logbookv1.StoredFrame{Offset: f.Offset, First: int64(f.First), Count: f.Count, Data: part, More: len(data) > 0})
				size += len(part)
				if len(data) == 0 {
					break
				}
			}
		}
		return nil
	})
	if sendErr != nil {
		return sendErr
	}
	if err != nil {
		if sendErr = send(); sendErr != nil {
			return sendErr
		}
		return toStatus(err)
	}
	if !framed {
		return stream.Send(&logbookv1.FramesChunk{Unframed: true})
	}
	return send()
}

// ReadFrames implements sdk.FrameReader over the plugin; a plugin without
// the capability reports framed false.
func (c *persistenceClient) ReadFrames(ctx context.Context, handle string, offset sdk.Offset, length int64, fn func(frames []sdk.Frame) error) (bool, error) {
	if err := checkHandle(handle); err != nil {
		return false, err
	}
	const call = "persistence.ReadFrames"
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.rpc.ReadFrames(rctx, &logbookv1.ReadRequest{Handle: handle, Offset: int64(offset), Length: length, Tenant: c.tenant})
	if err != nil {
		return false, fromStatus(ctx, call, err)
	}
	var partial *sdk.Frame // a frame whose further parts are still to come
	for {
		chunk, err := st.Recv()
		if errors.Is(err, io.EOF) {
			if partial != nil {
				return true, &sdk.Error{Code: sdk.CodePluginUnavailable, Op: errOp, Detail: "the plugin's ReadFrames stream ended inside a frame"}
			}
			return true, nil
		}
		if s, ok := status.FromError(err); ok && s.Code() == codes.Unimplemented {
			return false, nil
		}
		if err != nil {
			return true, fromStatus(ctx, call, err)
		}
		if chunk.GetUnframed() {
			return false, nil
		}
		frames := make([]sdk.Frame, 0, len(chunk.GetFrames()))
		for _, f := range chunk.GetFrames() {
			if partial != nil {
				partial.Data = append(partial.Data, f.GetData()...)
			} else {
				partial = &sdk.Frame{Offset: f.GetOffset(), First: sdk.Seq(f.GetFirst()), Count: f.GetCount(), Data: f.GetData()}
				if f.GetMore() {
					partial.Data = append([]byte(nil), partial.Data...) // grown by the next parts
				}
			}
			if f.GetMore() {
				continue
			}
			frames = append(frames, *partial)
			partial = nil
		}
		if len(frames) == 0 {
			continue
		}
		if err := fn(frames); err != nil {
			return true, err
		}
	}
}

var _ sdk.FrameReader = (*persistenceClient)(nil)
