package pluginrpc_test

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

func persistenceClient(t *testing.T, f *fakeStore, rpcMaxBytes int) sdk.Persistence {
	t.Helper()
	c := plugintest.Connect(t, pluginrpc.ServeConfig{
		Info:        sdk.Info{Name: "fake", Version: "0.1", Kinds: []sdk.Kind{sdk.KindPersistence}},
		Persistence: f,
		RPCMaxBytes: rpcMaxBytes,
	})
	p, err := c.Persistence()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testHeader(id string) sdk.Header {
	return sdk.Header{FormatVersion: sdk.FormatVersion, ID: id, CreatedAt: 1_700_000_000_000, CWD: "/tmp/w", AgentPreset: "coder"}
}

func readAll(t *testing.T, p sdk.Persistence, handle string, offset sdk.Offset, length int64) (events [][]byte, chunks int) {
	t.Helper()
	err := p.Read(context.Background(), handle, offset, length, func(evs [][]byte) error {
		chunks++
		events = append(events, evs...)
		return nil
	})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return events, chunks
}

func wantCode(t *testing.T, err error, code sdk.Code) *sdk.Error {
	t.Helper()
	if sdk.CodeOf(err) != code {
		t.Fatalf("got error %v (code %q), want code %s", err, sdk.CodeOf(err), code)
	}
	var e *sdk.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *sdk.Error", err)
	}
	return e
}

func TestPersistenceRoundTrip(t *testing.T) {
	ctx := context.Background()
	f := newFakeStore()
	p := persistenceClient(t, f, 0)

	d, err := p.Describe(ctx)
	if err != nil || d.DescriptorLimit <= 0 || d.DescriptorsOpen <= 0 || d.DescriptorsOpen > d.DescriptorLimit {
		t.Fatalf("Describe = %+v, %v; want the serving process's descriptor limit and open count", d, err)
	}
	d.DescriptorLimit, d.DescriptorsOpen = 0, 0
	if d != (sdk.Description{Name: "fake", FormatVersion: sdk.FormatVersion, Compression: "none"}) {
		t.Fatalf("Describe = %+v", d)
	}

	h := testHeader("s1")
	o, err := p.Create(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if o.Handle == "" || !o.Header.Equal(h) || o.NextSeq != 0 || o.Revision != "r0" {
		t.Fatalf("Create = %+v", o)
	}
	var stored sdk.Header
	f.set(func(f *fakeStore) { stored = f.sessions["s1"].header })
	if got := stored; !got.Equal(h) {
		t.Fatalf("the plugin decoded header %+v, want %+v", got, h)
	}

	evs := [][]byte{event(0, 40), event(1, 50), event(2, 60)}
	dur, err := p.Append(ctx, o.Handle, 0, evs[:2])
	if err != nil || dur != (sdk.Durable{NextSeq: 2, Revision: "r1"}) {
		t.Fatalf("Append = %+v, %v", dur, err)
	}
	dur, err = p.Append(ctx, o.Handle, 2, evs[2:])
	if err != nil || dur.NextSeq != 3 {
		t.Fatalf("second Append = %+v, %v", dur, err)
	}

	got, _ := readAll(t, p, o.Handle, 0, -1)
	if !reflect.DeepEqual(got, evs) {
		t.Fatalf("Read = %q, want %q", got, evs)
	}
	got, _ = readAll(t, p, o.Handle, 1, 1)
	if !reflect.DeepEqual(got, evs[1:2]) {
		t.Fatalf("Read(1, 1) = %q", got)
	}

	fl, err := p.Flush(ctx, o.Handle)
	if err != nil || fl != (sdk.Durable{NextSeq: 3, Revision: "r2"}) {
		t.Fatalf("Flush = %+v, %v", fl, err)
	}

	st, err := p.Stat(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Header.Equal(h) || st.Revision != "r2" || st.FormatVersion != sdk.FormatVersion || st.EventCount != 3 || st.SizeBytes != 150 || st.LastActivity != 1_700_000_000_002 {
		t.Fatalf("Stat = %+v", st)
	}

	if _, err := p.Create(ctx, testHeader("s2")); err != nil {
		t.Fatal(err)
	}
	f.set(func(f *fakeStore) {
		f.listErr = &sdk.Error{Code: sdk.CodeCorruptLog, Op: "fake", SessionID: "broken", Seq: new(int64(4)), Detail: "bad frame at 4"}
	})
	var entries []sdk.ListEntry
	if err := p.List(ctx, func(e sdk.ListEntry) error { entries = append(entries, e); return nil }); err != nil {
		t.Fatal(err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].ID < entries[j].ID })
	if len(entries) != 3 || entries[1].ID != "s1" || !entries[1].Header.Equal(h) || entries[1].Revision != "r2" || entries[2].ID != "s2" ||
		entries[1].EventCount != 3 || entries[1].LastActivity != 1_700_000_000_002 || entries[2].EventCount != 0 || entries[0].EventCount != -1 {
		t.Fatalf("List = %+v", entries)
	}
	le := wantCode(t, entries[0].Err, sdk.CodeCorruptLog)
	if le.SessionID != "broken" || (le.Seq == nil || *le.Seq != 4) || le.Index != nil || le.Detail != "bad frame at 4" || !entries[0].Header.Equal(sdk.Header{}) {
		t.Fatalf("List error entry = %+v / %+v", entries[0], le)
	}

	// Ownership, read beside a writer, torn fields.
	_, err = p.Open(ctx, "s1", sdk.AccessWrite)
	wantCode(t, err, sdk.CodeAlreadyOwned)
	ro, err := p.Open(ctx, "s1", sdk.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	if !ro.Header.Equal(h) || ro.NextSeq != 3 || ro.Torn != (sdk.Torn{Bytes: 7, FromSeq: 3, Artifact: "torn.bin"}) {
		t.Fatalf("Open(read) = %+v", ro)
	}
	_, err = p.Append(ctx, ro.Handle, 3, [][]byte{event(3, 10)})
	wantCode(t, err, sdk.CodeReadOnlyHandle)

	if err := p.Close(ctx, o.Handle); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(ctx, o.Handle); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err = p.Append(ctx, o.Handle, 3, [][]byte{event(3, 10)})
	wantCode(t, err, sdk.CodeHandleClosed)
	w, err := p.Open(ctx, "s1", sdk.AccessWrite)
	if err != nil {
		t.Fatalf("Open(write) after Close: %v", err)
	}
	if _, err := p.Append(ctx, w.Handle, 3, [][]byte{event(3, 10)}); err != nil {
		t.Fatal(err)
	}
}

func TestPersistenceErrorsAreFinal(t *testing.T) {
	ctx := context.Background()
	p := persistenceClient(t, newFakeStore(), 0)

	_, err := p.Open(ctx, "nope", sdk.AccessRead)
	if e := wantCode(t, err, sdk.CodeSessionNotFound); e.SessionID != "nope" {
		t.Fatalf("SessionID = %q", e.SessionID)
	}
	_, err = p.Stat(ctx, "nope")
	wantCode(t, err, sdk.CodeSessionNotFound)
	o, err := p.Create(ctx, testHeader("s1"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Create(ctx, testHeader("s1"))
	wantCode(t, err, sdk.CodeSessionAlreadyExists)

	// A failed batch ends the Append stream; the next one opens a new stream.
	_, err = p.Append(ctx, o.Handle, 5, [][]byte{event(5, 10)})
	e := wantCode(t, err, sdk.CodeSeqConflict)
	if (e.Seq == nil || *e.Seq != 5) || e.SessionID != "s1" || !bytes.Contains([]byte(e.Detail), []byte("stored next seq 0")) {
		t.Fatalf("SEQ_CONFLICT = %+v", e)
	}
	if sdk.Retryable(err) {
		t.Fatal("SEQ_CONFLICT must not be retryable")
	}
	if d, err := p.Append(ctx, o.Handle, 0, [][]byte{event(0, 10)}); err != nil || d.NextSeq != 1 {
		t.Fatalf("Append after a failed batch = %+v, %v", d, err)
	}
}

func TestAppendSplitsBatchOverRPCMaxBytes(t *testing.T) {
	const limit = 64 << 10
	ctx := context.Background()
	f := newFakeStore()
	p := persistenceClient(t, f, limit)
	o, err := p.Create(ctx, testHeader("big"))
	if err != nil {
		t.Fatal(err)
	}
	var evs [][]byte
	total := 0
	for i := 0; total < 5*limit; i++ {
		e := event(i, 3000+(i*977)%9000)
		evs = append(evs, e)
		total += len(e)
	}
	d, err := p.Append(ctx, o.Handle, 0, evs)
	if err != nil {
		t.Fatal(err)
	}
	if d.NextSeq != sdk.Offset(len(evs)) {
		t.Fatalf("NextSeq = %d, want %d", d.NextSeq, len(evs))
	}
	calls := f.appendCalls()
	if len(calls) < 5 {
		t.Fatalf("a %d-byte batch under RPCMaxBytes %d went as %d appends %v", total, limit, len(calls), calls)
	}
	// Each part is the largest prefix that fits.
	seq := 0
	for i, n := range calls {
		size := 0
		for _, e := range evs[seq : seq+n] {
			size += len(e) + 4
		}
		if size > limit {
			t.Fatalf("part %d carries %d bytes > %d", i, size, limit)
		}
		if i < len(calls)-1 && size+len(evs[seq+n])+4 <= limit-64 {
			t.Fatalf("part %d (%d bytes) could have taken the next event", i, size)
		}
		seq += n
	}
	if seq != len(evs) {
		t.Fatalf("parts carried %d events, want %d", seq, len(evs))
	}
	got, chunks := readAll(t, p, o.Handle, 0, -1)
	if !reflect.DeepEqual(got, evs) {
		t.Fatal("events read back differ from the batch")
	}
	if chunks < 10 {
		t.Fatalf("Read of %d bytes under RPCMaxBytes %d came in %d chunks", total, limit, chunks)
	}
}

func TestAppendRefusesEventThatCannotFit(t *testing.T) {
	const limit = 64 << 10
	ctx := context.Background()
	f := newFakeStore()
	p := persistenceClient(t, f, limit)
	o, err := p.Create(ctx, testHeader("s"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Append(ctx, o.Handle, 0, [][]byte{event(0, 100), event(1, limit+1)})
	e := wantCode(t, err, sdk.CodeEventTooLarge)
	if (e.Index == nil || *e.Index != 1) || (e.Seq == nil || *e.Seq != 1) {
		t.Fatalf("EVENT_TOO_LARGE = %+v", e)
	}
	if len(f.appendCalls()) != 0 {
		t.Fatal("part of a refused batch was sent")
	}
}

func TestReadChunking(t *testing.T) {
	const limit = 64 << 10
	ctx := context.Background()
	for _, step := range []int{0, 1, 7} { // one call, one event per call, 7 per call
		f := newFakeStore()
		p := persistenceClient(t, f, limit)
		o, err := p.Create(ctx, testHeader("s"))
		if err != nil {
			t.Fatal(err)
		}
		var evs [][]byte
		for i := range 200 {
			evs = append(evs, event(i, 1000+i*10))
		}
		evs = append(evs, event(200, limit/2+100)) // larger than a chunk: travels alone
		if _, err := p.Append(ctx, o.Handle, 0, evs); err != nil {
			t.Fatal(err)
		}
		f.set(func(f *fakeStore) { f.readChunk = step })
		var got [][]byte
		var sizes []int
		err = p.Read(ctx, o.Handle, 0, -1, func(chunk [][]byte) error {
			n := 0
			for _, e := range chunk {
				n += len(e) + 4
			}
			sizes = append(sizes, n)
			got = append(got, chunk...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, evs) {
			t.Fatalf("step %d: events differ", step)
		}
		for i, n := range sizes[:len(sizes)-1] {
			if n > limit/2 {
				t.Fatalf("step %d: chunk %d carries %d bytes > RPCMaxBytes/2", step, i, n)
			}
		}
		// Small backend chunks are coalesced: ~300 KiB in 32 KiB chunks.
		if len(sizes) > 14 {
			t.Fatalf("step %d: %d chunks %v; small chunks were not coalesced", step, len(sizes), sizes)
		}
	}
}

func TestReadStopsOnCallbackError(t *testing.T) {
	ctx := context.Background()
	f := newFakeStore()
	f.set(func(f *fakeStore) { f.readChunk = 1 })
	p := persistenceClient(t, f, 64<<10)
	o, _ := p.Create(ctx, testHeader("s"))
	var evs [][]byte
	for i := range 100 {
		evs = append(evs, event(i, 2000))
	}
	if _, err := p.Append(ctx, o.Handle, 0, evs); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("enough")
	calls := 0
	err := p.Read(ctx, o.Handle, 0, -1, func([][]byte) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Fatalf("Read = %v after %d calls, want the callback's error after 1", err, calls)
	}
	// The handle still works.
	if got, _ := readAll(t, p, o.Handle, 99, -1); len(got) != 1 {
		t.Fatalf("Read after a stopped Read = %d events", len(got))
	}
}

func TestAppendHonoursCallerContext(t *testing.T) {
	f := newFakeStore()
	p := persistenceClient(t, f, 0)
	o, err := p.Create(context.Background(), testHeader("s"))
	if err != nil {
		t.Fatal(err)
	}
	block := make(chan error, 1)
	f.set(func(f *fakeStore) { f.block = block })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = p.Append(ctx, o.Handle, 0, [][]byte{event(0, 10)})
	wantCode(t, err, sdk.CodePluginUnavailable)
	if !errors.Is(err, context.DeadlineExceeded) || !sdk.Retryable(err) {
		t.Fatalf("Append past its deadline = %v; want retryable, wrapping context.DeadlineExceeded", err)
	}
	select {
	case serverErr := <-block:
		if serverErr == nil {
			t.Fatal("the plugin's context did not end")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the plugin never saw the cancellation")
	}
	f.set(func(f *fakeStore) { f.block = nil })
	// A fresh stream serves the next batch.
	if _, err := p.Append(context.Background(), o.Handle, 0, [][]byte{event(0, 10)}); err != nil {
		t.Fatal(err)
	}

	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	_, err = p.Append(cctx, o.Handle, 1, [][]byte{event(1, 10)})
	if !errors.Is(err, context.Canceled) || sdk.CodeOf(err) != sdk.CodePluginUnavailable {
		t.Fatalf("Append with a cancelled context = %v", err)
	}
	_, err = p.Stat(cctx, "s")
	if !errors.Is(err, context.Canceled) || sdk.CodeOf(err) != sdk.CodePluginUnavailable {
		t.Fatalf("Stat with a cancelled context = %v", err)
	}
}

func TestConcurrentAppendsOnSeveralHandles(t *testing.T) {
	ctx := context.Background()
	p := persistenceClient(t, newFakeStore(), 64<<10)
	const sessions, batches = 8, 20
	errs := make(chan error, sessions)
	for s := range sessions {
		go func() {
			o, err := p.Create(ctx, testHeader("s"+string(rune('a'+s))))
			if err != nil {
				errs <- err
				return
			}
			for b := range batches {
				if _, err := p.Append(ctx, o.Handle, sdk.Seq(b*3), [][]byte{event(b*3, 500), event(b*3+1, 20000), event(b*3+2, 30000)}); err != nil {
					errs <- err
					return
				}
			}
			errs <- p.Close(ctx, o.Handle)
		}()
	}
	for range sessions {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

type fakeSummarizer struct{ got sdk.SummarizeRequest }

func (s *fakeSummarizer) Summarize(_ context.Context, r sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
	s.got = r
	return sdk.SummarizeReply{
		Summary:  [][]byte{[]byte(`{"type":"text","text":"sum"}`)},
		Provider: "p", Model: "m", Usage: []byte(`{"inputTokens":3}`), RawOutput: []byte(`{"raw":true}`),
	}, nil
}

type rangeSummarizer struct{ fakeSummarizer }

func (s *rangeSummarizer) SelectRange(_ context.Context, r sdk.SelectRangeRequest) (sdk.SelectRangeReply, error) {
	if len(r.Nodes) != 3 || r.Tokens[2] != 30 || string(r.Messages[1]) != `"b"` || r.RetainTokens != 5 || r.SessionID != "s" {
		return sdk.SelectRangeReply{}, sdk.Errorf(sdk.CodeCompactionNoRange, "fake", "unexpected request %+v", r)
	}
	return sdk.SelectRangeReply{Start: r.Nodes[0], End: r.Nodes[1], OK: true}, nil
}

func TestSummarizerRoundTrip(t *testing.T) {
	ctx := context.Background()
	fs := &rangeSummarizer{}
	c := plugintest.Connect(t, pluginrpc.ServeConfig{
		Info:       sdk.Info{Name: "sum", Kinds: []sdk.Kind{sdk.KindSummarizer}, Capabilities: []string{"select-range"}},
		Summarizer: fs,
	})
	s, err := c.Summarizer()
	if err != nil {
		t.Fatal(err)
	}
	req := sdk.SummarizeRequest{
		SessionID: "s", CompactionID: "c1", Provider: "openai", Model: "m1", MaxTokens: 8192,
		System: []byte(`{"role":"system"}`), Tools: []byte(`[]`), Config: []byte(`{"a":1}`),
		Messages: [][]byte{[]byte(`{"role":"user"}`), []byte(`{"role":"assistant"}`)}, Instruction: "summarize",
	}
	rep, err := s.Summarize(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fs.got, req) {
		t.Fatalf("plugin got %+v, want %+v", fs.got, req)
	}
	if len(rep.Summary) != 1 || rep.Provider != "p" || rep.Model != "m" || string(rep.Usage) != `{"inputTokens":3}` || string(rep.RawOutput) != `{"raw":true}` {
		t.Fatalf("Summarize = %+v", rep)
	}
	sel, ok := s.(sdk.RangeSelector)
	if !ok {
		t.Fatal("the summarizer client is not an sdk.RangeSelector")
	}
	r, err := sel.SelectRange(ctx, sdk.SelectRangeRequest{SessionID: "s", Nodes: []sdk.Seq{4, 9, 12}, Tokens: []int64{10, 20, 30}, Messages: [][]byte{[]byte(`"a"`), []byte(`"b"`), []byte(`"c"`)}, RetainTokens: 5})
	if err != nil || r != (sdk.SelectRangeReply{Start: 4, End: 9, OK: true}) {
		t.Fatalf("SelectRange = %+v, %v", r, err)
	}

	// A summarizer without SelectRange answers "no choice".
	c2 := plugintest.Connect(t, pluginrpc.ServeConfig{
		Info:       sdk.Info{Name: "sum2", Kinds: []sdk.Kind{sdk.KindSummarizer}},
		Summarizer: &fakeSummarizer{},
	})
	s2, err := c2.Summarizer()
	if err != nil {
		t.Fatal(err)
	}
	r, err = s2.(sdk.RangeSelector).SelectRange(ctx, sdk.SelectRangeRequest{Nodes: []sdk.Seq{1}})
	if err != nil || r.OK {
		t.Fatalf("SelectRange without the capability = %+v, %v", r, err)
	}
}

type fakePruner struct{}

func (fakePruner) Prune(_ context.Context, sessionID string, nodes []sdk.PruneNode, b sdk.PruneBudget) ([]sdk.PruneReplacement, error) {
	if sessionID != "s" || b != (sdk.PruneBudget{ThresholdChars: 8192, HeadChars: 4096, TailChars: 1024}) {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "fake", "unexpected %q %+v", sessionID, b)
	}
	var out []sdk.PruneReplacement
	for _, n := range nodes {
		out = append(out, sdk.PruneReplacement{Seq: n.Seq, Content: append([]byte(n.CallID+":"), n.Message...), CharsBefore: 100, CharsAfter: 10})
	}
	return out, nil
}

func TestPrunerRoundTrip(t *testing.T) {
	c := plugintest.Connect(t, pluginrpc.ServeConfig{Info: sdk.Info{Name: "pruner", Kinds: []sdk.Kind{sdk.KindPruner}}, Pruner: fakePruner{}})
	p, err := c.Pruner()
	if err != nil {
		t.Fatal(err)
	}
	reps, err := p.Prune(context.Background(), "s",
		[]sdk.PruneNode{{Seq: 3, CallID: "c1", Message: []byte(`m3`)}, {Seq: 8, CallID: "c2", Message: []byte(`m8`)}},
		sdk.PruneBudget{ThresholdChars: 8192, HeadChars: 4096, TailChars: 1024})
	want := []sdk.PruneReplacement{{Seq: 3, Content: []byte("c1:m3"), CharsBefore: 100, CharsAfter: 10}, {Seq: 8, Content: []byte("c2:m8"), CharsBefore: 100, CharsAfter: 10}}
	if err != nil || !reflect.DeepEqual(reps, want) {
		t.Fatalf("Prune = %+v, %v", reps, err)
	}
}

type fakeProjector struct{}

func (fakeProjector) Declare(context.Context) ([]string, error) {
	return []string{"projection:proj/redact", "projection:proj/pin"}, nil
}

func (fakeProjector) Project(_ context.Context, r sdk.ProjectRequest) ([]sdk.ProjectTarget, error) {
	if r.SessionID != "s" || string(r.Event) != `{"seq":9}` || !slices.Equal(r.Nodes, []sdk.Seq{1, 2, 5}) {
		return nil, sdk.Errorf(sdk.CodeProjectionInvalid, "fake", "unexpected %+v", r)
	}
	var out []sdk.ProjectTarget
	for _, t := range r.Targets {
		out = append(out, sdk.ProjectTarget{Seq: t.Seq, EventType: t.EventType, Message: append([]byte("p:"), t.Message...)})
	}
	return out, nil
}

func TestProjectorRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := plugintest.Connect(t, pluginrpc.ServeConfig{Info: sdk.Info{Name: "proj", Kinds: []sdk.Kind{sdk.KindProjection}}, Projector: fakeProjector{}})
	p, err := c.Projector()
	if err != nil {
		t.Fatal(err)
	}
	types, err := p.Declare(ctx)
	if err != nil || !slices.Equal(types, []string{"projection:proj/redact", "projection:proj/pin"}) {
		t.Fatalf("Declare = %v, %v", types, err)
	}
	out, err := p.Project(ctx, sdk.ProjectRequest{SessionID: "s", Event: []byte(`{"seq":9}`), Nodes: []sdk.Seq{1, 2, 5},
		Targets: []sdk.ProjectTarget{{Seq: 2, EventType: "user/message", Message: []byte("m2")}}})
	if err != nil || !reflect.DeepEqual(out, []sdk.ProjectTarget{{Seq: 2, EventType: "user/message", Message: []byte("p:m2")}}) {
		t.Fatalf("Project = %+v, %v", out, err)
	}
	_, err = p.Project(ctx, sdk.ProjectRequest{SessionID: "other"})
	wantCode(t, err, sdk.CodeProjectionInvalid)
}

type fakeConfigurable struct{ got []byte }

func (f *fakeConfigurable) Configure(_ context.Context, config []byte) error {
	if bytes.Contains(config, []byte("bad")) {
		return sdk.Errorf(sdk.CodeConfigInvalid, "fake", "unknown key %q", "bad")
	}
	f.got = append([]byte(nil), config...)
	return nil
}

func TestInfoAndConfigure(t *testing.T) {
	ctx := context.Background()
	info := sdk.Info{
		Name: "multi.kind-1", Version: "1.2.3",
		Kinds:        []sdk.Kind{sdk.KindPersistence, sdk.KindPruner},
		ConfigSchema: `{"type":"object"}`,
		EventTypes:   []sdk.EventTypeDecl{{Type: "plugin:multi.kind-1/state", Ignorable: true}, {Type: "x:y", Ignorable: false}},
		Capabilities: []string{"fast"},
	}
	cfgr := &fakeConfigurable{}
	c := plugintest.Connect(t, pluginrpc.ServeConfig{Info: info, Persistence: newFakeStore(), Pruner: fakePruner{}, Configurable: cfgr})
	got, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := info
	want.ProtocolVersions = []int{sdk.ProtocolVersion}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Info = %+v, want %+v", got, want)
	}
	if err := c.Configure(ctx, []byte(`{"root":"/data"}`)); err != nil {
		t.Fatal(err)
	}
	if string(cfgr.got) != `{"root":"/data"}` {
		t.Fatalf("Configure passed %q", cfgr.got)
	}
	wantCode(t, c.Configure(ctx, []byte(`{"bad":1}`)), sdk.CodeConfigInvalid)

	// Without a Configurable only an empty object is accepted.
	c2 := plugintest.Connect(t, pluginrpc.ServeConfig{Info: sdk.Info{Name: "plain", Kinds: []sdk.Kind{sdk.KindPruner}}, Pruner: fakePruner{}})
	for _, ok := range []string{``, `{}`, ` { } `} {
		if err := c2.Configure(ctx, []byte(ok)); err != nil {
			t.Fatalf("Configure(%q) = %v", ok, err)
		}
	}
	e := wantCode(t, c2.Configure(ctx, []byte(`{"x":1}`)), sdk.CodeConfigInvalid)
	if !bytes.Contains([]byte(e.Detail), []byte(`"plain" takes no configuration`)) {
		t.Fatalf("detail = %q", e.Detail)
	}

	// A kind the plugin does not serve fails on use, not on dispense.
	s, err := c2.Summarizer()
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Summarize(ctx, sdk.SummarizeRequest{})
	wantCode(t, err, sdk.CodeIOError)
}

// TestErrorMappingOverTheWire checks that errors a plugin returns reach the
// host as the same *sdk.Error, and others as IO_ERROR or PLUGIN_UNAVAILABLE.
func TestErrorMappingOverTheWire(t *testing.T) {
	f := newFakeStore()
	p := persistenceClient(t, f, 0)
	cases := []struct {
		name string
		err  error
		want sdk.Error // Err compared by text
	}{
		{"seq conflict", &sdk.Error{Code: sdk.CodeSeqConflict, Op: "jsonl", SessionID: "s1", Seq: new(int64(7)), Detail: "firstSeq 7, stored next seq 5"},
			sdk.Error{Code: sdk.CodeSeqConflict, Op: "jsonl", SessionID: "s1", Seq: new(int64(7)), Detail: "firstSeq 7, stored next seq 5"}},
		{"corrupt with cause", &sdk.Error{Code: sdk.CodeCorruptLog, Op: "jsonl", SessionID: "s2", Seq: new(int64(0)), Index: new(3), Detail: "bad crc", Err: errors.New("read /x: EIO")},
			sdk.Error{Code: sdk.CodeCorruptLog, Op: "jsonl", SessionID: "s2", Seq: new(int64(0)), Index: new(3), Detail: "bad crc", Err: errors.New("read /x: EIO")}},
		{"busy", sdk.Errorf(sdk.CodeBackendBusy, "sqlite", "database is locked"),
			sdk.Error{Code: sdk.CodeBackendBusy, Op: "sqlite", Detail: "database is locked"}},
		{"bare code", sdk.CodeSessionNotFound,
			sdk.Error{Code: sdk.CodeSessionNotFound}},
		{"wrapped", errors.Join(errors.New("context"), sdk.Errorf(sdk.CodeIOError, "jsonl", "fsync failed")),
			sdk.Error{Code: sdk.CodeIOError, Op: "jsonl", Detail: "fsync failed"}},
		{"plain error", errors.New("boom"),
			sdk.Error{Code: sdk.CodeIOError, Op: "plugin", Detail: "persistence.Describe failed with gRPC Unknown"}},
		{"plugin context ended", context.Canceled,
			sdk.Error{Code: sdk.CodePluginUnavailable, Op: "plugin", Detail: "persistence.Describe failed with gRPC Canceled"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f.set(func(f *fakeStore) { f.failDescribe = tc.err })
			_, err := p.Describe(context.Background())
			var e *sdk.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, not an *sdk.Error", err)
			}
			got := *e
			if (got.Err == nil) != (tc.want.Err == nil) && tc.want.Op != "plugin" {
				t.Fatalf("cause = %v, want %v", got.Err, tc.want.Err)
			}
			if tc.want.Err != nil && got.Err.Error() != tc.want.Err.Error() {
				t.Fatalf("cause = %q, want %q", got.Err, tc.want.Err)
			}
			got.Err, tc.want.Err = nil, nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
