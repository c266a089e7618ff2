package pluginrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/go-plugin"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// Client is the host's view of one connected plugin process: typed
// accessors over a go-plugin ClientProtocol. It is safe for concurrent use.
// Each accessor dispenses its kind once and returns the same adapter on
// later calls. Dispensing a kind the plugin does not serve succeeds, but its
// calls fail; check Info().Kinds first.
type Client struct {
	rpc plugin.ClientProtocol

	mu        sync.Mutex
	dispensed map[string]any
}

// NewClient wraps a connected go-plugin client, as returned by
// (*plugin.Client).Client() for a config built with NewClientConfig.
func NewClient(rpc plugin.ClientProtocol) *Client {
	return &Client{rpc: rpc, dispensed: map[string]any{}}
}

// Info asks the plugin to describe itself (PluginInfo.GetInfo).
func (c *Client) Info(ctx context.Context) (sdk.Info, error) {
	ic, err := dispense[*infoClient](c, InfoPluginName)
	if err != nil {
		return sdk.Info{}, err
	}
	return ic.getInfo(ctx)
}

// Configure passes the plugin block's config, a JSON object ("{}" when
// empty), to the plugin (PluginInfo.Configure). The host calls it once,
// after Info and before any other call.
func (c *Client) Configure(ctx context.Context, config []byte) error {
	ic, err := dispense[*infoClient](c, InfoPluginName)
	if err != nil {
		return err
	}
	_, err = ic.rpc.Configure(ctx, &logbookv1.ConfigureRequest{ConfigJson: config})
	return fromStatus(ctx, "info.Configure", err)
}

// Persistence returns the plugin's backend. Append keeps one long-lived
// gRPC stream per handle and splits batches larger than RPCMaxBytes into
// consecutive compare-and-set appends; see the package documentation.
func (c *Client) Persistence() (sdk.Persistence, error) {
	return dispense[*persistenceClient](c, string(sdk.KindPersistence))
}

// Summarizer returns the plugin's summarizer. The value also implements
// sdk.RangeSelector; a plugin without the "select-range" capability answers
// SelectRange with OK false.
func (c *Client) Summarizer() (sdk.Summarizer, error) {
	return dispense[*summarizerClient](c, string(sdk.KindSummarizer))
}

// Pruner returns the plugin's tool-result pruner.
func (c *Client) Pruner() (sdk.Pruner, error) {
	return dispense[*prunerClient](c, string(sdk.KindPruner))
}

// Projector returns the plugin's message projections.
func (c *Client) Projector() (sdk.Projector, error) {
	return dispense[*projectionClient](c, string(sdk.KindProjection))
}

// dispense returns the cached adapter of a plugin name, dispensing it first.
func dispense[T any](c *Client, name string) (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero T
	raw, ok := c.dispensed[name]
	if !ok {
		var err error
		raw, err = c.rpc.Dispense(name)
		if err != nil {
			return zero, &sdk.Error{Code: sdk.CodePluginUnavailable, Op: errOp,
				Detail: fmt.Sprintf("cannot dispense the %q plugin", name), Err: err}
		}
		c.dispensed[name] = raw
	}
	v, ok := raw.(T)
	if !ok {
		return zero, &sdk.Error{Code: sdk.CodePluginUnavailable, Op: errOp,
			Detail: fmt.Sprintf("the %q plugin dispensed %T; build the host's go-plugin config with pluginrpc.PluginSets", name, raw)}
	}
	return v, nil
}

type infoClient struct {
	rpc logbookv1.PluginInfoClient
}

func (c *infoClient) getInfo(ctx context.Context) (sdk.Info, error) {
	r, err := c.rpc.GetInfo(ctx, &logbookv1.GetInfoRequest{})
	if err != nil {
		return sdk.Info{}, fromStatus(ctx, "info.GetInfo", err)
	}
	info := sdk.Info{
		Name:         r.GetName(),
		Version:      r.GetVersion(),
		ConfigSchema: r.GetConfigSchema(),
		Capabilities: r.GetCapabilities(),
	}
	for _, k := range r.GetKinds() {
		info.Kinds = append(info.Kinds, sdk.Kind(k))
	}
	for _, v := range r.GetProtocolVersions() {
		info.ProtocolVersions = append(info.ProtocolVersions, int(v))
	}
	for _, d := range r.GetEventTypes() {
		info.EventTypes = append(info.EventTypes, sdk.EventTypeDecl{Type: d.GetType(), Ignorable: d.GetIgnorable()})
	}
	return info, nil
}

// persistenceClient implements sdk.Persistence over gRPC.
type persistenceClient struct {
	rpc      logbookv1.PersistenceClient
	done     context.Context // ends when the plugin process is gone
	maxBytes int

	mu      sync.Mutex
	streams map[string]*appendStream // by handle
}

func newPersistenceClient(done context.Context, rpc logbookv1.PersistenceClient, maxBytes int) *persistenceClient {
	if done == nil {
		done = context.Background()
	}
	return &persistenceClient{rpc: rpc, done: done, maxBytes: maxBytes, streams: map[string]*appendStream{}}
}

func (c *persistenceClient) Describe(ctx context.Context) (sdk.Description, error) {
	r, err := c.rpc.Describe(ctx, &logbookv1.DescribeRequest{})
	if err != nil {
		return sdk.Description{}, fromStatus(ctx, "persistence.Describe", err)
	}
	return sdk.Description{Name: r.GetName(), FormatVersion: int(r.GetFormatVersion()), Compression: r.GetCompression()}, nil
}

// Create returns the header given as Opened.Header.
func (c *persistenceClient) Create(ctx context.Context, h sdk.Header) (sdk.Opened, error) {
	if err := sdk.ValidateSessionID(h.ID); err != nil {
		return sdk.Opened{}, err // proto strings cannot carry it, and the header JSON would alter it
	}
	r, err := c.rpc.Create(ctx, &logbookv1.CreateRequest{Header: headerjson.Encode(h)})
	if err != nil {
		return sdk.Opened{}, fromStatus(ctx, "persistence.Create", err)
	}
	o := opened(r)
	o.Header = h
	return o, nil
}

func (c *persistenceClient) Open(ctx context.Context, id string, access sdk.Access) (sdk.Opened, error) {
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Opened{}, err
	}
	r, err := c.rpc.Open(ctx, &logbookv1.OpenRequest{Id: id, Access: logbookv1.Access(access)})
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

// Append sends the batch over the handle's long-lived Append stream. A batch
// whose request would exceed RPCMaxBytes goes as several consecutive
// compare-and-set appends, each of the largest prefix that fits, first_seq
// advancing; they are not atomic together: when a later part fails, the
// earlier parts stay stored and the error is that part's. An event that
// cannot fit a request alone is refused with EVENT_TOO_LARGE before
// anything is sent. The reply is the last part's.
func (c *persistenceClient) Append(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte) (sdk.Durable, error) {
	d, _, _, err := c.appendParts(ctx, handle, firstSeq, events, false)
	return d, err
}

// AppendFlush is Append and then Flush of handle, with one round trip less:
// the Flush request goes right behind the last Append request, marked with
// the next seq that Append brings the handle to, and the plugin's server
// holds it until that Append is done (see flushAfterKey). The backend still
// sees Append, then Flush. err is the Append's error, as Append returns it,
// and then nothing was flushed; otherwise appended is the Append's reply and
// flushed or flushErr the Flush's outcome. Against a server that answers
// the Flush before the Append, it flushes again.
func (c *persistenceClient) AppendFlush(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte) (appended, flushed sdk.Durable, flushErr, err error) {
	return c.appendParts(ctx, handle, firstSeq, events, true)
}

// appendParts is Append, and AppendFlush when flush is set.
func (c *persistenceClient) appendParts(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte, flush bool) (appended, flushed sdk.Durable, flushErr, err error) {
	if err := checkHandle(handle); err != nil {
		return sdk.Durable{}, sdk.Durable{}, nil, err
	}
	parts, err := splitBatch(handle, firstSeq, events, c.maxBytes)
	if err != nil {
		return sdk.Durable{}, sdk.Durable{}, nil, err
	}
	s := c.stream(handle)
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := firstSeq
	for i, part := range parts {
		req := &logbookv1.AppendRequest{Handle: handle, FirstSeq: int64(seq), Events: part}
		var r *logbookv1.AppendReply
		if flush && i == len(parts)-1 {
			r, flushed, flushErr, err = s.roundTripFlush(ctx, c, req)
		} else {
			r, err = s.roundTrip(ctx, c, req)
		}
		if err != nil {
			return sdk.Durable{}, sdk.Durable{}, nil, err
		}
		appended = sdk.Durable{NextSeq: sdk.Offset(r.GetNextSeq()), Revision: r.GetRevision()}
		seq += sdk.Seq(len(part))
	}
	return appended, flushed, flushErr, nil
}

// splitBatch cuts events into the consecutive parts sent as one request
// each, so that no request encodes to more than maxBytes. An empty batch is
// one empty part: the backend decides what it means.
func splitBatch(handle string, firstSeq sdk.Seq, events [][]byte, maxBytes int) ([][][]byte, error) {
	// handle (field 1) and the largest first_seq (field 2, 10-byte varint).
	base := 1 + protowire.SizeBytes(len(handle)) + 1 + 10
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

// roundTripFlush is roundTrip with a Flush of the handle sent right behind
// the request (AppendFlush). The reply is awaited beside the Flush, and a
// failed batch cancels the Flush. Call with s.mu held.
func (s *appendStream) roundTripFlush(ctx context.Context, c *persistenceClient, req *logbookv1.AppendRequest) (r *logbookv1.AppendReply, flushed sdk.Durable, flushErr, err error) {
	stop, err := s.send(ctx, c, req)
	if err != nil {
		return nil, sdk.Durable{}, nil, err
	}
	after := req.GetFirstSeq() + int64(len(req.GetEvents()))
	fctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(ctx, flushAfterKey, strconv.FormatInt(after, 10)))
	defer cancel()
	type reply struct {
		r   *logbookv1.AppendReply
		err error
	}
	got := make(chan reply, 1)
	go func() {
		r, err := s.stream.Recv()
		if err != nil {
			cancel() // the server lets the Flush go on too; do not wait for it
		}
		got <- reply{r, err}
	}()
	flushed, flushErr = flushResult(ctx)(c.rpc.Flush(fctx, &logbookv1.HandleRequest{Handle: req.GetHandle()}))
	rep := <-got
	if r, err = s.finish(ctx, stop, rep.r, rep.err); err != nil {
		return nil, sdk.Durable{}, nil, err
	}
	if flushErr == nil && int64(flushed.NextSeq) < after {
		// A server that does not hold the Flush answered before the batch.
		flushed, flushErr = c.Flush(ctx, req.GetHandle())
	}
	return r, flushed, flushErr, nil
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

func (c *persistenceClient) Read(ctx context.Context, handle string, offset sdk.Offset, length int64, fn func(events [][]byte) error) error {
	if err := checkHandle(handle); err != nil {
		return err
	}
	const call = "persistence.Read"
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.rpc.Read(rctx, &logbookv1.ReadRequest{Handle: handle, Offset: int64(offset), Length: length})
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
	return flushResult(ctx)(c.rpc.Flush(ctx, &logbookv1.HandleRequest{Handle: handle}))
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
	_, err := c.rpc.Close(ctx, &logbookv1.HandleRequest{Handle: handle})
	return fromStatus(ctx, "persistence.Close", err)
}

func (c *persistenceClient) Stat(ctx context.Context, id string) (sdk.Stat, error) {
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Stat{}, err
	}
	r, err := c.rpc.Stat(ctx, &logbookv1.StatRequest{Id: id})
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
	return st, nil
}

// List decodes each entry's header; an entry whose header does not decode
// carries the decoding error.
func (c *persistenceClient) List(ctx context.Context, fn func(sdk.ListEntry) error) error {
	const call = "persistence.List"
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.rpc.List(lctx, &logbookv1.ListRequest{})
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
		e := sdk.ListEntry{ID: r.GetId(), Revision: r.GetRevision()}
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
	st, err := c.rpc.ReadDamaged(rctx, &logbookv1.ReadDamagedRequest{Id: id})
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

// summarizerClient implements sdk.Summarizer and sdk.RangeSelector over gRPC.
type summarizerClient struct {
	rpc logbookv1.SummarizerClient
}

func (c *summarizerClient) Summarize(ctx context.Context, r sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
	rep, err := c.rpc.Summarize(ctx, &logbookv1.SummarizeRequest{
		SessionId:    r.SessionID,
		CompactionId: r.CompactionID,
		Provider:     r.Provider,
		Model:        r.Model,
		MaxTokens:    r.MaxTokens,
		System:       r.System,
		Tools:        r.Tools,
		Config:       r.Config,
		Messages:     r.Messages,
		Instruction:  r.Instruction,
	})
	if err != nil {
		return sdk.SummarizeReply{}, fromStatus(ctx, "summarizer.Summarize", err)
	}
	return sdk.SummarizeReply{
		Summary:   rep.GetSummary(),
		Provider:  rep.GetProvider(),
		Model:     rep.GetModel(),
		Usage:     rep.GetUsage(),
		RawOutput: rep.GetRawOutput(),
	}, nil
}

func (c *summarizerClient) SelectRange(ctx context.Context, r sdk.SelectRangeRequest) (sdk.SelectRangeReply, error) {
	rep, err := c.rpc.SelectRange(ctx, &logbookv1.SelectRangeRequest{
		SessionId:    r.SessionID,
		Nodes:        fromSeqs(r.Nodes),
		Tokens:       r.Tokens,
		Messages:     r.Messages,
		RetainTokens: r.RetainTokens,
	})
	if err != nil {
		return sdk.SelectRangeReply{}, fromStatus(ctx, "summarizer.SelectRange", err)
	}
	return sdk.SelectRangeReply{Start: sdk.Seq(rep.GetStart()), End: sdk.Seq(rep.GetEnd()), OK: rep.GetOk()}, nil
}

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

// Compile-time checks of the adapters.
var (
	_ sdk.Persistence   = (*persistenceClient)(nil)
	_ sdk.SalvageReader = (*persistenceClient)(nil)
	_ sdk.Summarizer    = (*summarizerClient)(nil)
	_ sdk.RangeSelector = (*summarizerClient)(nil)
	_ sdk.Pruner        = (*prunerClient)(nil)
	_ sdk.Projector     = (*projectionClient)(nil)
)

// checkHandle refuses a handle no plugin can have issued: proto strings
// carry only valid UTF-8.
func checkHandle(handle string) error {
	if utf8.ValidString(handle) {
		return nil
	}
	return sdk.Errorf(sdk.CodeHandleClosed, "persistence", "handle %q was never issued", handle)
}
