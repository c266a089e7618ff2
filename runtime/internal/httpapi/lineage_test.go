package httpapi

import (
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

func entry(id, parent string, inherited, createdAt int64) store.ListEntry {
	return store.ListEntry{ListEntry: sdk.ListEntry{ID: id, Header: sdk.Header{ID: id, ParentSession: parent,
		IsSeeded: parent != "" && inherited > 0, InheritedEventCount: inherited, CreatedAt: createdAt}}}
}

// A parent that is not stored is listed as missing and ends the walk; the
// tree is rooted at the oldest stored ancestor.
func TestLineageMissingParentEndsTheWalk(t *testing.T) {
	l := newLineage([]store.ListEntry{entry("b", "gone", 4, 2), entry("c", "b", 2, 3), entry("d", "b", 0, 1)})
	if got := string(l.appendTree(nil, "b", false, map[string]bool{})); got != `{"id":"b","children":[{"id":"d","children":[]},{"id":"c","seq":1,"children":[]}]}` {
		t.Fatalf("tree %s", got)
	}
	b := l.appendJSON(nil, "c")
	if string(b) != `{"id":"c","ancestors":[{"id":"b","seq":1},{"id":"gone","seq":3,"missing":true}],"children":[],"tree":{"id":"b","children":[{"id":"d","children":[]},{"id":"c","seq":1,"children":[]}]}}` {
		t.Fatalf("lineage %s", b)
	}
}

// Parent links that form a cycle (a damaged listing) end the walk and the
// tree instead of looping.
func TestLineageCycleEnds(t *testing.T) {
	l := newLineage([]store.ListEntry{entry("x", "y", 1, 1), entry("y", "x", 1, 2)})
	b := l.appendJSON(nil, "x")
	if string(b) != `{"id":"x","ancestors":[{"id":"y","seq":0}],"children":[{"id":"y","seq":0,"createdAt":2}],"tree":{"id":"y","children":[{"id":"x","seq":0,"children":[]}]}}` {
		t.Fatalf("lineage %s", b)
	}
}
