package persistencetest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Harness connects the suite to one backend, reached one way (directly, over
// go-plugin's in-memory gRPC connection, or as a plugin subprocess). Only
// New is required; each nil hook skips the subtests that need it, an
// optional capability the backend neither declares nor implements the
// group that checks it, and nothing else ever skips.
type Harness struct {
	// New returns a fresh, empty backend instance over storage of its own.
	// It is called once per subtest; the harness releases what it made with
	// t.Cleanup. Required.
	New func(t *testing.T) sdk.Persistence

	// Name is the name Describe must report; "" accepts any non-empty name.
	Name string

	// Capabilities are the optional guarantees the backend makes.
	Capabilities Capabilities

	// Declared are the optional capabilities the backend declares: for a
	// plugin, the Capabilities of the sdk.Info it serves
	// (sdk.CapabilityCopyPrefix, sdk.CapabilityCheckpoint, …). The group
	// of a capability runs when the backend declares it and its Go type
	// (Served) implements its interface; it fails when only one of the two
	// holds, and skips when neither does.
	Declared []string

	// Served is a value of the backend's own Go type, as its plugin serves
	// it (the Persistence of its pluginrpc.ServeConfig): the suite asks it,
	// by type assertion, which optional interfaces the backend implements.
	// nil: the value New returns, which is then the backend itself (an
	// in-process harness; over a plugin transport New returns the host's
	// adapter, which implements every interface).
	Served sdk.Persistence

	// Reopen returns a second instance over the same storage as p, as
	// another process (or the same files opened again) would see it, while
	// p stays open with its handles and claims. The instances must share
	// stored sessions and write claims, and nothing else. nil when the
	// backend cannot share its storage: the Instances group skips.
	Reopen func(t *testing.T, p sdk.Persistence) sdk.Persistence

	// Tear cuts n bytes (the suite uses n = 1) off the end of the stored log
	// of session id, as a crash in the middle of writing its last batch
	// would leave it. The suite stores that last batch as one event of its
	// own, so the torn tail starts at that event's seq whatever the
	// backend's unit (line, frame or row). A backend without bytes to cut
	// (rows) damages its last stored event instead. No write handle is open
	// on id; read handles may be. nil: the TornTail group skips.
	Tear func(t *testing.T, p sdk.Persistence, id string, n int)

	// Corrupt damages the stored event seq of session id, a committed event
	// in the middle of the log that the suite stored as a batch of its own,
	// so that it no longer reads as a valid envelope while every other
	// event stays intact (for example by overwriting a byte inside it). It
	// returns the text a CORRUPT_LOG message about the damage must contain,
	// such as "line 6" (JSONL) or "seq 4" (SQLite). No handle is open on id.
	// nil: the Corruption group skips.
	Corrupt func(t *testing.T, p sdk.Persistence, id string, seq sdk.Seq) (where string)

	// SetFormatVersion rewrites the stored format version of session id to
	// literal byte for byte ("2", "0", "1.5"), as another build would have
	// written it (docs/format.md). No handle is open on id. nil: the FormatGate
	// group skips.
	SetFormatVersion func(t *testing.T, p sdk.Persistence, id, literal string)

	// Rewrite replaces the stored event seq of session id with ev, an
	// envelope of the same seq and byte length, as an outside editor
	// would, so that the log stays valid but no longer holds the bytes it
	// held. The suite stored seq as a batch of its own. No handle is open
	// on id. nil: the Checkpoint rule that needs it skips.
	Rewrite func(t *testing.T, p sdk.Persistence, id string, seq sdk.Seq, ev []byte)
}

// Capabilities are optional guarantees a backend makes beyond docs/plugins.md.
// The zero value claims none, and the suite then accepts every answer the
// contract allows.
type Capabilities struct {
	// StatCounts: Stat reports the exact EventCount of a stored session and
	// a SizeBytes that is > 0 and grows with every non-empty append. When
	// false, -1 (unknown) is also accepted for both, and SizeBytes need not
	// grow.
	StatCounts bool
	// IntactUnitsProveDamage: every acknowledged batch is a unit the
	// backend can check on its own (a checksummed frame, a row), so a
	// damaged event with any intact event after it is CORRUPT_LOG, never a
	// torn tail. When false (plain lines, where a power loss can leave
	// intact lines after a damaged page), only a later turn/end proves the
	// damage committed, and the suite expects a torn tail without one.
	IntactUnitsProveDamage bool
}

// hook names, as the skip messages print them.
const (
	hookReopen           = "Reopen"
	hookTear             = "Tear"
	hookCorrupt          = "Corrupt"
	hookSetFormatVersion = "SetFormatVersion"
	hookRewrite          = "Rewrite"
)

// suite is one Run.
type suite struct{ h Harness }

// rule is one subtest: its name states the rule it checks.
type rule struct {
	name  string
	needs []string // hook names; the rule skips when one is nil
	run   func(t *testing.T, s *suite)
}

type group struct {
	name  string
	rules []rule
	// capability is the optional capability the group checks (one of
	// capabilities); "" for the rules every backend passes.
	capability string
}

// Run runs the conformance suite of docs/plugins.md against the backend h
// reaches, as subtests of t grouped by rule (see the package documentation).
func Run(t *testing.T, h Harness) {
	if h.New == nil {
		t.Fatal("persistencetest: Harness.New is required")
	}
	s := &suite{h: h}
	t.Run("Capabilities", s.checkDeclared)
	for _, g := range groups() {
		s.runGroup(t, g)
	}
}

// runGroup runs the rules of g as subtests of a subtest named after it.
func (s *suite) runGroup(t *testing.T, g group) {
	t.Run(g.name, func(t *testing.T) {
		if g.capability != "" {
			s.requireCapability(t, g.capability)
		}
		for _, r := range g.rules {
			t.Run(r.name, func(t *testing.T) {
				for _, hook := range r.needs {
					if !s.has(hook) {
						t.Skipf("Harness.%s is nil: this rule needs it (see the persistencetest package documentation)", hook)
					}
				}
				r.run(t, s)
			})
		}
	})
}

func groups() []group {
	return []group{
		{"Describe", describeRules, ""},
		{"Create", createRules, ""},
		{"Open", openRules, ""},
		{"RoundTrip", roundTripRules, ""},
		{"CAS", casRules, ""},
		{"Ownership", ownershipRules, ""},
		{"Freshness", freshnessRules, ""},
		{"Revision", revisionRules, ""},
		{"Read", readRules, ""},
		{"Stat", statRules, ""},
		{"List", listRules, ""},
		{"Context", contextRules, ""},
		{"Concurrency", concurrencyRules, ""},
		{"Instances", instanceRules, ""},
		{"FormatGate", formatGateRules, ""},
		{"Migration", migrationRules, ""},
		{"TornTail", tornTailRules, ""},
		{"Corruption", corruptionRules, ""},
		{"CopyPrefix", copyPrefixRules, sdk.CapabilityCopyPrefix},
		{"Watch", watchRules, sdk.CapabilityWatch},
		{"ReadFrames", readFramesRules, sdk.CapabilityReadFrames},
		{"Delete", deleteRules, sdk.CapabilityDelete},
		{"Import", importRules, sdk.CapabilityImport},
		{"Checkpoint", checkpointRules, sdk.CapabilityCheckpoint},
		{"SalvageReader", salvageRules, capSalvage},
		{"Tenancy", tenancyRules, sdk.CapabilityTenants},
	}
}

func (s *suite) has(hook string) bool {
	switch hook {
	case hookReopen:
		return s.h.Reopen != nil
	case hookTear:
		return s.h.Tear != nil
	case hookCorrupt:
		return s.h.Corrupt != nil
	case hookSetFormatVersion:
		return s.h.SetFormatVersion != nil
	case hookRewrite:
		return s.h.Rewrite != nil
	}
	panic("persistencetest: unknown hook " + hook)
}

// backend returns a fresh instance from the harness.
func (s *suite) backend(t *testing.T) sdk.Persistence {
	t.Helper()
	p := s.h.New(t)
	if p == nil {
		t.Fatal("Harness.New returned nil")
	}
	return p
}

// reopen returns a second instance over p's storage.
func (s *suite) reopen(t *testing.T, p sdk.Persistence) sdk.Persistence {
	t.Helper()
	q := s.h.Reopen(t, p)
	if q == nil {
		t.Fatal("Harness.Reopen returned nil")
	}
	return q
}

// header is a session header with every member set, so that a round trip
// that drops one shows.
func header(id string) sdk.Header {
	return sdk.Header{
		FormatVersion:       sdk.FormatVersion,
		ID:                  id,
		CreatedAt:           1_700_000_000_123,
		CWD:                 "/work/tree",
		ParentSession:       "parent-" + id,
		Origin:              "subagent",
		DelegationDepth:     2,
		AgentPreset:         "reviewer",
		IsSeeded:            true,
		InheritedEventCount: 6,
	}
}

func create(t *testing.T, p sdk.Persistence, id string) sdk.Opened {
	t.Helper()
	o, err := p.Create(t.Context(), header(id))
	if err != nil {
		t.Fatalf("Create(%q): %v", id, err)
	}
	return o
}

func open(t *testing.T, p sdk.Persistence, id string, access sdk.Access) sdk.Opened {
	t.Helper()
	o, err := p.Open(t.Context(), id, access)
	if err != nil {
		t.Fatalf("Open(%q, %s): %v", id, accessName(access), err)
	}
	return o
}

func closeHandle(t *testing.T, p sdk.Persistence, handle string) {
	t.Helper()
	if err := p.Close(t.Context(), handle); err != nil {
		t.Fatalf("Close(%s): %v", handle, err)
	}
}

func appendOK(t *testing.T, p sdk.Persistence, handle string, events [][]byte) sdk.Durable {
	t.Helper()
	first := mustSeq(t, events[0])
	d, err := p.Append(t.Context(), handle, first, events)
	if err != nil {
		t.Fatalf("Append(%s, firstSeq %d, %d events): %v", handle, first, len(events), err)
	}
	if want := sdk.Offset(int64(first) + int64(len(events))); d.NextSeq != want {
		t.Fatalf("Append(%s, firstSeq %d, %d events) returned next seq %d; want %d", handle, first, len(events), d.NextSeq, want)
	}
	return d
}

func flush(t *testing.T, p sdk.Persistence, handle string) sdk.Durable {
	t.Helper()
	d, err := p.Flush(t.Context(), handle)
	if err != nil {
		t.Fatalf("Flush(%s): %v", handle, err)
	}
	return d
}

func stat(t *testing.T, p sdk.Persistence, id string) sdk.Stat {
	t.Helper()
	st, err := p.Stat(t.Context(), id)
	if err != nil {
		t.Fatalf("Stat(%q): %v", id, err)
	}
	return st
}

func list(t *testing.T, p sdk.Persistence) map[string]sdk.ListEntry {
	t.Helper()
	out := map[string]sdk.ListEntry{}
	err := p.List(t.Context(), func(e sdk.ListEntry) error {
		if _, dup := out[e.ID]; dup {
			t.Errorf("List yielded session %q twice", e.ID)
		}
		out[e.ID] = e
		return nil
	})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return out
}

// stored creates session id, appends the batches through the create handle
// and returns that handle, still open, and every event appended.
func stored(t *testing.T, p sdk.Persistence, id string, batches ...[][]byte) (handle string, events [][]byte) {
	t.Helper()
	handle = create(t, p, id).Handle
	if len(batches) == 0 {
		flush(t, p, handle)
	}
	for _, b := range batches {
		appendOK(t, p, handle, b)
		events = append(events, b...)
	}
	return handle, events
}

// mustSeq reads the seq of an envelope made by Envelope.
func mustSeq(t testing.TB, ev []byte) sdk.Seq {
	t.Helper()
	const prefix = `{"seq":`
	rest, ok := bytes.CutPrefix(ev, []byte(prefix))
	n := 0
	for ok && n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if !ok || n == 0 {
		t.Fatalf("test bug: %.40q is not an envelope with a seq", ev)
	}
	var seq int64
	for _, c := range rest[:n] {
		seq = seq*10 + int64(c-'0')
	}
	return sdk.Seq(seq)
}

// snapshot is what a rejected call must leave unchanged.
type snapshot struct {
	events   [][]byte
	revision string
	count    int64
}

func snap(t *testing.T, p sdk.Persistence, id string) snapshot {
	t.Helper()
	st := stat(t, p, id)
	o := open(t, p, id, sdk.AccessRead)
	defer closeHandle(t, p, o.Handle)
	return snapshot{events: ReadAll(t, p, o.Handle), revision: st.Revision, count: st.EventCount}
}

// requireUnchanged fails unless session id still holds exactly the events,
// count and revision of before.
func requireUnchanged(t *testing.T, p sdk.Persistence, id string, before snapshot) {
	t.Helper()
	after := snap(t, p, id)
	requireEvents(t, "stored events", after.events, before.events)
	if after.count != before.count {
		t.Fatalf("Stat event count changed from %d to %d", before.count, after.count)
	}
	if after.revision != before.revision {
		t.Fatalf("revision changed from %q to %q though nothing was stored", before.revision, after.revision)
	}
}

// requireEvents fails unless got and want are byte-equal, element by
// element.
func requireEvents(t testing.TB, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d events; want %d", what, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: event %d differs:\n got  %s\n want %s", what, i, clip(got[i]), clip(want[i]))
		}
	}
}

func requireHeader(t testing.TB, what string, got, want sdk.Header) {
	t.Helper()
	if !got.Equal(want) {
		t.Fatalf("%s header:\n got  %+v\n want %+v", what, got, want)
	}
}

// requireCount checks a Stat event count against the capabilities.
func (s *suite) requireCount(t testing.TB, st sdk.Stat, want int) {
	t.Helper()
	if st.EventCount == int64(want) || (!s.h.Capabilities.StatCounts && st.EventCount == -1) {
		return
	}
	t.Fatalf("Stat(%q) event count %d; want %d (StatCounts %t)", st.Header.ID, st.EventCount, want, s.h.Capabilities.StatCounts)
}

func clip(b []byte) string {
	const max = 200
	if len(b) <= max {
		return string(b)
	}
	return fmt.Sprintf("%s…(%d bytes)", b[:max], len(b))
}

func accessName(a sdk.Access) string {
	switch a {
	case sdk.AccessRead:
		return "read"
	case sdk.AccessWrite:
		return "write"
	}
	return fmt.Sprintf("access %d", a)
}
