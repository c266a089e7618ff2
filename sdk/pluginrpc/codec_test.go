package pluginrpc

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// decodeBoth decodes b as a message of m's type with the batch codec and
// with protobuf's generic decoder. The codec gets b cut into buffers of
// 1, 5, 16, 300 and 4096 bytes in turn, as gRPC hands over a message read
// frame by frame: varints and events span buffers.
func decodeBoth[M proto.Message](t testing.TB, b []byte, fresh func() M) (fast, generic M, fastErr, genericErr error) {
	fast, generic = fresh(), fresh()
	var frames mem.BufferSlice
	for i, rest := 0, b; len(rest) > 0; i++ {
		n := min(len(rest), []int{1, 5, 16, 300, 4096}[i%5])
		frames, rest = append(frames, mem.SliceBuffer(rest[:n])), rest[n:]
	}
	fastErr = newBatchCodec().Unmarshal(frames, fast)
	genericErr = proto.Unmarshal(b, generic)
	return
}

// capped fails unless every event ends at its capacity, so that appending
// to one never overwrites the next.
func capped(t *testing.T, what string, events [][]byte) {
	t.Helper()
	for k, e := range events {
		if cap(e) != len(e) {
			t.Fatalf("%s event %d: cap %d beyond its length %d", what, k, cap(e), len(e))
		}
	}
}

func randomEvents(r *rand.Rand) [][]byte {
	events := make([][]byte, r.IntN(40))
	for i := range events {
		events[i] = make([]byte, []int{0, 1, 127, 128, 5000}[r.IntN(5)])
		for k := range events[i] {
			events[i][k] = byte(r.IntN(256))
		}
	}
	return events
}

// The fast decoder yields exactly what protobuf's generic decoder yields,
// for append requests and read chunks of every shape, and each event is
// capped at its own length, so appending to one never overwrites the next.
func TestBatchCodecDecodesAsProto(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		req := &logbookv1.AppendRequest{Handle: []string{"", "h-1", "hände"}[i%3], FirstSeq: []int64{0, 1, 1 << 53, -1}[i%4], Events: randomEvents(r),
			Tenant: []string{"", "", "acme", "b"}[i%5%4]}
		b, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		fast, generic, ferr, gerr := decodeBoth(t, b, func() *logbookv1.AppendRequest { return new(logbookv1.AppendRequest) })
		if ferr != nil || gerr != nil || !proto.Equal(fast, generic) || !proto.Equal(fast, req) {
			t.Fatalf("request %d: fast %v (%v), generic %v (%v)", i, fast, ferr, generic, gerr)
		}
		capped(t, "request", fast.Events)
		releaseRequest(fast)
		chunk := &logbookv1.ReadChunk{Events: randomEvents(r)}
		if b, err = proto.Marshal(chunk); err != nil {
			t.Fatal(err)
		}
		fc, gc, ferr, gerr := decodeBoth(t, b, func() *logbookv1.ReadChunk { return new(logbookv1.ReadChunk) })
		if ferr != nil || gerr != nil || !proto.Equal(fc, gc) || !proto.Equal(fc, chunk) {
			t.Fatalf("chunk %d: fast %v (%v), generic %v (%v)", i, fc, ferr, gc, gerr)
		}
		capped(t, "chunk", fc.Events)
	}
}

// Anything the fast decoder does not know — an unknown field, a known field
// in another wire type, a handle that is not UTF-8, a truncated message —
// is decoded, or refused, by the generic decoder, unknown fields kept.
func TestBatchCodecFallsBackToProto(t *testing.T) {
	valid, _ := proto.Marshal(&logbookv1.AppendRequest{Handle: "h", FirstSeq: 7, Events: [][]byte{[]byte(`{"seq":7}`)}})
	cases := map[string][]byte{
		"unknown field":        protowire.AppendVarint(protowire.AppendTag(append([]byte(nil), valid...), 9, protowire.VarintType), 5),
		"events as varint":     protowire.AppendVarint(protowire.AppendTag(nil, appendEventsField, protowire.VarintType), 1),
		"handle not UTF-8":     protowire.AppendBytes(protowire.AppendTag(nil, appendHandleField, protowire.BytesType), []byte{0xff}),
		"tenant not UTF-8":     protowire.AppendBytes(protowire.AppendTag(nil, appendTenantField, protowire.BytesType), []byte{0xff}),
		"tenant as varint":     protowire.AppendVarint(protowire.AppendTag(nil, appendTenantField, protowire.VarintType), 1),
		"truncated":            valid[:len(valid)-2],
		"repeated scalar wins": protowire.AppendVarint(protowire.AppendTag(append([]byte(nil), valid...), appendFirstSeqField, protowire.VarintType), 9),
		"interleaved repeated": append(append([]byte(nil), valid...), valid...),
	}
	for name, b := range cases {
		fast, generic, ferr, gerr := decodeBoth(t, b, func() *logbookv1.AppendRequest { return new(logbookv1.AppendRequest) })
		if (ferr == nil) != (gerr == nil) || ferr == nil && !proto.Equal(fast, generic) {
			t.Errorf("%s: fast %v (%v), generic %v (%v)", name, fast, ferr, generic, gerr)
		}
		releaseRequest(fast)
	}
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 1)
	fast, generic, ferr, gerr := decodeBoth(t, unknown, func() *logbookv1.ReadChunk { return new(logbookv1.ReadChunk) })
	if ferr != nil || gerr != nil || !proto.Equal(fast, generic) || len(fast.ProtoReflect().GetUnknown()) == 0 {
		t.Errorf("chunk with an unknown field: fast %v (%v), generic %v (%v)", fast, ferr, generic, gerr)
	}
}

// FuzzBatchCodec: for any bytes, the fast decoder and protobuf's generic
// decoder agree on success and on the decoded message.
func FuzzBatchCodec(f *testing.F) {
	seed, _ := proto.Marshal(&logbookv1.AppendRequest{Handle: "h", FirstSeq: 3, Events: [][]byte{[]byte(`{"seq":3}`), nil}})
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		fa, ga, ferr, gerr := decodeBoth(t, b, func() *logbookv1.AppendRequest { return new(logbookv1.AppendRequest) })
		if (ferr == nil) != (gerr == nil) || ferr == nil && !proto.Equal(fa, ga) {
			t.Fatalf("append request: fast %v (%v), generic %v (%v)", fa, ferr, ga, gerr)
		}
		releaseRequest(fa)
		fc, gc, ferr, gerr := decodeBoth(t, b, func() *logbookv1.ReadChunk { return new(logbookv1.ReadChunk) })
		if (ferr == nil) != (gerr == nil) || ferr == nil && !proto.Equal(fc, gc) {
			t.Fatalf("read chunk: fast %v (%v), generic %v (%v)", fc, ferr, gc, gerr)
		}
	})
}

// Encoding a batch message yields exactly protobuf's encoding, in kept
// buffers that gRPC's Free gives back for the next message: also an append
// request larger than one chunk, one without a handle, one naming a
// tenant, and one with unknown fields (which goes to protobuf's encoder).
func TestBatchCodecEncodesAsProto(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var big [][]byte
	for n := 0; n < 3*appendChunkBytes; {
		evs := randomEvents(r)
		for _, e := range evs {
			n += len(e)
		}
		big = append(big, evs...)
	}
	unknown := &logbookv1.AppendRequest{Handle: "h", Events: randomEvents(r)}
	unknown.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 7))
	for i := range 50 {
		for _, m := range []proto.Message{
			&logbookv1.AppendRequest{Handle: "h", FirstSeq: int64(i), Events: randomEvents(r)},
			&logbookv1.AppendRequest{FirstSeq: int64(i), Events: randomEvents(r)},
			&logbookv1.AppendRequest{Handle: "h", FirstSeq: int64(i), Events: randomEvents(r), Tenant: "acme"},
			&logbookv1.AppendRequest{Handle: "handle", FirstSeq: 1 << 40, Events: big},
			unknown,
			&logbookv1.ReadChunk{Events: randomEvents(r)},
		} {
			want, err := proto.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := newBatchCodec().Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if b := got.Materialize(); !bytes.Equal(b, want) {
				t.Fatalf("message %d: encoded %d bytes, protobuf encodes %d", i, len(b), len(want))
			}
			if len(want) > appendChunkBytes && len(got) < 2 {
				t.Fatalf("message %d: %d bytes encoded into one buffer", i, len(want))
			}
			got.Free()
		}
	}
}

// A served request's buffer is reused only once the handler released it:
// two requests decoded before either is released keep distinct bytes.
func TestServedRequestBufferIsReusedOnlyAfterRelease(t *testing.T) {
	encode := func(ev string) mem.BufferSlice {
		b, _ := proto.Marshal(&logbookv1.AppendRequest{Handle: "h", Events: [][]byte{[]byte(ev)}})
		return mem.BufferSlice{mem.SliceBuffer(b)}
	}
	codec := newBatchCodec()
	first, second := new(logbookv1.AppendRequest), new(logbookv1.AppendRequest)
	if err := codec.Unmarshal(encode(`{"a":1}`), first); err != nil {
		t.Fatal(err)
	}
	if err := codec.Unmarshal(encode(`{"b":2}`), second); err != nil {
		t.Fatal(err)
	}
	if string(first.Events[0]) != `{"a":1}` || string(second.Events[0]) != `{"b":2}` {
		t.Fatalf("unreleased requests share bytes: %q, %q", first.Events[0], second.Events[0])
	}
	releaseRequest(first)
	releaseRequest(second)
	releaseRequest(second) // releasing twice, or a request the codec never decoded, is a no-op
	releaseRequest(new(logbookv1.AppendRequest))
	if _, ok := servedRequests.Load(first); ok {
		t.Fatal("a released request is still tracked")
	}
}

// countingPool counts the buffers given back to it.
type countingPool struct{ put int }

func (p *countingPool) Get(n int) *[]byte { b := make([]byte, n); return &b }
func (p *countingPool) Put(*[]byte)       { p.put++ }

// A served request holds the buffers gRPC read it into — its events alias
// them — past gRPC's own Free, until the handler releases it.
func TestServedRequestHoldsTheReadBuffersUntilRelease(t *testing.T) {
	events := [][]byte{bytes.Repeat([]byte("a"), 3000), bytes.Repeat([]byte("b"), 5000)}
	b, _ := proto.Marshal(&logbookv1.AppendRequest{Handle: "h", Events: events})
	pool := &countingPool{}
	var data mem.BufferSlice
	for rest := b; len(rest) > 0; {
		n := min(len(rest), 2700) // each event spans two buffers; each buffer is pooled
		p := pool.Get(n)
		copy(*p, rest[:n])
		data, rest = append(data, mem.NewBuffer(p, pool)), rest[n:]
	}
	req := new(logbookv1.AppendRequest)
	if err := newBatchCodec().Unmarshal(data, req); err != nil {
		t.Fatal(err)
	}
	data.Free() // what gRPC does once Unmarshal returns
	if pool.put != 0 {
		t.Fatalf("%d buffers given back before the request was released", pool.put)
	}
	if !bytes.Equal(req.Events[0], events[0]) || !bytes.Equal(req.Events[1], events[1]) {
		t.Fatal("decoded events differ")
	}
	releaseRequest(req)
	if pool.put != len(data) {
		t.Fatalf("%d of %d buffers given back after the release", pool.put, len(data))
	}
}
