package pluginrpc

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
)

// Append sends the batch over the handle's long-lived Append stream. A batch
// whose request would exceed RPCMaxBytes goes as several consecutive
// compare-and-set appends, each of the largest prefix that fits, first_seq
// advancing; they are not atomic together: when a later part fails, the
// earlier parts stay stored and the error is that part's. An event that
// cannot fit a request alone is refused with EVENT_TOO_LARGE before
// anything is sent. The reply is the last part's.
func (c *persistenceClient) Append(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte) (sdk.Durable, error) {
	if err := checkHandle(handle); err != nil {
		return sdk.Durable{}, err
	}
	parts, err := splitBatch(handle, c.tenant, firstSeq, events, c.maxBytes)
	if err != nil {
		return sdk.Durable{}, err
	}
	s := c.stream(handle)
	s.mu.Lock()
	defer s.mu.Unlock()
	var d sdk.Durable
	seq := firstSeq
	for _, part := range parts {
		r, err := s.roundTrip(ctx, c, &logbookv1.AppendRequest{Handle: handle, FirstSeq: int64(seq), Events: part, Tenant: c.tenant})
		if err != nil {
			return sdk.Durable{}, err
		}
		d = sdk.Durable{NextSeq: sdk.Offset(r.GetNextSeq()), Revision: r.GetRevision()}
		seq += sdk.Seq(len(part))
	}
	return d, nil
}

// splitBatch cuts events into the consecutive parts sent as one request
// each, so that no request encodes to more than maxBytes. An empty batch is
// one empty part: the backend decides what it means.
func splitBatch(handle, tenant string, firstSeq sdk.Seq, events [][]byte, maxBytes int) ([][][]byte, error) {
	// handle (field 1), the largest first_seq (field 2, 10-byte varint)
	// and the tenant (field 4) when there is one.
	base := 1 + protowire.SizeBytes(len(handle)) + 1 + 10
	if tenant != "" {
		base += 1 + protowire.SizeBytes(len(tenant))
	}
	var parts [][][]byte
	start, size := 0, base
	for i, e := range events {
		n := eventFieldSize(len(e))
		if base+n > maxBytes {
			return nil, sdk.Errorf(sdk.CodeEventTooLarge, errOp, "event of %d bytes does not fit one request of RPCMaxBytes = %d; raise RPCMaxBytes above MaxEventBytes + 1 MiB",
				len(e), maxBytes).WithSeq(int64(firstSeq) + int64(i)).WithIndex(i)
		}
		if size+n > maxBytes {
			parts = append(parts, events[start:i])
			start, size = i, base
		}
		size += n
	}
	return append(parts, events[start:]), nil
}

// stream returns the handle's append stream state, creating it.
func (c *persistenceClient) stream(handle string) *appendStream {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.streams[handle]
	if !ok {
		s = &appendStream{}
		c.streams[handle] = s
	}
	return s
}

// appendStream is one handle's long-lived Append stream, opened lazily. mu
// serializes batches: one request in flight, its reply awaited. A failed
// batch, or a caller context that ends mid-batch, ends the stream; the next
// batch opens a new one.
type appendStream struct {
	mu     sync.Mutex
	stream grpc.BidiStreamingClient[logbookv1.AppendRequest, logbookv1.AppendReply]
	cancel context.CancelFunc
}

// roundTrip sends one request and waits for its reply. The stream outlives
// the call, so the caller's deadline and cancellation are applied by
// cancelling the stream when ctx ends first. Call with s.mu held.
func (s *appendStream) roundTrip(ctx context.Context, c *persistenceClient, req *logbookv1.AppendRequest) (*logbookv1.AppendReply, error) {
	stop, err := s.send(ctx, c, req)
	if err != nil {
		return nil, err
	}
	r, err := s.stream.Recv()
	return s.finish(ctx, stop, r, err)
}

// send opens the stream if needed, ties it to ctx and sends req. stop
// unties it (see finish). Call with s.mu held.
func (s *appendStream) send(ctx context.Context, c *persistenceClient, req *logbookv1.AppendRequest) (stop func() bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, fromStatus(ctx, appendCall, err)
	}
	if s.stream == nil {
		sctx, cancel := context.WithCancel(c.done)
		st, err := c.rpc.Append(sctx)
		if err != nil {
			cancel()
			return nil, fromStatus(ctx, appendCall, err)
		}
		s.stream, s.cancel = st, cancel
	}
	stop = context.AfterFunc(ctx, s.cancel)
	if err := s.stream.Send(req); err != nil {
		if errors.Is(err, io.EOF) {
			// The server ended the stream; Recv returns its status.
			_, err = s.stream.Recv()
		}
		_, err = s.finish(ctx, stop, nil, err)
		return nil, err
	}
	return stop, nil
}

// finish takes the outcome of a request's Recv: it unties the stream from
// ctx, ends the stream when ctx ended or the batch failed, and maps the
// error. Call with s.mu held.
func (s *appendStream) finish(ctx context.Context, stop func() bool, r *logbookv1.AppendReply, err error) (*logbookv1.AppendReply, error) {
	if !stop() || err != nil {
		// ctx ended (the stream is cancelled) or the batch failed: this
		// stream is done either way.
		s.reset()
	}
	if errors.Is(err, io.EOF) {
		return nil, &sdk.Error{Code: sdk.CodeIOError, Op: errOp, Detail: appendCall + ": the plugin ended the stream without a reply"}
	}
	if err != nil {
		return nil, fromStatus(ctx, appendCall, err)
	}
	return r, nil
}

// appendCall names Append in errors.
const appendCall = "persistence.Append"

// reset ends the stream, if any. Call with s.mu held.
func (s *appendStream) reset() {
	if s.stream != nil {
		s.cancel()
		s.stream, s.cancel = nil, nil
	}
}
