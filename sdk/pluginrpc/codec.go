package pluginrpc

import (
	"encoding/binary"
	"unicode/utf8"

	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// batchCodec is gRPC's proto codec with a cheaper path for the two messages
// that carry event batches, AppendRequest and ReadChunk:
//   - it encodes them into kept buffers, which gRPC gives back once it
//     has written them: an AppendRequest into pooled chunks
//     (marshalAppend), a ReadChunk into one of batchBuffers;
//   - it decodes them without copying each event on its own, as the
//     generic decoder does. An AppendRequest is not copied at all: each
//     event aliases the buffer gRPC read it into, which the codec holds
//     until the server's Append handler has served the request
//     (releaseRequest); only an event that spans two of those buffers is
//     copied, into a pooled buffer. A ReadChunk is copied once into a fresh
//     buffer that its events alias, since a Read's callback may keep them.
//
// The wire format is unchanged (still protobuf, content subtype "proto"),
// so either side may be any other gRPC implementation. A message the fast
// decoder does not recognise — an unknown field, a field with an
// unexpected wire type — goes to the generic decoder.
type batchCodec struct{ base encoding.CodecV2 }

// newBatchCodec returns the codec over gRPC's registered proto codec.
func newBatchCodec() batchCodec {
	return batchCodec{base: encoding.GetCodecV2(protocodec.Name)}
}

func (c batchCodec) Name() string { return protocodec.Name }

func (c batchCodec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(*logbookv1.AppendRequest); ok {
		if out, ok := marshalAppend(m); ok {
			return out, nil
		}
	}
	switch v.(type) {
	case *logbookv1.AppendRequest, *logbookv1.ReadChunk:
		m := v.(proto.Message)
		b := batchBuffers.Get(proto.Size(m))
		out, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend((*b)[:0], m)
		if err != nil {
			batchBuffers.Put(b)
			return nil, err
		}
		*b = out
		return mem.BufferSlice{mem.NewBuffer(b, batchBuffers)}, nil
	}
	return c.base.Marshal(v)
}

func (c batchCodec) Unmarshal(data mem.BufferSlice, v any) error {
	switch m := v.(type) {
	case *logbookv1.AppendRequest:
		held := &heldRequest{data: data}
		data.Ref()
		if decodeAppendFrames(data, m, held) {
			servedRequests.Store(m, held)
			return nil
		}
		held.release()
		m.Reset()
	case *logbookv1.ReadChunk:
		if b := data.Materialize(); decodeChunk(b, m) {
			return nil
		}
		m.Reset()
	}
	return c.base.Unmarshal(data, v)
}

// The AppendRequest and ReadChunk field numbers (sdk/proto/logbook/v1).
const (
	appendHandleField   = 1
	appendFirstSeqField = 2
	appendEventsField   = 3
	appendTenantField   = 4
	chunkEventsField    = 1
)

// decodeAppendFrames decodes an AppendRequest from the buffers gRPC read
// it into, events aliasing them; an event that spans two buffers is copied
// into a pooled buffer that held keeps. It reports false for anything but
// the fields it knows in their wire types.
func decodeAppendFrames(data mem.BufferSlice, m *logbookv1.AppendRequest, held *heldRequest) bool {
	c := frameCursor{bufs: data, rest: data.Len(), held: held}
	for c.more() {
		tag, ok := c.varint()
		if !ok || tag>>3 > uint64(protowire.MaxValidNumber) {
			return false
		}
		num, typ := protowire.Number(tag>>3), protowire.Type(tag&7)
		switch {
		case num == appendHandleField && typ == protowire.BytesType:
			v, ok := c.field()
			if !ok || !utf8.Valid(v) { // proto3 strings are UTF-8
				return false
			}
			m.Handle = string(v)
		case num == appendFirstSeqField && typ == protowire.VarintType:
			v, ok := c.varint()
			if !ok {
				return false
			}
			m.FirstSeq = int64(v)
		case num == appendEventsField && typ == protowire.BytesType:
			v, ok := c.field()
			if !ok {
				return false
			}
			m.Events = append(m.Events, v)
		case num == appendTenantField && typ == protowire.BytesType:
			v, ok := c.field()
			if !ok || !utf8.Valid(v) {
				return false
			}
			m.Tenant = string(v)
		default:
			return false
		}
	}
	return true
}

// frameCursor reads a message laid out over several buffers.
type frameCursor struct {
	bufs mem.BufferSlice
	i    int    // the buffer b is the rest of
	b    []byte // unread bytes of bufs[i]
	rest int    // unread bytes in all
	held *heldRequest
}

// more reports whether bytes are left, moving b to the next buffer that
// holds some.
func (c *frameCursor) more() bool {
	for len(c.b) == 0 && c.i < len(c.bufs) {
		c.b = c.bufs[c.i].ReadOnlyData()
		c.i++
	}
	return len(c.b) > 0
}

// varint reads a varint, which may span buffers.
func (c *frameCursor) varint() (uint64, bool) {
	if !c.more() {
		return 0, false
	}
	if len(c.b) >= binary.MaxVarintLen64 {
		v, n := protowire.ConsumeVarint(c.b)
		if n < 0 {
			return 0, false
		}
		c.b, c.rest = c.b[n:], c.rest-n
		return v, true
	}
	var tmp [binary.MaxVarintLen64]byte
	k := 0
	for k < len(tmp) && c.more() {
		tmp[k] = c.b[0]
		c.b, c.rest, k = c.b[1:], c.rest-1, k+1
		if tmp[k-1] < 0x80 {
			break
		}
	}
	v, n := protowire.ConsumeVarint(tmp[:k])
	return v, n == k
}

// field reads a length-delimited field's bytes, capped at their length:
// aliasing a buffer, or copied into a pooled one that c.held keeps when
// they span buffers.
func (c *frameCursor) field() ([]byte, bool) {
	l, ok := c.varint()
	if !ok || l > uint64(c.rest) {
		return nil, false
	}
	n := int(l)
	c.rest -= n
	if n <= len(c.b) {
		v := c.b[:n:n]
		c.b = c.b[n:]
		return v, true
	}
	p := frameBuffers.Get(n)
	c.held.spill = append(c.held.spill, p)
	v := (*p)[:n:n]
	for k := 0; k < n; {
		if !c.more() {
			return nil, false // not reached: rest counted these bytes
		}
		m := copy(v[k:], c.b)
		c.b, k = c.b[m:], k+m
	}
	return v, true
}

// decodeChunk decodes a ReadChunk into m, events aliasing b; it reports
// false for anything but its one field in its wire type.
func decodeChunk(b []byte, m *logbookv1.ReadChunk) bool {
	for len(b) > 0 {
		num, typ, tn := protowire.ConsumeTag(b)
		if tn < 0 || num != chunkEventsField || typ != protowire.BytesType {
			return false
		}
		v, n := protowire.ConsumeBytes(b[tn:])
		if n < 0 {
			return false
		}
		m.Events, b = append(m.Events, v[:len(v):len(v)]), b[tn+n:]
	}
	return true
}

// appendChunkBytes is the size of the pooled buffers marshalAppend encodes
// into.
const appendChunkBytes = 256 << 10

// marshalAppend encodes m exactly as protobuf does, into pooled buffers of
// appendChunkBytes (frameBuffers), the last one partly filled. A
// write-behind batch of tens of MiB is thus copied once, into buffers that
// earlier batches warmed and that gRPC gives back one by one as it writes
// them, where one buffer of the message's size would be fresh memory for
// the runtime to clear and the system to fault in, every batch. ok is
// false when m holds anything but the four fields encoded here (a field
// added to the message later, unknown fields); the caller then encodes it
// with protobuf.
func marshalAppend(m *logbookv1.AppendRequest) (out mem.BufferSlice, ok bool) {
	size := 0
	if m.Handle != "" {
		size += 1 + protowire.SizeBytes(len(m.Handle))
	}
	if m.FirstSeq != 0 {
		size += 1 + protowire.SizeVarint(uint64(m.FirstSeq))
	}
	for _, e := range m.Events {
		size += 1 + protowire.SizeBytes(len(e))
	}
	if m.Tenant != "" {
		size += 1 + protowire.SizeBytes(len(m.Tenant))
	}
	if size != proto.Size(m) {
		return nil, false
	}
	var w chunkWriter
	var head [1 + binary.MaxVarintLen64]byte
	if m.Handle != "" {
		w.write(protowire.AppendVarint(protowire.AppendTag(head[:0], appendHandleField, protowire.BytesType), uint64(len(m.Handle))))
		w.write([]byte(m.Handle))
	}
	if m.FirstSeq != 0 {
		w.write(protowire.AppendVarint(protowire.AppendTag(head[:0], appendFirstSeqField, protowire.VarintType), uint64(m.FirstSeq)))
	}
	for _, e := range m.Events {
		w.write(protowire.AppendVarint(protowire.AppendTag(head[:0], appendEventsField, protowire.BytesType), uint64(len(e))))
		w.write(e)
	}
	if m.Tenant != "" {
		w.write(protowire.AppendVarint(protowire.AppendTag(head[:0], appendTenantField, protowire.BytesType), uint64(len(m.Tenant))))
		w.write([]byte(m.Tenant))
	}
	return w.done(), true
}

// chunkWriter copies bytes into a sequence of pooled buffers of
// appendChunkBytes.
type chunkWriter struct {
	out mem.BufferSlice
	cur *[]byte // the buffer being filled; nil before the first write
}

func (w *chunkWriter) write(p []byte) {
	for len(p) > 0 {
		if w.cur == nil || len(*w.cur) == cap(*w.cur) {
			w.seal()
			w.cur = frameBuffers.Get(appendChunkBytes)
			*w.cur = (*w.cur)[:0]
		}
		b := *w.cur
		n := min(len(p), cap(b)-len(b))
		*w.cur = append(b, p[:n]...)
		p = p[n:]
	}
}

// seal adds the buffer being filled to the output.
func (w *chunkWriter) seal() {
	if w.cur != nil {
		w.out = append(w.out, mem.NewBuffer(w.cur, frameBuffers))
		w.cur = nil
	}
}

// done returns the buffers written; w is not used afterwards.
func (w *chunkWriter) done() mem.BufferSlice {
	w.seal()
	return w.out
}
