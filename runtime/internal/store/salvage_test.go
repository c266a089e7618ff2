package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// salvageStore is a store over p whose salvage artifacts go to a fresh
// directory, which it returns.
func salvageStore(t *testing.T, p sdk.Persistence) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "salvaged")
	st, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: p}}, NewID: sequentialIDs(), SalvageDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(ctx) })
	return st, dir
}

// damagedSnapshot is everything a salvage must leave unchanged about a
// damaged stored session.
type damagedSnapshot struct {
	revision string
	damaged  sdk.Damaged
	prefix   [][]byte
}

func snapshotDamaged(t *testing.T, p *memory.Backend, id string) damagedSnapshot {
	t.Helper()
	st, err := p.Stat(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	s := damagedSnapshot{revision: st.Revision}
	if s.damaged, err = p.ReadDamaged(ctx, id, func(c [][]byte) error { s.prefix = append(s.prefix, c...); return nil }); err != nil {
		t.Fatal(err)
	}
	return s
}

func envelopes(events []session.Event) [][]byte {
	out := make([][]byte, len(events))
	for i, e := range events {
		out[i] = e.Envelope()
	}
	return out
}

func requireSameEnvelopes(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: event %d = %s\nwant byte-identical %s", what, i, got[i], want[i])
		}
	}
}

// The child of a salvage is, byte for byte, the fork of the valid prefix at
// its last seq — closers for the open cut included — followed by one
// session/salvaged event; the damaged bytes are in the artifact; the
// source is unchanged.
func TestSalvageIsTheForkOfTheValidPrefixPlusOneSalvagedEvent(t *testing.T) {
	p := memory.New()
	crashedLog(t, p, "src") // 6 events ending in an open step with an unanswered call
	st, dir := salvageStore(t, p)
	last := sdk.Seq(3) // the prefix ends inside step 1 of turn 1
	fork, err := st.Fork(ctx, ForkRequest{SourceID: "src", Boundary: &last, ChildID: "fork"})
	if err != nil {
		t.Fatal(err)
	}
	if err := memory.HooksOf(p).Damage("src", 4, "frame checksum mismatch"); err != nil {
		t.Fatal(err)
	}
	before := snapshotDamaged(t, p, "src")

	child, rep, err := st.Salvage(ctx, SalvageRequest{SourceID: "src", ChildID: "child"})
	if err != nil {
		t.Fatalf("Salvage: %v", err)
	}
	got := envelopes(child.Events().Slice())
	requireSameEnvelopes(t, "the child before its salvaged event", got[:len(got)-1], envelopes(fork.Events().Slice()))
	salvaged := child.Events().Slice()[len(got)-1]
	wantArtifact := filepath.Join(dir, "child-"+itoa(salvaged.Time())+".salvaged.bin")
	dmg := before.damaged.Damage
	wantData := `{"salvagedFrom":"src","damagedAtOffset":` + itoa(dmg.Offset) + `,"damagedBytes":` + itoa(dmg.Bytes) +
		`,"intactEventsExcluded":1,"artifact":"` + wantArtifact + `"}`
	if salvaged.Type() != session.TypeSessionSalvaged || salvaged.Seq() != sdk.Seq(len(got)-1) || string(salvaged.Data()) != wantData {
		t.Fatalf("last event = %s; want session/salvaged %s", salvaged.Envelope(), wantData)
	}
	h, fh := child.Header(), fork.Header()
	if !h.IsSeeded || h.InheritedEventCount != 4 || h.ParentSession != "src" || h.CWD != fh.CWD || h.ID != "child" ||
		child.FirstLiveSeq() != child.Len() {
		t.Fatalf("child header %+v (fork's %+v), first live seq %d of %d", h, fh, child.FirstLiveSeq(), child.Len())
	}
	want := SalvageReport{Salvaged: session.Salvaged{From: "src", DamagedAtOffset: dmg.Offset, DamagedBytes: dmg.Bytes,
		IntactEventsExcluded: 1, Artifact: wantArtifact}, ValidEvents: 4, Reason: "frame checksum mismatch"}
	if rep != want {
		t.Fatalf("report = %+v\nwant %+v", rep, want)
	}
	art, err := os.ReadFile(rep.Artifact)
	if err != nil || !bytes.Equal(art, dmg.Tail) || len(art) == 0 {
		t.Fatalf("artifact = %q, %v; want the damaged tail %q", art, err, dmg.Tail)
	}
	if fi, _ := os.Stat(rep.Artifact); fi.Mode().Perm() != 0o600 {
		t.Fatalf("artifact mode %v, want 0600", fi.Mode().Perm())
	}
	// The child is stored as it is live, and loads.
	if err := st.Release(ctx, child); err != nil {
		t.Fatal(err)
	}
	requireSameEnvelopes(t, "the stored child", stored(t, p, "child"), got)
	st2, _ := salvageStore(t, p)
	if _, _, err := st2.Inspect(ctx, "child"); err != nil {
		t.Fatalf("the salvaged child does not load: %v", err)
	}
	// The source is untouched.
	after := snapshotDamaged(t, p, "src")
	requireSameEnvelopes(t, "the source's valid prefix", after.prefix, before.prefix)
	if after.revision != before.revision || !bytes.Equal(after.damaged.Damage.Tail, dmg.Tail) {
		t.Fatalf("the source changed: revision %s → %s", before.revision, after.revision)
	}
}

// Damage right after the header leaves an empty prefix: the child is what
// a fork of an empty log is, the inherited marker at seq 0, then the
// salvaged event.
func TestSalvageOfAnEmptyValidPrefix(t *testing.T) {
	p := memory.New()
	crashedLog(t, p, "src")
	if err := memory.HooksOf(p).Damage("src", 0, "bad"); err != nil {
		t.Fatal(err)
	}
	st, _ := salvageStore(t, p)
	child, rep, err := st.Salvage(ctx, SalvageRequest{SourceID: "src"})
	if err != nil {
		t.Fatal(err)
	}
	evs := child.Events().Slice()
	if child.ID() != "gen-1" || len(evs) != 2 || rep.ValidEvents != 0 || rep.IntactEventsExcluded != 5 {
		t.Fatalf("child %s with %d events, report %+v", child.ID(), len(evs), rep)
	}
	if evs[0].Type() != session.TypeSessionEndSeed || string(evs[0].Data()) != `{"inherited":true}` || evs[1].Type() != session.TypeSessionSalvaged {
		t.Fatalf("events = %s, %s", evs[0].Envelope(), evs[1].Envelope())
	}
	if h := child.Header(); !h.IsSeeded || h.InheritedEventCount != 0 || h.ParentSession != "src" {
		t.Fatalf("header %+v", h)
	}
}

// A source that is itself a fork child and whose damage comes before its
// inherited marker: the prefix's lineage comes from the prefix.
func TestSalvageOfAForkChildDamagedBeforeItsMarker(t *testing.T) {
	p := memory.New()
	crashedLog(t, p, "src")
	st, _ := salvageStore(t, p)
	f, err := st.Fork(ctx, ForkRequest{SourceID: "src", ChildID: "f"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Release(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := memory.HooksOf(p).Damage("f", 2, "bad"); err != nil {
		t.Fatal(err)
	}
	child, _, err := st.Salvage(ctx, SalvageRequest{SourceID: "f", ChildID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if h := child.Header(); h.InheritedEventCount != 2 || h.ParentSession != "f" {
		t.Fatalf("header %+v", h)
	}
}

// Each refusal has its code, names what it is about, and creates nothing:
// no child, no artifact.
func TestSalvageErrors(t *testing.T) {
	p := memory.New()
	crashedLog(t, p, "src")
	crashedLog(t, p, "intact")
	if err := memory.HooksOf(p).Damage("src", 3, "bad"); err != nil {
		t.Fatal(err)
	}
	st, dir := salvageStore(t, p)
	live, err := st.Create(ctx, CreateOptions{ID: "live"})
	if err != nil {
		t.Fatal(err)
	}
	noDir, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: p}}})
	if err != nil {
		t.Fatal(err)
	}
	defer noDir.Close(ctx)
	plain, plainDir := salvageStore(t, struct{ sdk.Persistence }{p}) // hides ReadDamaged
	cases := []struct {
		name  string
		st    *Store
		r     SalvageRequest
		code  sdk.Code
		parts []string
	}{
		{"child stored", st, SalvageRequest{SourceID: "absent", ChildID: "intact"}, sdk.CodeSessionAlreadyExists, []string{`"intact"`}},
		{"child is the source", st, SalvageRequest{SourceID: "src", ChildID: "src"}, sdk.CodeSessionAlreadyExists, []string{`"src"`}},
		{"child live", st, SalvageRequest{SourceID: "src", ChildID: "live"}, sdk.CodeSessionAlreadyExists, []string{`"live"`}},
		{"child id invalid", st, SalvageRequest{SourceID: "src", ChildID: "a\x00"}, sdk.CodeInvalidSessionID, nil},
		{"source id invalid", st, SalvageRequest{SourceID: "", ChildID: "c"}, sdk.CodeInvalidSessionID, nil},
		{"source missing", st, SalvageRequest{SourceID: "absent", ChildID: "c"}, sdk.CodeSessionNotFound, []string{`"absent"`}},
		{"source intact", st, SalvageRequest{SourceID: "intact", ChildID: "c"}, sdk.CodeInvalidBoundary, []string{`"intact"`, "6 events", "fork"}},
		{"source live", st, SalvageRequest{SourceID: "live", ChildID: "c"}, sdk.CodeInvalidBoundary, []string{`"live"`, "live", "fork"}},
		{"no salvage dir", noDir, SalvageRequest{SourceID: "src", ChildID: "c"}, sdk.CodeConfigInvalid, []string{"SalvageDir"}},
		{"backend cannot read damage", plain, SalvageRequest{SourceID: "src", ChildID: "c"}, sdk.CodeConfigInvalid, []string{"mem", "damaged"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := c.st.Salvage(ctx, c.r)
			var e *sdk.Error
			if !errors.As(err, &e) || e.Code != c.code {
				t.Fatalf("Salvage = %v; want %s", err, c.code)
			}
			for _, part := range c.parts {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not name %s", err, part)
				}
			}
			if _, err := p.Stat(ctx, "c"); !errors.Is(err, sdk.CodeSessionNotFound) {
				t.Fatalf("a refused salvage stored the child: %v", err)
			}
		})
	}
	for _, d := range []string{dir, plainDir} {
		if entries, _ := os.ReadDir(d); len(entries) != 0 {
			t.Fatalf("refused salvages left %d files in %s", len(entries), d)
		}
	}
	_ = live
}

// An artifact that cannot be written fails the salvage with IO_ERROR before
// the child exists.
func TestSalvageThatCannotWriteItsArtifactCreatesNothing(t *testing.T) {
	p := memory.New()
	crashedLog(t, p, "src")
	if err := memory.HooksOf(p).Damage("src", 3, "bad"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: p}}, SalvageDir: file})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	_, _, err = st.Salvage(ctx, SalvageRequest{SourceID: "src", ChildID: "c"})
	if sdk.CodeOf(err) != sdk.CodeIOError || !strings.Contains(err.Error(), file) {
		t.Fatalf("Salvage = %v; want IO_ERROR naming %s", err, file)
	}
	if _, err := p.Stat(ctx, "c"); !errors.Is(err, sdk.CodeSessionNotFound) {
		t.Fatalf("the child was stored: %v", err)
	}
	if _, ok := st.Get("c"); ok {
		t.Fatal("the child is live")
	}
}
