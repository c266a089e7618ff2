package transfer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/runtime/internal/rpcsize"
	"github.com/seed-e5e476df/logbook/sdk"
)

// env is the canonical envelope of a turn/start at seq with turn n.
func env(seq, n int) []byte {
	return fmt.Appendf(nil, `{"seq":%d,"time":1700000000000,"type":"turn/start","data":{"turn":%d}}`, seq, n)
}

// envs returns the envelopes [from, to) of a log whose event at seq has
// turn seq+turn0.
func envs(from, to, turn0 int) [][]byte {
	var out [][]byte
	for i := from; i < to; i++ {
		out = append(out, env(i, i+turn0))
	}
	return out
}

func header(id string) sdk.Header {
	return sdk.Header{FormatVersion: sdk.FormatVersion, ID: id, CreatedAt: 1_700_000_000_000}
}

// store writes session id with events to p (creating it when absent).
func store(t *testing.T, p sdk.Persistence, h sdk.Header, events [][]byte) {
	t.Helper()
	ctx := t.Context()
	o, err := p.Open(ctx, h.ID, sdk.AccessWrite)
	if errors.Is(err, sdk.CodeSessionNotFound) {
		o, err = p.Create(ctx, h)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx, o.Handle)
	if _, err := p.Append(ctx, o.Handle, sdk.Seq(o.NextSeq), events); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Flush(ctx, o.Handle); err != nil {
		t.Fatal(err)
	}
}

// stored returns the envelopes of session id on p.
func stored(t *testing.T, p sdk.Persistence, id string) [][]byte {
	t.Helper()
	l, err := OpenStored(t.Context(), p, id)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out, err := l.ReadAll(t.Context(), 0, l.Len())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// appendCounter counts the Append requests and events that reach a backend.
type appendCounter struct {
	sdk.Persistence
	requests, events int
}

func (c *appendCounter) Append(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte) (sdk.Durable, error) {
	c.requests++
	c.events += len(events)
	return c.Persistence.Append(ctx, handle, firstSeq, events)
}

func TestCopySessionCreatesThenResumes(t *testing.T) {
	src, dst := memory.New(), memory.New()
	store(t, src, header("s"), envs(0, 5, 1))
	c, err := CopySession(t.Context(), src, dst, "s", rpcsize.CopyBatchBytes)
	if err != nil || c != (Copied{Appended: 5, Created: true}) {
		t.Fatalf("first copy: %+v, %v", c, err)
	}
	store(t, src, header("s"), envs(5, 8, 1))
	c, err = CopySession(t.Context(), src, dst, "s", rpcsize.CopyBatchBytes)
	if err != nil || c != (Copied{Appended: 3}) {
		t.Fatalf("resumed copy: %+v, %v", c, err)
	}
	c, err = CopySession(t.Context(), src, dst, "s", rpcsize.CopyBatchBytes)
	if err != nil || c != (Copied{}) {
		t.Fatalf("copy of a complete session: %+v, %v", c, err)
	}
	if got, want := stored(t, dst, "s"), stored(t, src, "s"); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("target holds %q, want %q", got, want)
	}
}

func TestCopySessionSplitsBatchesAtTheByteLimit(t *testing.T) {
	src := memory.New()
	dst := &appendCounter{Persistence: memory.New()}
	events := envs(0, 10, 1)
	store(t, src, header("s"), events)
	// Room for three envelopes (each counted with AppendEventOverhead) per request.
	limit := 3 * (len(events[0]) + rpcsize.AppendEventOverhead)
	if _, err := CopySession(t.Context(), src, dst, "s", limit); err != nil {
		t.Fatal(err)
	}
	if dst.requests != 4 || dst.events != 10 {
		t.Fatalf("%d requests carried %d events, want 4 requests (3+3+3+1) of 10", dst.requests, dst.events)
	}
}

func TestCopySessionRefusesADivergedTarget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(t *testing.T, dst sdk.Persistence)
		seq    *int64
	}{
		{"other header", func(t *testing.T, dst sdk.Persistence) {
			h := header("s")
			h.CWD = "/elsewhere"
			store(t, dst, h, envs(0, 2, 1))
		}, nil},
		{"target ahead", func(t *testing.T, dst sdk.Persistence) { store(t, dst, header("s"), envs(0, 6, 1)) }, nil},
		{"other event", func(t *testing.T, dst sdk.Persistence) {
			store(t, dst, header("s"), append(envs(0, 2, 1), envs(2, 3, 10)...))
		}, ptr(int64(2))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, dst := memory.New(), memory.New()
			store(t, src, header("s"), envs(0, 4, 1))
			tc.target(t, dst)
			before := stored(t, dst, "s")
			_, err := CopySession(t.Context(), src, dst, "s", rpcsize.CopyBatchBytes)
			var e *sdk.Error
			if !errors.As(err, &e) || e.Code != sdk.CodeMirrorDiverged || e.SessionID != "s" {
				t.Fatalf("got %v, want MIRROR_DIVERGED for session s", err)
			}
			if (e.Seq == nil) != (tc.seq == nil) || e.Seq != nil && *e.Seq != *tc.seq {
				t.Errorf("error seq %v, want %v", e.Seq, tc.seq)
			}
			if after := stored(t, dst, "s"); !slices.EqualFunc(after, before, slices.Equal) {
				t.Errorf("the diverged target changed")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestMigrateCountsAndKeepsGoingPastAFailure(t *testing.T) {
	src, dst := memory.New(), memory.New()
	store(t, src, header("a"), envs(0, 3, 1))
	store(t, src, header("b"), envs(0, 4, 1))
	store(t, src, header("c"), envs(0, 2, 1))
	store(t, dst, header("b"), envs(0, 4, 1))  // complete
	store(t, dst, header("c"), envs(0, 2, 20)) // diverged at seq 0
	var listed int
	var done []string
	res, err := Migrate(t.Context(), src, dst, MigrateOptions{
		BatchBytes: rpcsize.CopyBatchBytes,
		Listed:     func(n int) { listed = n },
		Done: func(id string, err error) {
			done = append(done, fmt.Sprintf("%s:%v", id, sdk.CodeOf(err)))
		},
	})
	if want := (Migrated{Sessions: 3, Copied: 1, Complete: 1, Failed: 1, Events: 3}); res != want {
		t.Errorf("Migrate = %+v, want %+v", res, want)
	}
	if !errors.Is(err, sdk.CodeMirrorDiverged) || sdk.CodeOf(err) != sdk.CodeMirrorDiverged {
		t.Fatalf("error %v, want MIRROR_DIVERGED", err)
	}
	slices.Sort(done)
	if listed != 3 || !slices.Equal(done, []string{"a:", "b:", "c:MIRROR_DIVERGED"}) {
		t.Errorf("listed %d, done %v", listed, done)
	}
	if got := stored(t, dst, "a"); len(got) != 3 {
		t.Errorf("a holds %d events on the target, want 3", len(got))
	}
}

func TestMigrateRequiresABatchSize(t *testing.T) {
	_, err := Migrate(t.Context(), memory.New(), memory.New(), MigrateOptions{})
	if sdk.CodeOf(err) != sdk.CodeUsage {
		t.Fatalf("got %v, want USAGE", err)
	}
}

func TestVerifyReportsEveryStatus(t *testing.T) {
	primary := memory.New()
	for _, id := range []string{"ok", "missing", "header", "diverged", "behind", "ahead"} {
		store(t, primary, header(id), envs(0, 4, 1))
	}
	mirror := memory.New()
	store(t, mirror, header("ok"), envs(0, 4, 1))
	h := header("header")
	h.CWD = "/elsewhere"
	store(t, mirror, h, envs(0, 4, 1))
	store(t, mirror, header("diverged"), append(envs(0, 1, 1), envs(1, 4, 9)...))
	store(t, mirror, header("behind"), envs(0, 2, 1))
	store(t, mirror, header("ahead"), envs(0, 5, 1))

	ids := []string{"ok", "missing", "header", "diverged", "behind", "ahead"}
	calls := 0
	got := Verify(t.Context(), primary, []Mirror{{Name: "m", Persistence: mirror}}, ids, func(Comparison) { calls++ })
	want := []Comparison{
		{Session: "ok", Mirror: "m", Status: StatusOK, Events: 4, MirrorEvents: 4},
		{Session: "missing", Mirror: "m", Status: StatusMissing, Events: 4},
		{Session: "header", Mirror: "m", Status: StatusHeaderDiffers, Events: 4, MirrorEvents: 4},
		{Session: "diverged", Mirror: "m", Status: StatusDiverged, Events: 4, MirrorEvents: 4, Seq: ptr(int64(1))},
		{Session: "behind", Mirror: "m", Status: StatusBehind, Events: 4, MirrorEvents: 2},
		{Session: "ahead", Mirror: "m", Status: StatusAhead, Events: 4, MirrorEvents: 5},
	}
	if calls != len(want) || len(got) != len(want) {
		t.Fatalf("%d comparisons, %d calls, want %d", len(got), calls, len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if (g.Seq == nil) != (w.Seq == nil) || g.Seq != nil && *g.Seq != *w.Seq {
			t.Errorf("%s: seq %v, want %v", w.Session, g.Seq, w.Seq)
		}
		g.Seq, w.Seq = nil, nil
		if g != w {
			t.Errorf("got  %+v\nwant %+v", g, w)
		}
	}
}

func TestCompareReportsABackendError(t *testing.T) {
	c := Compare(t.Context(), memory.New(), memory.New(), "absent")
	if c.Status != StatusError || c.Detail == "" {
		t.Fatalf("a session the primary lacks: %+v, want status error with a detail", c)
	}
	c = Compare(t.Context(), memory.New(), memory.New(), "Not A Valid Id!")
	if c.Status != StatusError {
		t.Fatalf("an invalid id: %+v, want status error", c)
	}
}
