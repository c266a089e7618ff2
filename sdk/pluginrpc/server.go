package pluginrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/errinfo"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"google.golang.org/protobuf/encoding/protowire"
)

// The server adapters turn gRPC requests into calls of the plain sdk
// interfaces. They are transparent: values are passed through unchecked so
// that a backend behaves the same in process and over gRPC, and every error
// goes through toStatus.

type infoServer struct {
	logbookv1.UnimplementedPluginInfoServer
	info         sdk.Info
	configurable sdk.Configurable
}

func (s *infoServer) GetInfo(context.Context, *logbookv1.GetInfoRequest) (*logbookv1.GetInfoReply, error) {
	i := s.info
	r := &logbookv1.GetInfoReply{
		Name:         i.Name,
		Version:      i.Version,
		ConfigSchema: i.ConfigSchema,
		Capabilities: slices.Clone(i.Capabilities),
	}
	for _, k := range i.Kinds {
		r.Kinds = append(r.Kinds, string(k))
	}
	for _, v := range i.ProtocolVersions {
		r.ProtocolVersions = append(r.ProtocolVersions, int32(v))
	}
	for _, d := range i.EventTypes {
		r.EventTypes = append(r.EventTypes, &logbookv1.EventTypeDecl{Type: d.Type, Ignorable: d.Ignorable})
	}
	return r, nil
}

func (s *infoServer) Configure(ctx context.Context, req *logbookv1.ConfigureRequest) (*logbookv1.Empty, error) {
	if s.configurable != nil {
		if err := s.configurable.Configure(ctx, req.GetConfigJson()); err != nil {
			return nil, toStatus(err)
		}
		return &logbookv1.Empty{}, nil
	}
	if !isEmptyObject(req.GetConfigJson()) {
		return nil, toStatus(sdk.Errorf(sdk.CodeConfigInvalid, errOp,
			"plugin %q takes no configuration; remove its config block (got %s)", s.info.Name, errinfo.Clip(string(req.GetConfigJson()))))
	}
	return &logbookv1.Empty{}, nil
}

// isEmptyObject reports whether b is empty or a JSON object without members.
func isEmptyObject(b []byte) bool {
	if len(bytes.TrimSpace(b)) == 0 {
		return true
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil && len(m) == 0
}

type persistenceServer struct {
	logbookv1.UnimplementedPersistenceServer
	impl       sdk.Persistence
	chunkBytes int         // most event bytes (with framing) per ReadChunk
	views      serverViews // impl's tenant views (backend)
}

func (s *persistenceServer) Describe(ctx context.Context, _ *logbookv1.DescribeRequest) (*logbookv1.DescribeReply, error) {
	p, err := s.backend("")
	if err != nil {
		return nil, toStatus(err)
	}
	d, err := p.Describe(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	limit, open, err := descriptors()
	if err != nil {
		return nil, toStatus(err)
	}
	return &logbookv1.DescribeReply{Name: d.Name, FormatVersion: int64(d.FormatVersion), Compression: d.Compression,
		DescriptorsPerSession: int32(d.DescriptorsPerSession), DescriptorLimit: limit, DescriptorsOpen: open}, nil
}

func (s *persistenceServer) Create(ctx context.Context, req *logbookv1.CreateRequest) (*logbookv1.HandleReply, error) {
	p, err := s.backend(req.GetTenant())
	if err != nil {
		return nil, toStatus(err)
	}
	h, err := headerjson.Decode(req.GetHeader(), "", "")
	if err != nil {
		if sdk.CodeOf(err) == sdk.CodeCorruptLog {
			// A header the host sent is bad input, not a corrupt log.
			err = sdk.Wrapf(sdk.CodeHeaderInvalid, errOp, err, "the header of Create is not a valid session header")
		}
		return nil, toStatus(err)
	}
	o, err := p.Create(ctx, h)
	if err != nil {
		return nil, toStatus(err)
	}
	if o.Header.ID == "" {
		o.Header = h
	}
	return handleReply(o), nil
}

// CopyPrefix serves the backend's sdk.PrefixCopier, or answers
// Unimplemented when the backend has none.
func (s *persistenceServer) CopyPrefix(ctx context.Context, req *logbookv1.CopyPrefixRequest) (*logbookv1.HandleReply, error) {
	pc, err := served[sdk.PrefixCopier](s, req.GetTenant(), "this persistence backend cannot copy a prefix (it implements no sdk.PrefixCopier)")
	if err != nil {
		return nil, err
	}
	h, err := decodeHeader(req.GetHeader(), "CopyPrefix")
	if err != nil {
		return nil, toStatus(err)
	}
	o, err := pc.CopyPrefix(ctx, req.GetSourceId(), sdk.Seq(req.GetBoundary()), h)
	if err != nil {
		return nil, toStatus(err)
	}
	if o.Header.ID == "" {
		o.Header = h
	}
	return handleReply(o), nil
}

// decodeHeader decodes the header JSON a call (CopyPrefix, Import)
// carries: HEADER_INVALID when it is not a valid session header.
func decodeHeader(b []byte, call string) (sdk.Header, error) {
	h, err := headerjson.Decode(b, "", "")
	if sdk.CodeOf(err) == sdk.CodeCorruptLog {
		err = sdk.Wrapf(sdk.CodeHeaderInvalid, errOp, err, "the header of %s is not a valid session header", call)
	}
	return h, err
}

func (s *persistenceServer) Open(ctx context.Context, req *logbookv1.OpenRequest) (*logbookv1.HandleReply, error) {
	p, err := s.backend(req.GetTenant())
	if err != nil {
		return nil, toStatus(err)
	}
	o, err := p.Open(ctx, req.GetId(), sdk.Access(req.GetAccess()))
	if err != nil {
		return nil, toStatus(err)
	}
	return handleReply(o), nil
}

func handleReply(o sdk.Opened) *logbookv1.HandleReply {
	return &logbookv1.HandleReply{
		Handle:       o.Handle,
		Header:       headerjson.Encode(o.Header),
		NextSeq:      int64(o.NextSeq),
		Revision:     o.Revision,
		TornBytes:    o.Torn.Bytes,
		TornFromSeq:  int64(o.Torn.FromSeq),
		TornArtifact: o.Torn.Artifact,
	}
}

// Append serves one long-lived stream: each request is one compare-and-set
// batch answered by one reply, in order. The first failing batch ends the
// stream with its status, so later batches on it are never applied.
func (s *persistenceServer) Append(stream logbookv1.Persistence_AppendServer) error {
	ctx := stream.Context()
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p, err := s.backend(req.GetTenant())
		if err != nil {
			releaseRequest(req)
			return toStatus(err)
		}
		d, err := p.Append(ctx, req.GetHandle(), sdk.Seq(req.GetFirstSeq()), req.GetEvents())
		releaseRequest(req) // the backend keeps nothing Append hands it
		if err != nil {
			return toStatus(err)
		}
		if err := stream.Send(&logbookv1.AppendReply{NextSeq: int64(d.NextSeq), Revision: d.Revision}); err != nil {
			return err
		}
	}
}

// Read re-chunks what the backend yields so that no ReadChunk holds more than
// chunkBytes of events (one larger event travels alone), and coalesces small
// chunks up to that size. Events read before a failure are sent before the
// failure's status, as an in-process Read calls fn before returning it.
func (s *persistenceServer) Read(req *logbookv1.ReadRequest, stream logbookv1.Persistence_ReadServer) error {
	c := rechunker{max: s.chunkBytes, send: func(events [][]byte) error {
		return stream.Send(&logbookv1.ReadChunk{Events: events})
	}}
	p, err := s.backend(req.GetTenant())
	if err != nil {
		return toStatus(err)
	}
	err = p.Read(stream.Context(), req.GetHandle(), sdk.Offset(req.GetOffset()), req.GetLength(), c.add)
	if err := c.finish(); err != nil {
		return err
	}
	return toStatus(err)
}

// rechunker collects the events a backend yields into messages of at most
// max bytes of events (one larger event travels alone) and sends them.
type rechunker struct {
	max     int
	send    func(events [][]byte) error
	chunk   [][]byte
	size    int
	sendErr error // the first failed send; the backend's read ends with it
}

// add is the fn of a backend read.
func (c *rechunker) add(events [][]byte) error {
	for _, e := range events {
		n := eventFieldSize(len(e))
		if c.size+n > c.max && len(c.chunk) > 0 {
			if c.sendErr = c.flush(); c.sendErr != nil {
				return c.sendErr
			}
		}
		c.chunk = append(c.chunk, e)
		c.size += n
	}
	return nil
}

func (c *rechunker) flush() error {
	if len(c.chunk) == 0 {
		return nil
	}
	err := c.send(c.chunk)
	c.chunk, c.size = nil, 0
	return err
}

// finish sends what is left, after the backend's read returned: the send
// error that ended the read, if any, else the last send's.
func (c *rechunker) finish() error {
	if c.sendErr != nil {
		return c.sendErr
	}
	return c.flush()
}

// ReadDamaged serves the backend's sdk.SalvageReader, or answers
// Unimplemented when the backend has none: the valid prefix re-chunked as
// Read does, then the tail in pieces of at most chunkBytes, then the
// summary. Events read before a failure are sent before its status.
func (s *persistenceServer) ReadDamaged(req *logbookv1.ReadDamagedRequest, stream logbookv1.Persistence_ReadDamagedServer) error {
	sr, err := served[sdk.SalvageReader](s, req.GetTenant(), "this persistence backend cannot read a damaged log (it implements no sdk.SalvageReader)")
	if err != nil {
		return err
	}
	c := rechunker{max: s.chunkBytes, send: func(events [][]byte) error {
		return stream.Send(&logbookv1.DamagedPart{Part: &logbookv1.DamagedPart_Events{Events: &logbookv1.ReadChunk{Events: events}}})
	}}
	d, err := sr.ReadDamaged(stream.Context(), req.GetId(), c.add)
	if err := c.finish(); err != nil {
		return err
	}
	if err != nil {
		return toStatus(err)
	}
	for tail := d.Damage.Tail; len(tail) > 0; {
		n := min(len(tail), s.chunkBytes)
		if err := stream.Send(&logbookv1.DamagedPart{Part: &logbookv1.DamagedPart_Tail{Tail: tail[:n]}}); err != nil {
			return err
		}
		tail = tail[n:]
	}
	return stream.Send(&logbookv1.DamagedPart{Part: &logbookv1.DamagedPart_Summary{Summary: &logbookv1.DamagedSummary{
		Header:               headerjson.Encode(d.Header),
		ValidEvents:          d.ValidEvents,
		Corrupt:              d.Corrupt,
		DamageOffset:         d.Damage.Offset,
		DamageBytes:          d.Damage.Bytes,
		IntactEventsExcluded: d.Damage.IntactEventsExcluded,
		DamageReason:         errinfo.Clip(strings.ToValidUTF8(d.Damage.Reason, "\uFFFD")), // proto strings are UTF-8
	}}})
}

// eventFieldSize is the encoded size of one element of a repeated bytes field
// with a one-byte tag (field numbers below 16).
func eventFieldSize(n int) int {
	return 1 + protowire.SizeBytes(n)
}

// Flush flushes the backend.
func (s *persistenceServer) Flush(ctx context.Context, req *logbookv1.HandleRequest) (*logbookv1.FlushReply, error) {
	p, err := s.backend(req.GetTenant())
	if err != nil {
		return nil, toStatus(err)
	}
	d, err := p.Flush(ctx, req.GetHandle())
	if err != nil {
		return nil, toStatus(err)
	}
	return &logbookv1.FlushReply{DurableNextSeq: int64(d.NextSeq), Revision: d.Revision}, nil
}

func (s *persistenceServer) Close(ctx context.Context, req *logbookv1.HandleRequest) (*logbookv1.Empty, error) {
	p, err := s.backend(req.GetTenant())
	if err != nil {
		return nil, toStatus(err)
	}
	if err := p.Close(ctx, req.GetHandle()); err != nil {
		return nil, toStatus(err)
	}
	return &logbookv1.Empty{}, nil
}

func (s *persistenceServer) Stat(ctx context.Context, req *logbookv1.StatRequest) (*logbookv1.StatReply, error) {
	p, err := s.backend(req.GetTenant())
	if err != nil {
		return nil, toStatus(err)
	}
	st, err := p.Stat(ctx, req.GetId())
	if err != nil {
		return nil, toStatus(err)
	}
	r := &logbookv1.StatReply{Header: headerjson.Encode(st.Header), Revision: st.Revision, FormatVersion: int64(st.FormatVersion)}
	if st.EventCount >= 0 {
		r.EventCount = &st.EventCount
	}
	if st.SizeBytes >= 0 {
		r.SizeBytes = &st.SizeBytes
	}
	if st.LastActivity > 0 {
		r.LastActivity = &st.LastActivity
	}
	return r, nil
}

func (s *persistenceServer) List(req *logbookv1.ListRequest, stream logbookv1.Persistence_ListServer) error {
	p, err := s.backend(req.GetTenant())
	if err != nil {
		return toStatus(err)
	}
	var sendErr error
	err = p.List(stream.Context(), func(e sdk.ListEntry) error {
		r := &logbookv1.ListEntry{Id: e.ID, Revision: e.Revision, Error: errorToProto(e.Err)}
		if e.Header.ID != "" {
			r.Header = headerjson.Encode(e.Header)
		}
		if e.LastActivity > 0 {
			r.LastActivity = &e.LastActivity
		}
		if e.EventCount >= 0 {
			r.EventCount = &e.EventCount
		}
		sendErr = stream.Send(r)
		return sendErr
	})
	if sendErr != nil {
		return sendErr
	}
	return toStatus(err)
}

type summarizerServer struct {
	logbookv1.UnimplementedSummarizerServer
	impl sdk.Summarizer
}

func (s *summarizerServer) Summarize(ctx context.Context, req *logbookv1.SummarizeRequest) (*logbookv1.SummarizeReply, error) {
	r, err := s.impl.Summarize(ctx, sdk.SummarizeRequest{
		SessionID:    req.GetSessionId(),
		CompactionID: req.GetCompactionId(),
		Provider:     req.GetProvider(),
		Model:        req.GetModel(),
		MaxTokens:    req.GetMaxTokens(),
		System:       req.GetSystem(),
		Tools:        req.GetTools(),
		Config:       req.GetConfig(),
		Messages:     req.GetMessages(),
		Instruction:  req.GetInstruction(),
	})
	if err != nil {
		return nil, toStatus(err)
	}
	return &logbookv1.SummarizeReply{Summary: r.Summary, Provider: r.Provider, Model: r.Model, Usage: r.Usage, RawOutput: r.RawOutput}, nil
}

// SelectRange answers "no choice" (ok = false) when the summarizer is not an
// sdk.RangeSelector.
func (s *summarizerServer) SelectRange(ctx context.Context, req *logbookv1.SelectRangeRequest) (*logbookv1.SelectRangeReply, error) {
	sel, ok := s.impl.(sdk.RangeSelector)
	if !ok {
		return &logbookv1.SelectRangeReply{}, nil
	}
	r, err := sel.SelectRange(ctx, sdk.SelectRangeRequest{
		SessionID:    req.GetSessionId(),
		Nodes:        toSeqs(req.GetNodes()),
		Tokens:       req.GetTokens(),
		Messages:     req.GetMessages(),
		RetainTokens: req.GetRetainTokens(),
	})
	if err != nil {
		return nil, toStatus(err)
	}
	return &logbookv1.SelectRangeReply{Start: int64(r.Start), End: int64(r.End), Ok: r.OK}, nil
}

type prunerServer struct {
	logbookv1.UnimplementedPrunerServer
	impl sdk.Pruner
}

func (s *prunerServer) Prune(ctx context.Context, req *logbookv1.PruneRequest) (*logbookv1.PruneReply, error) {
	nodes := make([]sdk.PruneNode, 0, len(req.GetNodes()))
	for _, n := range req.GetNodes() {
		nodes = append(nodes, sdk.PruneNode{Seq: sdk.Seq(n.GetSeq()), CallID: n.GetCallId(), Message: n.GetMessage()})
	}
	b := req.GetBudget()
	reps, err := s.impl.Prune(ctx, req.GetSessionId(), nodes, sdk.PruneBudget{
		ThresholdChars: b.GetThresholdChars(),
		HeadChars:      b.GetHeadChars(),
		TailChars:      b.GetTailChars(),
	})
	if err != nil {
		return nil, toStatus(err)
	}
	r := &logbookv1.PruneReply{Replacements: make([]*logbookv1.PruneReplacement, 0, len(reps))}
	for _, p := range reps {
		r.Replacements = append(r.Replacements, &logbookv1.PruneReplacement{
			Seq: int64(p.Seq), Content: p.Content, CharsBefore: p.CharsBefore, CharsAfter: p.CharsAfter,
		})
	}
	return r, nil
}

type projectionServer struct {
	logbookv1.UnimplementedProjectionServer
	impl sdk.Projector
}

func (s *projectionServer) Declare(ctx context.Context, _ *logbookv1.DeclareRequest) (*logbookv1.DeclareReply, error) {
	types, err := s.impl.Declare(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return &logbookv1.DeclareReply{Types: types}, nil
}

func (s *projectionServer) Project(ctx context.Context, req *logbookv1.ProjectRequest) (*logbookv1.ProjectReply, error) {
	out, err := s.impl.Project(ctx, sdk.ProjectRequest{
		SessionID: req.GetSessionId(),
		Event:     req.GetEvent(),
		Nodes:     toSeqs(req.GetNodes()),
		Targets:   targetsFromProto(req.GetTargets()),
	})
	if err != nil {
		return nil, toStatus(err)
	}
	return &logbookv1.ProjectReply{Messages: targetsToProto(out)}, nil
}

func toSeqs(v []int64) []sdk.Seq {
	if v == nil {
		return nil
	}
	out := make([]sdk.Seq, len(v))
	for i, x := range v {
		out[i] = sdk.Seq(x)
	}
	return out
}

func fromSeqs(v []sdk.Seq) []int64 {
	if v == nil {
		return nil
	}
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

func targetsFromProto(v []*logbookv1.ProjectTarget) []sdk.ProjectTarget {
	if v == nil {
		return nil
	}
	out := make([]sdk.ProjectTarget, len(v))
	for i, t := range v {
		out[i] = sdk.ProjectTarget{Seq: sdk.Seq(t.GetSeq()), EventType: t.GetEventType(), Message: t.GetMessage()}
	}
	return out
}

func targetsToProto(v []sdk.ProjectTarget) []*logbookv1.ProjectTarget {
	if v == nil {
		return nil
	}
	out := make([]*logbookv1.ProjectTarget, len(v))
	for i, t := range v {
		out[i] = &logbookv1.ProjectTarget{Seq: int64(t.Seq), EventType: t.EventType, Message: t.Message}
	}
	return out
}
