package memory_test

import (
	"strconv"
	"sync"
	"testing"

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
		Name: memory.Name,
		// Damage marks whole events: it never leaves a torn tail.
		Capabilities: persistencetest.Capabilities{StatCounts: true, IntactUnitsProveDamage: true},
		Declared:     memory.Capabilities(),
		Served:       memory.New(),
		New:          func(t *testing.T) sdk.Persistence { return connect(t, memory.New()) },
		Reopen: func(t *testing.T, p sdk.Persistence) sdk.Persistence {
			return connect(t, instance(t, p).Peer())
		},
		SetFormatVersion: func(t *testing.T, p sdk.Persistence, id, literal string) {
			if err := memory.HooksOf(instance(t, p)).SetStoredFormatVersion(id, literal); err != nil {
				t.Fatalf("SetStoredFormatVersion(%q, %q): %v", id, literal, err)
			}
		},
		Corrupt: func(t *testing.T, p sdk.Persistence, id string, seq sdk.Seq) string {
			if err := memory.HooksOf(instance(t, p)).Damage(id, int64(seq), "a flipped bit"); err != nil {
				t.Fatalf("Damage(%q, %d): %v", id, seq, err)
			}
			return "event " + strconv.FormatInt(int64(seq), 10)
		},
		// Tear stays nil: memory keeps whole events, never bytes that a
		// crash could cut.
	}
}

// stored returns a backend holding session "s1" with n events, and its
// write handle.
func stored(t *testing.T, n int) (*memory.Backend, string) {
	t.Helper()
	b := memory.New()
	o, err := b.Create(t.Context(), sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s1", CreatedAt: 1})
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

func TestDropOwnershipFailsTheOwnerAndFreesTheSession(t *testing.T) {
	b, h := stored(t, 2)
	rev := revision(t, b)
	if !memory.HooksOf(b).DropOwnership("s1") {
		t.Fatal("DropOwnership found no claim on a session open for writing")
	}
	if memory.HooksOf(b).DropOwnership("s1") {
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
	o, err := b.Create(t.Context(), sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if !memory.HooksOf(b).DropOwnership("s1") {
		t.Fatal("DropOwnership found no claim on a pending create")
	}
	_, err = b.Flush(t.Context(), o.Handle)
	persistencetest.RequireCode(t, err, sdk.CodeOwnershipLost, "s1")
	_, err = b.Stat(t.Context(), "s1")
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
	if _, err := b.Create(t.Context(), sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s1"}); err != nil {
		t.Fatalf("Create after the pending create lost its claim: %v", err)
	}
	if memory.HooksOf(b).DropOwnership("absent") {
		t.Fatal("DropOwnership dropped a claim on a session that does not exist")
	}
}

func TestSetStoredFormatVersionOfAMissingSession(t *testing.T) {
	err := memory.HooksOf(memory.New()).SetStoredFormatVersion("absent", "2")
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
	_, err := b.Create(t.Context(), sdk.Header{ID: "s1", FormatVersion: sdk.FormatVersion + 1})
	persistencetest.RequireCode(t, err, sdk.CodeFormatUnsupported, sdk.FormatVersion+1)
	o, err := b.Create(t.Context(), sdk.Header{ID: "s1"}) // 0 means the current version
	if err != nil || o.Header.FormatVersion != sdk.FormatVersion {
		t.Fatalf("Create with format version 0 = %+v, %v; want version %d", o.Header, err, sdk.FormatVersion)
	}
}
