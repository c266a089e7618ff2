package session

import (
	"bytes"
	"context"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// A salvage seed is the fork seed of the whole prefix, byte for byte, plus
// one session/salvaged event stamped now; it restores as a seeded child.
func TestSalvageSeedIsTheForkSeedPlusTheSalvagedEvent(t *testing.T) {
	src, t5 := openCutSource(t) // ends inside an open step with a pending call
	now := t5 + 60_000
	prefix := src.Events().Slice()
	fork, forkInherited, err := ForkSeed(prefix, nil, now)
	if err != nil {
		t.Fatalf("ForkSeed: %v", err)
	}
	info := Salvaged{From: "src \"1\"", DamagedAtOffset: 4096, DamagedBytes: 512, IntactEventsExcluded: 3, Artifact: "/d/x y.bin"}
	seed, inherited, err := SalvageSeed(prefix, info, now)
	if err != nil {
		t.Fatalf("SalvageSeed: %v", err)
	}
	if inherited != forkInherited || len(seed) != len(fork)+1 {
		t.Fatalf("SalvageSeed = %d events, inherited %d; want %d, %d", len(seed), inherited, len(fork)+1, forkInherited)
	}
	for i, e := range fork {
		if !bytes.Equal(seed[i].Envelope(), e.Envelope()) {
			t.Errorf("seed[%d] = %s, want the fork seed's %s", i, seed[i].Envelope(), e.Envelope())
		}
	}
	last := seed[len(seed)-1]
	requireEvent(t, last, sdk.Seq(len(fork)), now, TypeSessionSalvaged,
		`{"salvagedFrom":"src \"1\"","damagedAtOffset":4096,"damagedBytes":512,"intactEventsExcluded":3,"artifact":"/d/x y.bin"}`)
	opts := restoreOpts(func(o *Options) { o.Header.IsSeeded, o.Header.InheritedEventCount = true, inherited })
	if _, err := RestoreEvents(context.Background(), opts, RestoreOptions{Source: FromSeed}, seed); err != nil {
		t.Fatalf("the salvage seed does not restore: %v", err)
	}
}

// An empty valid prefix gives what a fork of an empty log gives — the
// inherited marker at seq 0, stamped now — then the salvaged event.
func TestSalvageSeedOfAnEmptyPrefix(t *testing.T) {
	seed, inherited, err := SalvageSeed(nil, Salvaged{From: "s", DamagedBytes: 9, Artifact: "/a"}, tT0)
	if err != nil {
		t.Fatalf("SalvageSeed: %v", err)
	}
	if inherited != 0 || len(seed) != 2 {
		t.Fatalf("SalvageSeed = %d events, inherited %d; want 2, 0", len(seed), inherited)
	}
	requireEvent(t, seed[0], 0, tT0, TypeSessionEndSeed, `{"inherited":true}`)
	requireEvent(t, seed[1], 1, tT0, TypeSessionSalvaged, `{"salvagedFrom":"s","damagedAtOffset":0,"damagedBytes":9,"intactEventsExcluded":0,"artifact":"/a"}`)
}
