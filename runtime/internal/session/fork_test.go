package session

import (
	"context"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Fork of a validated source equals the restore of its fork seed at every
// boundary (log, surface, messages, transcript, header and tool folds,
// lineage), and the child shares the source's prefix events instead of
// copying them.
func TestPropertyForkEqualsRestoreOfTheForkSeed(t *testing.T) {
	const now = 1_800_000_000_000
	for seed := range uint64(40) {
		g := newLogGen(t, seed+5000)
		for range 60 {
			g.next()
		}
		src := g.s
		events := src.Events()
		for _, at := range []*sdk.Seq{nil, new(sdk.Seq(0)), new(sdk.Seq(events.Len() / 2)), new(sdk.Seq(events.Len() - 1))} {
			b, err := ForkBoundary(events, at)
			if err != nil {
				t.Fatalf("seed %d: ForkBoundary(%v): %v", seed, at, err)
			}
			h := ForkHeader(src.Header(), "child", b+1, now)
			want, inherited, err := ForkSeed(events.Slice(), at, now)
			if err != nil || inherited != b+1 {
				t.Fatalf("seed %d: ForkSeed = %d, %v; want inherited %d", seed, inherited, err, b+1)
			}
			restored := mustRestoreEvents(t, Options{Header: h}, RestoreOptions{Source: FromSeed}, want)
			child, err := Fork(context.Background(), Options{Header: h}, src, b, now)
			if err != nil {
				t.Fatalf("seed %d: Fork at %d: %v", seed, b, err)
			}
			requireSameState(t, "Fork", stateOfNoFeed(t, restored), stateOfNoFeed(t, child))
			if child.FirstLiveSeq() != child.Len() || child.InheritedEventCount() != b+1 {
				t.Errorf("seed %d: child FirstLiveSeq %d Len %d inherited %d", seed, child.FirstLiveSeq(), child.Len(), child.InheritedEventCount())
			}
			ce := child.Events()
			for i := range b + 1 {
				if ce.At(int(i)) != events.At(int(i)) {
					t.Fatalf("seed %d: child event %d is a copy, not the source's event", seed, i)
				}
			}
		}
	}
}

// A fork of an empty source is the marker at seq 0, stamped now.
func TestForkOfAnEmptySource(t *testing.T) {
	src, err := New(Options{Header: sdk.Header{ID: "src"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ForkBoundary(src.Events(), nil)
	if err != nil || b != -1 {
		t.Fatalf("ForkBoundary of an empty log = %d, %v; want -1", b, err)
	}
	child, err := Fork(context.Background(), Options{Header: ForkHeader(src.Header(), "c", 0, tT0)}, src, b, tT0)
	if err != nil {
		t.Fatal(err)
	}
	if child.Len() != 1 {
		t.Fatalf("child Len = %d, want 1", child.Len())
	}
	requireEvent(t, child.Events().At(0), 0, tT0, TypeSessionEndSeed, `{"inherited":true}`)
}

// A boundary Fork cannot take is INVALID_BOUNDARY, as ForkBoundary's are.
func TestForkBoundaryOutsideTheSource(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppend(t, s, evTurnStart(1))
	for _, b := range []int64{-2, 1} {
		_, err := Fork(context.Background(), Options{Header: ForkHeader(s.Header(), "c", b+1, tT0)}, s, b, tT0)
		requireCode(t, err, sdk.CodeInvalidBoundary)
	}
	_, err := ForkBoundary(s.Events(), new(sdk.Seq(1)))
	requireDetail(t, requireCode(t, err, sdk.CodeInvalidBoundary), "past the last seq (0)")
}

// Fork only reads the records it shares: readers of the source and a
// fork of it run side by side (a data race here fails under -race).
func TestForkBesideReadersOfTheSource(t *testing.T) {
	g := newLogGen(t, 77)
	for range 200 {
		g.next()
	}
	src := g.s
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, e := range src.Events().All() {
			_ = e.DataView().Kind()
			_ = e.Data()
		}
		_, _ = src.Messages()
	}()
	b := int64(src.Len() - 1)
	if _, err := Fork(context.Background(), Options{Header: ForkHeader(src.Header(), "c", b+1, tT0)}, src, b, tT0); err != nil {
		t.Fatal(err)
	}
	<-done
}

// SalvageFork equals the restore of SalvageSeed, for a prefix that ends
// inside a turn and for an empty one.
func TestSalvageForkEqualsRestoreOfTheSalvageSeed(t *testing.T) {
	info := Salvaged{From: "src", DamagedAtOffset: 40, DamagedBytes: 9, IntactEventsExcluded: 2, Artifact: "/a"}
	empty, err := New(Options{Header: sdk.Header{ID: "src"}})
	if err != nil {
		t.Fatal(err)
	}
	g := newLogGen(t, 91)
	for range 50 {
		g.next()
	}
	for _, src := range []*Session{g.s, empty} {
		seed, inherited, err := SalvageSeed(src.Events().Slice(), info, tT0)
		if err != nil || inherited != int64(src.Len()) {
			t.Fatalf("SalvageSeed = %d, %v; want inherited %d", inherited, err, src.Len())
		}
		h := ForkHeader(src.Header(), "child", inherited, tT0)
		want := mustRestoreEvents(t, Options{Header: h}, RestoreOptions{Source: FromSeed}, seed)
		got, err := SalvageFork(context.Background(), Options{Header: h}, src, info, tT0)
		if err != nil {
			t.Fatalf("SalvageFork: %v", err)
		}
		requireSameState(t, "SalvageFork", stateOfNoFeed(t, want), stateOfNoFeed(t, got))
	}
}
