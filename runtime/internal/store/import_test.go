package store

import (
	"context"
	"errors"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
)

// failingImport is a memory backend whose import fails after its first
// batch, as a disk that fills up midway would.
type failingImport struct {
	*memory.Backend
	failed error
}

func (f *failingImport) Import(ctx context.Context, h sdk.Header, events func(yield func([][]byte) error) error) (sdk.Opened, error) {
	return f.Backend.Import(ctx, h, func(yield func([][]byte) error) error {
		n := 0
		return events(func(batch [][]byte) error {
			if n++; n == 2 && f.failed != nil {
				return f.failed
			}
			return yield(batch)
		})
	})
}

// withoutImport hides a backend's import capability.
type withoutImport struct{ sdk.Persistence }

func importStore(t *testing.T, backends ...Backend) *Store {
	t.Helper()
	st, err := New(Options{Backends: backends, NewID: sequentialIDs(), MaxEventBytes: 64 << 10, RPCMaxBytes: 1<<20 + 64<<10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	return st
}

// A repeated import of what is stored (the same header and events, byte
// for byte) succeeds and writes nothing; an import that differs in its
// header or its events is SESSION_ALREADY_EXISTS.
func TestImportRepeatedSucceedsAndAnotherIsRefused(t *testing.T) {
	for name, p := range map[string]sdk.Persistence{"import capability": memory.New(), "create and append": withoutImport{memory.New()}} {
		t.Run(name, func(t *testing.T) {
			st := importStore(t, Backend{Name: "m", Persistence: p})
			h := sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s", CreatedAt: 1_764_000_000_000}
			envs := corpus.LongSession(2, 300)
			if err := st.Import(t.Context(), h, envs); err != nil {
				t.Fatal(err)
			}
			before, err := p.Stat(t.Context(), "s")
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Import(t.Context(), h, envs); err != nil {
				t.Fatalf("the repeated import: %v", err)
			}
			other := h
			other.CreatedAt++
			for what, imp := range map[string]func() error{
				"another header":  func() error { return st.Import(t.Context(), other, envs) },
				"one event fewer": func() error { return st.Import(t.Context(), h, envs[:len(envs)-1]) },
			} {
				if err := imp(); sdk.CodeOf(err) != sdk.CodeSessionAlreadyExists {
					t.Fatalf("an import with %s = %v; want SESSION_ALREADY_EXISTS", what, err)
				}
			}
			after, err := p.Stat(t.Context(), "s")
			if err != nil {
				t.Fatal(err)
			}
			if after.Revision != before.Revision {
				t.Fatalf("the repeated imports changed the revision from %s to %s", before.Revision, after.Revision)
			}
		})
	}
}

// An import whose primary fails midway leaves nothing under the id, and
// its retry succeeds.
func TestImportFailingMidwayLeavesNothing(t *testing.T) {
	broken := errors.New("no space left on device")
	p := &failingImport{Backend: memory.New(), failed: broken}
	st := importStore(t, Backend{Name: "m", Persistence: p})
	h := sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s", CreatedAt: 1_764_000_000_000}
	envs := corpus.LongSession(2, 2000) // several batches of 1 MiB
	if err := st.Import(t.Context(), h, envs); !errors.Is(err, broken) {
		t.Fatalf("Import = %v; want the backend's failure", err)
	}
	if _, err := p.Stat(t.Context(), "s"); !errors.Is(err, sdk.CodeSessionNotFound) {
		t.Fatalf("after the failed import, Stat = %v; want SESSION_NOT_FOUND", err)
	}
	list, err := st.List(t.Context())
	if err != nil || len(list) != 0 {
		t.Fatalf("after the failed import, List = %v, %v; want nothing", list, err)
	}
	p.failed = nil
	if err := st.Import(t.Context(), h, envs); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if got := stored(t, p, "s"); len(got) != len(envs) {
		t.Fatalf("the retry stored %d of %d events", len(got), len(envs))
	}
}
