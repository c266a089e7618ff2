package engine

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
)

// TestStoredCorpusSize stores the same 20,000-event corpus, flushed in
// 256-event batches, as plain JSONL, JSONL+zstd and SQLite, and reports the
// sizes; JSONL+zstd must stay within 30% of plain JSONL.
func TestStoredCorpusSize(t *testing.T) {
	ctx := context.Background()
	envs := corpus.Session(42, 20_000)
	sizes := map[string]int64{}
	for _, c := range []struct{ name, backend string }{
		{"jsonl", "jsonl"}, {"jsonl+zstd", "jsonl"}, {"sqlite", "sqlite"},
	} {
		dir := t.TempDir()
		var conf []byte
		switch c.name {
		case "jsonl":
			conf, _ = json.Marshal(map[string]any{"root": dir, "compression": "none"})
		case "jsonl+zstd":
			conf, _ = json.Marshal(map[string]any{"root": dir, "compression": "zstd"})
		default:
			conf, _ = json.Marshal(map[string]any{"path": filepath.Join(dir, "sessions.db")})
		}
		cfg := config.Headless(config.Overrides{})
		cfg.Persistence = []config.Persistence{{Name: c.backend, Config: conf}}
		e, err := Start(ctx, cfg, Options{Executable: logbookBin})
		if err != nil {
			t.Fatal(err)
		}
		s, err := e.Store.Create(ctx, store.CreateOptions{ID: "size"})
		if err != nil {
			t.Fatal(err)
		}
		for i, env := range envs {
			ev := parse(t, env)
			if _, err := s.Append(ctx, appendInputOf(ev)); err != nil {
				t.Fatal(err)
			}
			if (i+1)%256 == 0 || i == len(envs)-1 {
				if _, err := e.Store.Flush(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := e.Close(ctx); err != nil {
			t.Fatal(err)
		}
		sizes[c.name] = dirSize(t, dir)
	}
	t.Logf("stored size of a 20,000-event corpus: plain JSONL %d B, JSONL+zstd %d B (%.1f%%), SQLite %d B (%.1f%%)",
		sizes["jsonl"], sizes["jsonl+zstd"], 100*float64(sizes["jsonl+zstd"])/float64(sizes["jsonl"]),
		sizes["sqlite"], 100*float64(sizes["sqlite"])/float64(sizes["jsonl"]))
	if r := float64(sizes["jsonl+zstd"]) / float64(sizes["jsonl"]); r > 0.30 {
		t.Fatalf("JSONL+zstd is %.1f%% of plain JSONL; the target is ≤ 30%%", 100*r)
	}
}

func dirSize(t *testing.T, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
