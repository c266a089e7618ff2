package pluginrpc

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// Import implements sdk.Importer over the Import stream; it returns the
// header given as Opened.Header. Every batch events yields is sent at
// once, cut into messages under the RPC size limit, so neither side holds
// more than a message of it; the last message is marked done. When
// events fails, or ctx ends, the stream is ended without done, the plugin
// stores nothing, and Import returns once the plugin has answered (or
// abandonGrace after ctx ended), so a retry never finds it half made. A plugin whose backend has no such capability
// answers Unimplemented, which becomes CONFIG_INVALID: the host asks only
// plugins that declare sdk.CapabilityImport.
func (c *persistenceClient) Import(ctx context.Context, h sdk.Header, events func(yield func(batch [][]byte) error) error) (sdk.Opened, error) {
	if err := sdk.ValidateSessionID(h.ID); err != nil {
		return sdk.Opened{}, err
	}
	// The stream outlives ctx by up to abandonGrace, so that an import
	// ctx ends can still wait for the plugin's answer to its abandoned
	// stream (below) instead of being cut off before the plugin let go.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(abandonGrace, cancel) })
	defer stop()
	st, err := c.rpc.Import(sctx)
	if err != nil {
		return sdk.Opened{}, importErr(ctx, h.ID, err)
	}
	req := &logbookv1.ImportRequest{Header: headerjson.Encode(h), Tenant: c.tenant}
	// Every message leaves room for the header and the tenant (sent only
	// in the first) and done.
	limit := c.maxBytes - (1 + protowire.SizeBytes(len(req.Header))) - (1 + protowire.SizeBytes(len(req.Tenant))) - 2
	send := func() error {
		err := st.Send(req)
		req = &logbookv1.ImportRequest{}
		if errors.Is(err, io.EOF) { // the plugin ended the stream: its status says why
			_, err = st.CloseAndRecv()
		}
		if err != nil {
			return importErr(ctx, h.ID, err)
		}
		return nil
	}
	var next sdk.Seq
	err = events(func(batch [][]byte) error {
		// A context that ended stops the import here, even when the stream
		// has not noticed yet: nothing is sent after it, done least of all.
		if err := handles.Ended(ctx, errOp, "import"); err != nil {
			return err
		}
		parts, err := splitBatch("", "", next, batch, limit)
		if err != nil {
			return err
		}
		for _, part := range parts {
			if len(part) == 0 {
				continue
			}
			req.Events = part
			if err := send(); err != nil {
				return err
			}
			next += sdk.Seq(len(part))
		}
		return nil
	})
	if err == nil {
		err = handles.Ended(ctx, errOp, "import")
	}
	if err != nil {
		// End the stream without its last message and wait for the
		// plugin's answer: it abandons the import, and once it answered,
		// nothing of it is left (a retry does not find its create pending).
		_, _ = st.CloseAndRecv()
		return sdk.Opened{}, err
	}
	req.Done = true
	if err := send(); err != nil {
		return sdk.Opened{}, err
	}
	r, err := st.CloseAndRecv()
	if err != nil {
		return sdk.Opened{}, importErr(ctx, h.ID, err)
	}
	o := opened(r)
	o.Header = h
	return o, nil
}

// abandonGrace is how long an import whose context ended still waits for
// the plugin to answer its abandoned stream.
const abandonGrace = 5 * time.Second

// importErr is fromStatus, except that Unimplemented is CONFIG_INVALID:
// the plugin declared a capability it does not serve.
func importErr(ctx context.Context, id string, err error) error {
	if s, ok := status.FromError(err); ok && s.Code() == codes.Unimplemented {
		return &sdk.Error{Code: sdk.CodeConfigInvalid, Op: errOp, SessionID: id,
			Detail: "the persistence plugin cannot import a session (it does not implement Import); it must not declare the capability " + sdk.CapabilityImport, Err: err}
	}
	return fromStatus(ctx, "persistence.Import", err)
}

// Import serves the backend's sdk.Importer, or answers Unimplemented when
// the backend has none. The backend reads the batches from the stream as
// it stores them; a stream that fails or ends before a message with done
// fails the import, and the backend stores nothing.
func (s *persistenceServer) Import(stream logbookv1.Persistence_ImportServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	imp, err := served[sdk.Importer](s, first.GetTenant(), "this persistence backend cannot import a session (it implements no sdk.Importer)")
	if err != nil {
		return err
	}
	h, err := decodeHeader(first.GetHeader(), "Import")
	if err != nil {
		return toStatus(err)
	}
	o, err := imp.Import(stream.Context(), h, func(yield func(batch [][]byte) error) error {
		req := first
		for {
			if evs := req.GetEvents(); len(evs) > 0 {
				if err := yield(evs); err != nil {
					return err
				}
			}
			if req.GetDone() {
				return nil
			}
			var err error
			if req, err = stream.Recv(); err != nil {
				return &sdk.Error{Code: sdk.CodeIOError, Op: errOp, SessionID: h.ID,
					Detail: "the import stream ended before its last message; nothing is stored", Err: err}
			}
		}
	})
	if err != nil {
		return toStatus(err)
	}
	if o.Header.ID == "" {
		o.Header = h
	}
	return stream.SendAndClose(handleReply(o))
}

var _ sdk.Importer = (*persistenceClient)(nil)
