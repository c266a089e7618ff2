package pluginrpc

import (
	"context"
	"errors"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// persistenceClient implements sdk.Persistence over gRPC, for the
// implicit tenant or, as a tenant view (Tenant), for one named tenant.
type persistenceClient struct {
	rpc      logbookv1.PersistenceClient
	tenant   string          // the tenant every request names; "" for the implicit one
	views    *tenantViews    // shared by the client and its views
	done     context.Context // ends when the plugin process is gone
	maxBytes int

	mu      sync.Mutex
	streams map[string]*appendStream // by handle
}

// newPersistenceClient returns the implicit tenant's client over rpc.
func newPersistenceClient(done context.Context, rpc logbookv1.PersistenceClient, maxBytes int) *persistenceClient {
	if done == nil {
		done = context.Background()
	}
	return &persistenceClient{rpc: rpc, views: &tenantViews{views: map[string]*persistenceClient{}},
		done: done, maxBytes: maxBytes, streams: map[string]*appendStream{}}
}

func (c *persistenceClient) Describe(ctx context.Context) (sdk.Description, error) {
	r, err := c.rpc.Describe(ctx, &logbookv1.DescribeRequest{})
	if err != nil {
		return sdk.Description{}, fromStatus(ctx, "persistence.Describe", err)
	}
	return sdk.Description{Name: r.GetName(), FormatVersion: int(r.GetFormatVersion()), Compression: r.GetCompression(),
		DescriptorsPerSession: int(r.GetDescriptorsPerSession()), DescriptorLimit: r.GetDescriptorLimit(), DescriptorsOpen: r.GetDescriptorsOpen()}, nil
}

// Create returns the header given as Opened.Header.
func (c *persistenceClient) Create(ctx context.Context, h sdk.Header) (sdk.Opened, error) {
	if err := sdk.ValidateSessionID(h.ID); err != nil {
		return sdk.Opened{}, err // proto strings cannot carry it, and the header JSON would alter it
	}
	r, err := c.rpc.Create(ctx, &logbookv1.CreateRequest{Header: headerjson.Encode(h), Tenant: c.tenant})
	if err != nil {
		return sdk.Opened{}, fromStatus(ctx, "persistence.Create", err)
	}
	o := opened(r)
	o.Header = h
	return o, nil
}

// CopyPrefix implements sdk.PrefixCopier over the CopyPrefix call; it
// returns the header given as Opened.Header. A plugin whose backend has no
// such capability answers Unimplemented, which becomes CONFIG_INVALID: the
// host asks only plugins that declare sdk.CapabilityCopyPrefix.
func (c *persistenceClient) CopyPrefix(ctx context.Context, source string, boundary sdk.Seq, child sdk.Header) (sdk.Opened, error) {
	if err := sdk.ValidateSessionID(source); err != nil {
		return sdk.Opened{}, err
	}
	if err := sdk.ValidateSessionID(child.ID); err != nil {
		return sdk.Opened{}, err
	}
	r, err := c.rpc.CopyPrefix(ctx, &logbookv1.CopyPrefixRequest{SourceId: source, Boundary: int64(boundary), Header: headerjson.Encode(child), Tenant: c.tenant})
	if err != nil {
		if st, ok := status.FromError(err); ok && st.Code() == codes.Unimplemented {
			return sdk.Opened{}, &sdk.Error{Code: sdk.CodeConfigInvalid, Op: errOp, SessionID: child.ID,
				Detail: "the persistence plugin cannot copy a prefix (it does not implement CopyPrefix); it must not declare the capability " + sdk.CapabilityCopyPrefix, Err: err}
		}
		return sdk.Opened{}, fromStatus(ctx, "persistence.CopyPrefix", err)
	}
	o := opened(r)
	o.Header = child
	return o, nil
}

func (c *persistenceClient) Open(ctx context.Context, id string, access sdk.Access) (sdk.Opened, error) {
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Opened{}, err
	}
	r, err := c.rpc.Open(ctx, &logbookv1.OpenRequest{Id: id, Access: logbookv1.Access(access), Tenant: c.tenant})
	if err != nil {
		return sdk.Opened{}, fromStatus(ctx, "persistence.Open", err)
	}
	h, err := headerjson.Decode(r.GetHeader(), id, "")
	if err != nil {
		return sdk.Opened{}, err
	}
	o := opened(r)
	o.Header = h
	return o, nil
}

func opened(r *logbookv1.HandleReply) sdk.Opened {
	return sdk.Opened{
		Handle:   r.GetHandle(),
		NextSeq:  sdk.Offset(r.GetNextSeq()),
		Revision: r.GetRevision(),
		Torn: sdk.Torn{
			Bytes:    r.GetTornBytes(),
			FromSeq:  sdk.Seq(r.GetTornFromSeq()),
			Artifact: r.GetTornArtifact(),
		},
	}
}

func (c *persistenceClient) Read(ctx context.Context, handle string, offset sdk.Offset, length int64, fn func(events [][]byte) error) error {
	if err := checkHandle(handle); err != nil {
		return err
	}
	const call = "persistence.Read"
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.rpc.Read(rctx, &logbookv1.ReadRequest{Handle: handle, Offset: int64(offset), Length: length, Tenant: c.tenant})
	if err != nil {
		return fromStatus(ctx, call, err)
	}
	for {
		chunk, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fromStatus(ctx, call, err)
		}
		if len(chunk.GetEvents()) == 0 {
			continue
		}
		if err := fn(chunk.GetEvents()); err != nil {
			return err
		}
	}
}

func (c *persistenceClient) Flush(ctx context.Context, handle string) (sdk.Durable, error) {
	if err := checkHandle(handle); err != nil {
		return sdk.Durable{}, err
	}
	return flushResult(ctx)(c.rpc.Flush(ctx, &logbookv1.HandleRequest{Handle: handle, Tenant: c.tenant}))
}

// flushResult returns the function that turns a Flush's gRPC reply, or
// error, into the sdk's.
func flushResult(ctx context.Context) func(*logbookv1.FlushReply, error) (sdk.Durable, error) {
	return func(r *logbookv1.FlushReply, err error) (sdk.Durable, error) {
		if err != nil {
			return sdk.Durable{}, fromStatus(ctx, "persistence.Flush", err)
		}
		return sdk.Durable{NextSeq: sdk.Offset(r.GetDurableNextSeq()), Revision: r.GetRevision()}, nil
	}
}

// Close ends the handle's Append stream (waiting for a batch in flight on
// it), then closes the handle in the plugin.
func (c *persistenceClient) Close(ctx context.Context, handle string) error {
	if !utf8.ValidString(handle) {
		return nil // no plugin ever issued it; closing is idempotent
	}
	c.mu.Lock()
	s := c.streams[handle]
	delete(c.streams, handle)
	c.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		s.reset()
		s.mu.Unlock()
	}
	_, err := c.rpc.Close(ctx, &logbookv1.HandleRequest{Handle: handle, Tenant: c.tenant})
	return fromStatus(ctx, "persistence.Close", err)
}

func (c *persistenceClient) Stat(ctx context.Context, id string) (sdk.Stat, error) {
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Stat{}, err
	}
	r, err := c.rpc.Stat(ctx, &logbookv1.StatRequest{Id: id, Tenant: c.tenant})
	if err != nil {
		return sdk.Stat{}, fromStatus(ctx, "persistence.Stat", err)
	}
	h, err := headerjson.Decode(r.GetHeader(), id, "")
	if err != nil {
		return sdk.Stat{}, err
	}
	st := sdk.Stat{Header: h, Revision: r.GetRevision(), FormatVersion: int(r.GetFormatVersion()), EventCount: -1, SizeBytes: -1}
	if r.EventCount != nil {
		st.EventCount = r.GetEventCount()
	}
	if r.SizeBytes != nil {
		st.SizeBytes = r.GetSizeBytes()
	}
	st.LastActivity = r.GetLastActivity()
	return st, nil
}

// List decodes each entry's header; an entry whose header does not decode
// carries the decoding error.
func (c *persistenceClient) List(ctx context.Context, fn func(sdk.ListEntry) error) error {
	const call = "persistence.List"
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.rpc.List(lctx, &logbookv1.ListRequest{Tenant: c.tenant})
	if err != nil {
		return fromStatus(ctx, call, err)
	}
	for {
		r, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fromStatus(ctx, call, err)
		}
		e := sdk.ListEntry{ID: r.GetId(), Revision: r.GetRevision(), LastActivity: r.GetLastActivity(), EventCount: -1}
		if r.EventCount != nil {
			e.EventCount = r.GetEventCount()
		}
		if r.GetError() != nil {
			e.Err = errorFromProto(r.GetError())
		}
		if len(r.GetHeader()) > 0 {
			h, herr := headerjson.Decode(r.GetHeader(), r.GetId(), "")
			if herr != nil && e.Err == nil {
				e.Err = herr
			}
			if herr == nil {
				e.Header = h
			}
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

// ReadDamaged implements sdk.SalvageReader over the ReadDamaged stream:
// the prefix's chunks go to fn as they arrive, the tail pieces are joined,
// and the summary ends the stream. A plugin whose backend has no such
// capability answers Unimplemented, which becomes CONFIG_INVALID naming
// it: retrying cannot help.
func (c *persistenceClient) ReadDamaged(ctx context.Context, id string, fn func(events [][]byte) error) (sdk.Damaged, error) {
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Damaged{}, err
	}
	const call = "persistence.ReadDamaged"
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.rpc.ReadDamaged(rctx, &logbookv1.ReadDamagedRequest{Id: id, Tenant: c.tenant})
	if err != nil {
		return sdk.Damaged{}, readDamagedError(ctx, id, err)
	}
	var tail []byte
	for {
		part, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return sdk.Damaged{}, &sdk.Error{Code: sdk.CodeIOError, Op: errOp, SessionID: id, Detail: call + ": the plugin ended the stream without its summary"}
		}
		if err != nil {
			return sdk.Damaged{}, readDamagedError(ctx, id, err)
		}
		switch p := part.GetPart().(type) {
		case *logbookv1.DamagedPart_Events:
			if evs := p.Events.GetEvents(); len(evs) > 0 {
				if err := fn(evs); err != nil {
					return sdk.Damaged{}, err
				}
			}
		case *logbookv1.DamagedPart_Tail:
			tail = append(tail, p.Tail...)
		case *logbookv1.DamagedPart_Summary:
			sum := p.Summary
			h, err := headerjson.Decode(sum.GetHeader(), id, "")
			if err != nil {
				return sdk.Damaged{}, err
			}
			d := sdk.Damaged{Header: h, ValidEvents: sum.GetValidEvents(), Corrupt: sum.GetCorrupt()}
			if d.Corrupt {
				d.Damage = sdk.Damage{Offset: sum.GetDamageOffset(), Bytes: sum.GetDamageBytes(),
					IntactEventsExcluded: sum.GetIntactEventsExcluded(), Reason: sum.GetDamageReason(), Tail: tail}
			}
			return d, nil
		}
	}
}

// readDamagedError maps a failed ReadDamaged call; see ReadDamaged.
func readDamagedError(ctx context.Context, id string, err error) error {
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unimplemented {
		return &sdk.Error{Code: sdk.CodeConfigInvalid, Op: errOp, SessionID: id,
			Detail: "the persistence plugin cannot read a damaged log (it does not implement ReadDamaged), so it cannot salvage; use a backend that does", Err: err}
	}
	return fromStatus(ctx, "persistence.ReadDamaged", err)
}

// checkHandle refuses a handle no plugin can have issued: proto strings
// carry only valid UTF-8.
func checkHandle(handle string) error {
	if utf8.ValidString(handle) {
		return nil
	}
	return sdk.Errorf(sdk.CodeHandleClosed, "persistence", "handle %q was never issued", handle)
}
