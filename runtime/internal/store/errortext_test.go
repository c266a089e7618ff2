package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/jsonl"
	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencefault"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

// errorBackend is one backend as a store reaches it: directly, or over the
// plugin protocol.
type errorBackend struct {
	name string // the backend's name in the store, its plugin's name
	new  func(t *testing.T) sdk.Persistence
}

func errorBackends() []errorBackend {
	mk := func(name string, direct func(t *testing.T) sdk.Persistence) []errorBackend {
		return []errorBackend{
			{name, direct},
			{name, func(t *testing.T) sdk.Persistence {
				p, err := plugintest.Connect(t, pluginrpc.ServeConfig{
					Info:        sdk.Info{Name: name, Kinds: []sdk.Kind{sdk.KindPersistence}},
					Persistence: direct(t),
				}).Persistence()
				if err != nil {
					t.Fatal(err)
				}
				return p
			}},
		}
	}
	var out []errorBackend
	out = append(out, mk(memory.Name, func(*testing.T) sdk.Persistence { return memory.New() })...)
	out = append(out, mk(jsonl.Name, func(t *testing.T) sdk.Persistence {
		b, err := jsonl.New(jsonl.Config{Root: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})...)
	out = append(out, mk(sqlite.Name, func(t *testing.T) sdk.Persistence {
		b := sqlite.New()
		if err := b.Configure(context.Background(), []byte(`{"path":"`+filepath.Join(t.TempDir(), "db")+`"}`)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Shutdown() })
		return b
	})...)
	return out
}

// Errors made by a backend, reached directly or over the plugin protocol,
// render each op once on their way through the store: no "<op>: <op>: "
// (a backend named after its plugin, a flush failure naming the backend, a
// fence wrapping the failure).
func TestErrorsRenderEachOpOnce(t *testing.T) {
	ctx := context.Background()
	free := newTestStore(t, nil)
	s0, err := free.Create(ctx, CreateOptions{ID: "raw"})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := s0.Append(ctx, todo("a"))
	if err != nil {
		t.Fatal(err)
	}
	env := ev.Envelope()
	for i, b := range errorBackends() {
		transport := [2]string{"direct", "pluginrpc"}[i%2]
		t.Run(b.name+"/"+transport, func(t *testing.T) {
			p := b.new(t)
			var texts []string
			note := func(what string, err error, code sdk.Code) {
				t.Helper()
				if sdk.CodeOf(err) != code {
					t.Fatalf("%s: %v; want %s", what, err, code)
				}
				texts = append(texts, err.Error())
			}
			o, err := p.Create(ctx, s0.Header())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Append(ctx, o.Handle, 0, [][]byte{env}); err != nil {
				t.Fatal(err)
			}
			_, conflict := p.Append(ctx, o.Handle, 0, [][]byte{env})
			note("a stale append", conflict, sdk.CodeSeqConflict)

			fault := persistencefault.Wrap(p)
			st := newTestStore(t, nil, Backend{Name: b.name, Persistence: fault})
			_, _, err = st.Open(ctx, "nope")
			note("opening a missing session", err, sdk.CodeSessionNotFound)
			s, err := st.Create(ctx, CreateOptions{ID: "s"})
			if err != nil {
				t.Fatal(err)
			}
			fault.FailNextAppends(1, conflict)
			mustAppend(t, s, todo("a"))
			_, err = st.Flush(ctx, s)
			note("a flush the backend refused", err, sdk.CodeFlushFailed)
			_, err = s.Append(ctx, todo("b"))
			note("an append to the fenced session", err, sdk.CodeSessionFenced)

			for _, text := range texts {
				if n := strings.Count(text, b.name+": "); n != 1 {
					t.Errorf("%q renders %q %d times, want once", text, b.name+": ", n)
				}
				parts := strings.Split(text, ": ")
				for j := 1; j < len(parts); j++ {
					if parts[j] == parts[j-1] {
						t.Errorf("%q repeats %q", text, parts[j])
					}
				}
			}
		})
	}
}
