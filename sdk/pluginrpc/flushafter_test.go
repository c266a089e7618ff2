package pluginrpc

import (
	"context"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"
)

// awaitAsync runs p.await in a goroutine; the channel closes when it returns.
func awaitAsync(ctx context.Context, p *appendProgress, handle string, after int64) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		p.await(ctx, handle, after)
		close(done)
	}()
	return done
}

func wantWaiting(t *testing.T, done <-chan struct{}, why string) {
	t.Helper()
	select {
	case <-done:
		t.Fatalf("await returned %s", why)
	case <-time.After(20 * time.Millisecond):
	}
}

func wantReturned(t *testing.T, done <-chan struct{}, why string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("await still waits %s", why)
	}
}

func TestAwaitHoldsUntilTheAppendReachesItsSeq(t *testing.T) {
	var p appendProgress
	done := awaitAsync(context.Background(), &p, "h", 6)
	wantWaiting(t, done, "before any append")
	p.appended("h", 3)
	wantWaiting(t, done, "after an append short of its seq")
	p.appended("other", 9)
	wantWaiting(t, done, "after an append on another handle")
	p.appended("h", 6)
	wantReturned(t, done, "after the append reached its seq")
	// Reached already: no wait.
	wantReturned(t, awaitAsync(context.Background(), &p, "h", 6), "for a seq already reached")
}

func TestAwaitEndsOnFailureCloseOrContext(t *testing.T) {
	var p appendProgress
	p.appended("h", 3)

	done := awaitAsync(context.Background(), &p, "h", 6)
	p.failedAt("h", 3)
	wantReturned(t, done, "after the batch it waits for failed")
	// A later success clears the failure.
	p.appended("h", 4)
	done = awaitAsync(context.Background(), &p, "h", 6)
	wantWaiting(t, done, "after a success cleared the failure")
	p.forget("h")
	wantReturned(t, done, "after the handle was closed")

	ctx, cancel := context.WithCancel(context.Background())
	done = awaitAsync(ctx, &p, "h", 6)
	wantWaiting(t, done, "on a fresh handle")
	cancel()
	wantReturned(t, done, "after its context ended")
}

func TestFlushAfterReadsOnlyAPositiveSeq(t *testing.T) {
	for v, want := range map[string]int64{"12": 12, "0": 0, "-3": 0, "x": 0, "": 0} {
		ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(flushAfterKey, v))
		if got, ok := flushAfter(ctx); got != want && ok || ok != (want > 0) {
			t.Errorf("flushAfter(%q) = %d, %v; want %d, %v", v, got, ok, want, want > 0)
		}
	}
	if _, ok := flushAfter(context.Background()); ok {
		t.Error("flushAfter without metadata reported a seq")
	}
}

// slowLog is a one-handle backend whose Append takes a while; it logs calls
// as they start.
type slowLog struct {
	sdk.Persistence // only Append and Flush are called
	delay           time.Duration
	mu              sync.Mutex
	next            int64
	calls           []string
}

func (b *slowLog) Append(_ context.Context, _ string, first sdk.Seq, evs [][]byte) (sdk.Durable, error) {
	b.mu.Lock()
	b.calls = append(b.calls, "append "+strconv.Itoa(len(evs)))
	b.mu.Unlock()
	time.Sleep(b.delay) // a slow disk, not synchronization
	b.mu.Lock()
	defer b.mu.Unlock()
	if int64(first) != b.next {
		return sdk.Durable{}, sdk.Errorf(sdk.CodeSeqConflict, "test", "firstSeq %d, next %d", first, b.next)
	}
	b.next += int64(len(evs))
	return sdk.Durable{NextSeq: sdk.Offset(b.next), Revision: "r"}, nil
}

func (b *slowLog) Flush(context.Context, string) (sdk.Durable, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, "flush")
	return sdk.Durable{NextSeq: sdk.Offset(b.next), Revision: "r"}, nil
}

func (b *slowLog) log() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls)
}

// serveOver serves backend over an in-memory connection with the plugin
// connection options, plus opts, and returns a client of it.
func serveOver(t *testing.T, backend sdk.Persistence, opts ...grpc.ServerOption) *persistenceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(append(opts, grpc.ForceServerCodecV2(newBatchCodec()))...)
	logbookv1.RegisterPersistenceServer(srv, &persistenceServer{impl: backend, chunkBytes: readChunkBytes})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	dial := func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }
	conn, err := grpc.NewClient("passthrough:///plugin", append(GRPCDialOptions(0),
		grpc.WithContextDialer(dial), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return newPersistenceClient(nil, logbookv1.NewPersistenceClient(conn), rpcLimit(0))
}

func batchOf(first, n int) [][]byte {
	var evs [][]byte
	for i := range n {
		evs = append(evs, []byte(`{"seq":`+strconv.Itoa(first+i)+`}`))
	}
	return evs
}

// The Flush goes out before the Append's reply, yet the backend sees it
// only after the Append: one Flush, behind the batch.
func TestAppendFlushHoldsTheFlushBehindTheAppend(t *testing.T) {
	b := &slowLog{delay: 100 * time.Millisecond}
	c := serveOver(t, b)
	appended, flushed, flushErr, err := c.AppendFlush(context.Background(), "h", 0, batchOf(0, 3))
	if err != nil || flushErr != nil {
		t.Fatalf("AppendFlush: %v, flush %v", err, flushErr)
	}
	if appended.NextSeq != 3 || flushed.NextSeq != 3 {
		t.Fatalf("appended %+v, flushed %+v; want next seq 3 for both", appended, flushed)
	}
	if got, want := b.log(), []string{"append 3", "flush"}; !slices.Equal(got, want) {
		t.Fatalf("backend calls %q; want %q", got, want)
	}
}

// A server that answers the Flush at once (one that does not know the
// metadata) gets a second Flush after the Append's reply.
func TestAppendFlushFlushesAgainWhenTheServerDidNotHoldIt(t *testing.T) {
	forget := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return handler(metadata.NewIncomingContext(ctx, metadata.MD{}), req)
	}
	b := &slowLog{delay: 100 * time.Millisecond}
	c := serveOver(t, b, grpc.UnaryInterceptor(forget))
	_, flushed, flushErr, err := c.AppendFlush(context.Background(), "h", 0, batchOf(0, 2))
	if err != nil || flushErr != nil {
		t.Fatalf("AppendFlush: %v, flush %v", err, flushErr)
	}
	if flushed.NextSeq != 2 {
		t.Fatalf("flushed %+v; want next seq 2", flushed)
	}
	got := b.log()
	if len(got) != 3 || got[2] != "flush" || slices.Index(got, "append 2") < 0 {
		t.Fatalf("backend calls %q; want the early flush, the append, then a flush", got)
	}
}

// A failed batch returns its own error at once: the held Flush neither
// delays it nor is reported.
func TestAppendFlushReturnsTheAppendsError(t *testing.T) {
	b := &slowLog{}
	c := serveOver(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, _, flushErr, err := c.AppendFlush(ctx, "h", 5, batchOf(5, 1))
	if sdk.CodeOf(err) != sdk.CodeSeqConflict || flushErr != nil {
		t.Fatalf("AppendFlush at a stale seq: %v, flush %v; want SEQ_CONFLICT only", err, flushErr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the failed batch took %v to report", d)
	}
	// The stream is renewed: the next batch goes through.
	if _, flushed, _, err := c.AppendFlush(ctx, "h", 0, batchOf(0, 1)); err != nil || flushed.NextSeq != 1 {
		t.Fatalf("AppendFlush after a failure: %v, flushed %+v", err, flushed)
	}
}

// A batch over RPCMaxBytes goes as several appends; only the last carries
// the Flush.
func TestAppendFlushSplitBatchFlushesOnce(t *testing.T) {
	b := &slowLog{}
	c := serveOver(t, b)
	c.maxBytes = 64 << 10
	big := make([][]byte, 3)
	for i := range big {
		big[i] = append([]byte(`{"seq":`+strconv.Itoa(i)+`,"pad":"`), make([]byte, 40<<10)...)
	}
	appended, flushed, flushErr, err := c.AppendFlush(context.Background(), "h", 0, big)
	if err != nil || flushErr != nil || appended.NextSeq != 3 || flushed.NextSeq != 3 {
		t.Fatalf("AppendFlush: %v, flush %v, appended %+v, flushed %+v", err, flushErr, appended, flushed)
	}
	if got, want := b.log(), []string{"append 1", "append 1", "append 1", "flush"}; !slices.Equal(got, want) {
		t.Fatalf("backend calls %q; want %q", got, want)
	}
}
