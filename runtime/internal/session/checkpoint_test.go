package session

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// restoreWithCheckpoint restores envs through a checkpoint of them.
func restoreWithCheckpoint(t *testing.T, opts Options, ck []byte, envs [][]byte) (*Session, error) {
	t.Helper()
	c, err := DecodeCheckpoint(ck, opts)
	if err != nil {
		return nil, err
	}
	r, err := NewRestorer(context.Background(), opts, RestoreOptions{Events: len(envs)})
	if err != nil {
		t.Fatal(err)
	}
	r.UseCheckpoint(c)
	if err := r.Add(envs); err != nil {
		return nil, err
	}
	return r.Finish()
}

// sameDerivedState fails unless a and b derive the same surface, messages,
// header fold, tool history, transcript and lineage.
func sameDerivedState(t *testing.T, what string, a, b *Session) {
	t.Helper()
	av, _ := a.Surface()
	bv, _ := b.Surface()
	if !slices.Equal(av.Nodes(), bv.Nodes()) || av.ReplaceGeneration() != bv.ReplaceGeneration() || av.ContentGeneration() != bv.ContentGeneration() {
		t.Fatalf("%s: surface %v != %v", what, av.Nodes(), bv.Nodes())
	}
	if !sameLoop(a.loop, b.loop) {
		t.Fatalf("%s: loop state %+v != %+v", what, a.loop, b.loop)
	}
	if x, y := messageJSON(t, a), messageJSON(t, b); !slices.Equal(x, y) {
		t.Fatalf("%s: messages differ", what)
	}
	ah, aok := a.RequestHeader()
	bh, bok := b.RequestHeader()
	if aok != bok || aok && (ah.Seq() != bh.Seq() || string(ah.JSON()) != string(bh.JSON())) {
		t.Fatalf("%s: header fold differs", what)
	}
	if x, y := fmt.Sprint(a.ToolHistory()), fmt.Sprint(b.ToolHistory()); x != y {
		t.Fatalf("%s: tool history differs:\n%s\n%s", what, x, y)
	}
	at, bt := a.Transcript(), b.Transcript()
	if at.Len() != bt.Len() {
		t.Fatalf("%s: transcript %d != %d", what, at.Len(), bt.Len())
	}
	for i := range at.Len() {
		if x, y := at.At(i), bt.At(i); x.Seq != y.Seq || string(x.Message.JSON()) != string(y.Message.JSON()) {
			t.Fatalf("%s: transcript entry %d differs", what, i)
		}
	}
	if a.Len() != b.Len() || a.InheritedEventCount() != b.InheritedEventCount() || len(a.replacements) != len(b.replacements) {
		t.Fatalf("%s: len %d/%d, inherited %d/%d", what, a.Len(), b.Len(), a.InheritedEventCount(), b.InheritedEventCount())
	}
	for i, e := range a.Events().All() {
		f := b.Events().At(i)
		if string(e.Envelope()) != string(f.Envelope()) || string(e.DataView().Bytes()) != string(f.DataView().Bytes()) {
			t.Fatalf("%s: event %d differs", what, i)
		}
		if op, ok := e.SurfaceOp(); true {
			if op2, ok2 := f.SurfaceOp(); op != op2 || ok != ok2 || !slices.Equal(e.SourceEventSeqs(), f.SourceEventSeqs()) {
				t.Fatalf("%s: event %d surface metadata differs", what, i)
			}
		}
	}
}

// A restore through a checkpoint derives exactly what a full restore
// derives, for random logs (replacements, rewrites, headers, developer
// messages, tool calls) and for a checkpoint of a prefix followed by more
// events restored the normal way.
func TestCheckpointRestoreEqualsFullRestore(t *testing.T) {
	for seed := range uint64(60) {
		g := newLogGen(t, seed)
		for range 60 {
			g.next()
		}
		mid := g.s.Len()
		ck, n, ok := g.s.Checkpoint()
		if !ok || n != mid {
			t.Fatalf("seed %d: Checkpoint ok %v, covers %d of %d", seed, ok, n, mid)
		}
		for range 30 {
			g.next()
		}
		live := g.s
		var envs [][]byte
		for _, e := range live.Events().All() {
			envs = append(envs, e.Envelope())
		}
		opts := Options{Header: live.Header()}
		full, err := Restore(context.Background(), opts, RestoreOptions{}, envs)
		if err != nil {
			t.Fatalf("seed %d: full restore: %v", seed, err)
		}
		viaCk, err := restoreWithCheckpoint(t, opts, ck, envs)
		if err != nil {
			t.Fatalf("seed %d: restore through a checkpoint of %d events: %v", seed, mid, err)
		}
		sameDerivedState(t, fmt.Sprintf("seed %d", seed), full, viaCk)
		sameDerivedState(t, fmt.Sprintf("seed %d (live)", seed), live, viaCk)
	}
}

// A checkpoint that does not fit the log or the options is refused, never
// trusted: another version or fingerprint at decode, envelopes of other
// lengths or seqs at Add, and any flipped byte either way.
func TestCheckpointMismatchIsRefused(t *testing.T) {
	g := newLogGen(t, 7)
	for range 40 {
		g.next()
	}
	ck, _, _ := g.s.Checkpoint()
	var envs [][]byte
	for _, e := range g.s.Events().All() {
		envs = append(envs, e.Envelope())
	}
	opts := Options{Header: g.s.Header()}
	if _, err := DecodeCheckpoint(ck, Options{Header: g.s.Header(), MaxEventBytes: 1 << 20}); err == nil {
		t.Error("a checkpoint made under another MaxEventBytes was accepted")
	}
	if _, err := DecodeCheckpoint(ck, Options{Header: g.s.Header(), PluginTypes: map[string]bool{"ext/x": true}}); err == nil {
		t.Error("a checkpoint made under other plugins was accepted")
	}
	other := slices.Clone(envs)
	other[3] = []byte(`{"seq":3,"time":1,"type":"turn/start","data":{"turn":999}}`)
	if _, err := restoreWithCheckpoint(t, opts, ck, other); err == nil {
		t.Error("envelopes of other lengths were accepted through the checkpoint")
	}
	full, err := Restore(context.Background(), opts, RestoreOptions{}, envs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ck {
		flipped := slices.Clone(ck)
		flipped[i] ^= 0x20
		if _, err := restoreWithCheckpoint(t, opts, flipped, envs); err == nil {
			t.Errorf("a checkpoint with byte %d flipped was trusted", i)
		}
	}
	if s, err := restoreWithCheckpoint(t, opts, ck, envs); err != nil {
		t.Fatal(err)
	} else {
		sameDerivedState(t, "intact checkpoint", full, s)
	}
	if _, err := DecodeCheckpoint([]byte("LBCK"), opts); err == nil {
		t.Error("a truncated checkpoint was accepted")
	}
	var empty *Session
	empty, _ = New(Options{Header: sdk.Header{ID: "e", FormatVersion: sdk.FormatVersion}})
	if _, _, ok := empty.Checkpoint(); ok {
		t.Error("an empty session has a checkpoint")
	}
}
