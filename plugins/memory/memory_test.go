package memory_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// mode is one way the conformance suite reaches a memory backend of this
// process: connect puts a transport in front of an instance.
type mode struct {
	name    string
	connect func(t *testing.T, b *memory.Backend) sdk.Persistence
}

// transport is one entry of the conformance matrix: the subtest name and
// the harness that reaches the backend through it.
type transport struct {
	name    string
	harness func() persistencetest.Harness
}

// modes are the transports the suite runs through, one entry each: a direct
// call, go-plugin's in-memory gRPC connection, and a real plugin subprocess
// (see modes_test.go).
var modes = []transport{
	{"in-process", func() persistencetest.Harness {
		return harness(mode{"in-process", func(_ *testing.T, b *memory.Backend) sdk.Persistence { return b }})
	}},
	{"grpc-in-memory", func() persistencetest.Harness { return harness(mode{"grpc-in-memory", overGRPC}) }},
	{"subprocess", subprocessHarness},
}

func TestConformance(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { persistencetest.Run(t, m.harness()) })
	}
}

// harness runs the suite through m. It remembers which instance each
// connection leads to, so Reopen and SetFormatVersion reach the storage
// behind any transport.
func harness(m mode) persistencetest.Harness {
	var mu sync.Mutex
	behind := map[sdk.Persistence]*memory.Backend{}
	connect := func(t *testing.T, b *memory.Backend) sdk.Persistence {
		p := m.connect(t, b)
		mu.Lock()
		behind[p] = b
		mu.Unlock()
		t.Cleanup(func() {
			mu.Lock()
			delete(behind, p)
			mu.Unlock()
		})
		return p
	}
	instance := func(t *testing.T, p sdk.Persistence) *memory.Backend {
		mu.Lock()
		defer mu.Unlock()
		b, ok := behind[p]
		if !ok {
			t.Fatalf("harness: %T was not made by this harness", p)
		}
		return b
	}
	return persistencetest.Harness{
		Name:         memory.Name,
		Capabilities: persistencetest.Capabilities{StatCounts: true},
		New:          func(t *testing.T) sdk.Persistence { return connect(t, memory.New()) },
		Reopen: func(t *testing.T, p sdk.Persistence) sdk.Persistence {
			return connect(t, instance(t, p).Peer())
		},
		SetFormatVersion: func(t *testing.T, p sdk.Persistence, id, literal string) {
			if err := instance(t, p).SetStoredFormatVersion(id, literal); err != nil {
				t.Fatalf("SetStoredFormatVersion(%q, %q): %v", id, literal, err)
			}
		},
		// Tear and Corrupt stay nil: memory keeps whole events, never bytes
		// that a crash could cut or a disk could flip.
	}
}

// stored returns a backend holding session "s1" with n events, and its
// write handle.
func stored(t *testing.T, n int) (*memory.Backend, string) {
	t.Helper()
	b := memory.New()
	o, err := b.Create(t.Context(), sdk.Header{FormatVersion: 1, ID: "s1", CreatedAt: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(t.Context(), o.Handle, 0, persistencetest.Batch(0, n)); err != nil {
		t.Fatal(err)
	}
	return b, o.Handle
}

// requireStored fails unless s1 holds n events under revision rev ("" to
// skip the revision check).
func requireStored(t *testing.T, b *memory.Backend, n int64, rev string) {
	t.Helper()
	st, err := b.Stat(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if st.EventCount != n || (rev != "" && st.Revision != rev) {
		t.Fatalf("stored %d events, revision %q; want %d, %q", st.EventCount, st.Revision, n, rev)
	}
}

func revision(t *testing.T, b *memory.Backend) string {
	t.Helper()
	st, err := b.Stat(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	return st.Revision
}

func TestFailNextAppendsFailsThatManyAppendsAndStoresNothing(t *testing.T) {
	b, h := stored(t, 3)
	rev := revision(t, b)
	b.FailNextAppends(2, nil)
	for i := range 2 {
		_, err := b.Append(t.Context(), h, 3, persistencetest.Batch(3, 2))
		persistencetest.RequireCode(t, err, sdk.CodeIOError, "FailNextAppends")
		if !sdk.Retryable(err) {
			t.Fatalf("injected failure %d is not retryable: %v", i, err)
		}
		requireStored(t, b, 3, rev)
	}
	if _, err := b.Append(t.Context(), h, 3, persistencetest.Batch(3, 2)); err != nil {
		t.Fatalf("the third append: %v", err)
	}
	requireStored(t, b, 5, "")
}

func TestFailNextAppendsReturnsTheGivenErrorFirstAndIsPerInstance(t *testing.T) {
	b, h := stored(t, 1)
	busy := sdk.Errorf(sdk.CodeBackendBusy, "test", "disk busy")
	b.FailNextAppends(1, busy)
	peer := b.Peer()
	// The injected error comes before every other check, even HANDLE_CLOSED.
	_, err := b.Append(t.Context(), "no-such-handle", 99, nil)
	if !errors.Is(err, sdk.ErrBackendBusy) {
		t.Fatalf("got %v; want the injected BACKEND_BUSY", err)
	}
	_, err = peer.Append(t.Context(), "no-such-handle", 0, nil)
	persistencetest.RequireCode(t, err, sdk.CodeHandleClosed, "no-such-handle")
	if _, err := b.Append(t.Context(), h, 1, persistencetest.Batch(1, 1)); err != nil {
		t.Fatalf("after the armed failure: %v", err)
	}
	b.FailNextAppends(3, nil)
	b.FailNextAppends(0, nil) // disarms
	if _, err := b.Append(t.Context(), h, 2, persistencetest.Batch(2, 1)); err != nil {
		t.Fatalf("after disarming: %v", err)
	}
}

func TestLoseNextAppendRepliesStoresTheBatchAndFails(t *testing.T) {
	// The ambiguous failure of docs/plugins.md: the host cannot tell whether the
	// batch landed; a resend at the same firstSeq then conflicts.
	b, h := stored(t, 3)
	b.LoseNextAppendReplies(1, nil)
	batch := persistencetest.Batch(3, 2)
	_, err := b.Append(t.Context(), h, 3, batch)
	persistencetest.RequireCode(t, err, sdk.CodeIOError, "LoseNextAppendReplies")
	requireStored(t, b, 5, "")
	got := persistencetest.ReadAll(t, b, h)
	if string(got[3]) != string(batch[0]) || string(got[4]) != string(batch[1]) {
		t.Fatal("the batch whose reply was lost is not stored")
	}
	_, err = b.Append(t.Context(), h, 3, batch)
	persistencetest.RequireCode(t, err, sdk.CodeSeqConflict, 3, 5)
	if _, err := b.Append(t.Context(), h, 5, persistencetest.Batch(5, 1)); err != nil {
		t.Fatalf("after the lost reply: %v", err)
	}
}

func TestLoseNextAppendRepliesSkipsRejectedAppends(t *testing.T) {
	b, h := stored(t, 3)
	b.LoseNextAppendReplies(1, nil)
	_, err := b.Append(t.Context(), h, 1, persistencetest.Batch(1, 1))
	persistencetest.RequireCode(t, err, sdk.CodeSeqConflict, 1, 3) // not stored: the reply is not lost
	_, err = b.Append(t.Context(), h, 3, persistencetest.Batch(3, 1))
	persistencetest.RequireCode(t, err, sdk.CodeIOError, "LoseNextAppendReplies")
	requireStored(t, b, 4, "")
}

func TestSetAppendDelayDelaysAppendsAndHonoursTheContext(t *testing.T) {
	b, h := stored(t, 1)
	const d = 40 * time.Millisecond
	b.SetAppendDelay(d)
	start := time.Now()
	if _, err := b.Append(t.Context(), h, 1, persistencetest.Batch(1, 1)); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < d {
		t.Fatalf("a delayed append took %v; want ≥ %v", el, d)
	}

	b.SetAppendDelay(time.Hour)
	rev := revision(t, b)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
	defer cancel()
	_, err := b.Append(ctx, h, 2, persistencetest.Batch(2, 1))
	persistencetest.RequireCode(t, err, sdk.CodeIOError)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v; want it to wrap context.DeadlineExceeded", err)
	}
	requireStored(t, b, 2, rev)

	b.SetAppendDelay(0)
	if _, err := b.Append(t.Context(), h, 2, persistencetest.Batch(2, 1)); err != nil {
		t.Fatalf("after removing the delay: %v", err)
	}
}

func TestDropOwnershipFailsTheOwnerAndFreesTheSession(t *testing.T) {
	b, h := stored(t, 2)
	rev := revision(t, b)
	if !b.DropOwnership("s1") {
		t.Fatal("DropOwnership found no claim on a session open for writing")
	}
	if b.DropOwnership("s1") {
		t.Fatal("DropOwnership dropped a claim twice")
	}
	_, err := b.Append(t.Context(), h, 2, persistencetest.Batch(2, 1))
	persistencetest.RequireCode(t, err, sdk.CodeOwnershipLost, "s1", h)
	_, err = b.Flush(t.Context(), h)
	persistencetest.RequireCode(t, err, sdk.CodeOwnershipLost, "s1")
	if n := len(persistencetest.ReadAll(t, b, h)); n != 2 {
		t.Fatalf("the lost handle reads %d events; want 2", n)
	}
	requireStored(t, b, 2, rev) // ownership changes never alter the revision

	// Another writer claims it; the lost handle's Close leaves that claim.
	peer := b.Peer()
	w, err := peer.Open(t.Context(), "s1", sdk.AccessWrite)
	if err != nil {
		t.Fatalf("Open(write) after the claim was dropped: %v", err)
	}
	if err := b.Close(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	_, err = b.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
	if _, err := peer.Append(t.Context(), w.Handle, 2, persistencetest.Batch(2, 1)); err != nil {
		t.Fatalf("the new owner's append: %v", err)
	}
}

func TestDropOwnershipOfAnUnmaterializedCreate(t *testing.T) {
	b := memory.New()
	o, err := b.Create(t.Context(), sdk.Header{FormatVersion: 1, ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if !b.DropOwnership("s1") {
		t.Fatal("DropOwnership found no claim on a pending create")
	}
	_, err = b.Flush(t.Context(), o.Handle)
	persistencetest.RequireCode(t, err, sdk.CodeOwnershipLost, "s1")
	_, err = b.Stat(t.Context(), "s1")
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
	if _, err := b.Create(t.Context(), sdk.Header{FormatVersion: 1, ID: "s1"}); err != nil {
		t.Fatalf("Create after the pending create lost its claim: %v", err)
	}
	if b.DropOwnership("absent") {
		t.Fatal("DropOwnership dropped a claim on a session that does not exist")
	}
}

func TestSetStoredFormatVersionOfAMissingSession(t *testing.T) {
	err := memory.New().SetStoredFormatVersion("absent", "2")
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "absent")
}

func TestHandlesBelongToOneInstance(t *testing.T) {
	b, h := stored(t, 1)
	err := b.Peer().Read(t.Context(), h, 0, -1, func([][]byte) error { return nil })
	persistencetest.RequireCode(t, err, sdk.CodeHandleClosed, h)
}

func TestCreateRefusesAHeaderItCouldNotReadBack(t *testing.T) {
	b := memory.New()
	for _, h := range []sdk.Header{
		{ID: "s1", CWD: "relative/path"},
		{ID: "s1", Origin: "robot"},
		{ID: "s1", DelegationDepth: -1},
	} {
		_, err := b.Create(t.Context(), h)
		persistencetest.RequireCode(t, err, sdk.CodeHeaderInvalid, "s1")
	}
	_, err := b.Create(t.Context(), sdk.Header{ID: "s1", FormatVersion: 2})
	persistencetest.RequireCode(t, err, sdk.CodeFormatUnsupported, 2)
	o, err := b.Create(t.Context(), sdk.Header{ID: "s1"}) // 0 means the current version
	if err != nil || o.Header.FormatVersion != sdk.FormatVersion {
		t.Fatalf("Create with format version 0 = %+v, %v; want version %d", o.Header, err, sdk.FormatVersion)
	}
}
