package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

func readStored(t *testing.T, p sdk.Persistence, id string) [][]byte {
	t.Helper()
	ctx := context.Background()
	o, err := p.Open(ctx, id, sdk.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx, o.Handle)
	var out [][]byte
	if err := p.Read(ctx, o.Handle, 0, -1, func(c [][]byte) error { out = append(out, c...); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// The same workload through JSONL (primary) and SQLite (mirror) reads back
// byte-equal envelopes from both, equal to the session's own.
func TestSameWorkloadBothBackendsByteEqual(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	jconf, _ := json.Marshal(map[string]any{"root": filepath.Join(dir, "jsonl"), "compression": "zstd"})
	sconf, _ := json.Marshal(map[string]any{"path": filepath.Join(dir, "sessions.db")})
	cfg := config.Headless(config.Overrides{})
	cfg.Persistence = []config.Persistence{{Name: "jsonl", Config: jconf}, {Name: "sqlite", Config: sconf}}
	e, err := Start(ctx, cfg, Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	s, err := e.Store.Create(ctx, store.CreateOptions{ID: "both"})
	if err != nil {
		t.Fatal(err)
	}
	for i, env := range corpus.Session(11, 3000) {
		if _, err := s.Append(ctx, appendInputOf(parse(t, env))); err != nil {
			t.Fatal(err)
		}
		if i%500 == 499 {
			if _, err := e.Store.Flush(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := e.Store.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	j := readStored(t, e.Plugins["jsonl"].Persistence(), "both")
	q := readStored(t, e.Plugins["sqlite"].Persistence(), "both")
	if len(j) != int(s.Len()) || len(q) != int(s.Len()) {
		t.Fatalf("jsonl %d, sqlite %d, session %d events", len(j), len(q), s.Len())
	}
	for i := range j {
		want, _ := s.Event(sdk.Seq(i))
		if !bytes.Equal(j[i], q[i]) || !bytes.Equal(j[i], want.Envelope()) {
			t.Fatalf("event %d differs between the backends", i)
		}
	}
}

// A write open that cuts a torn tail reports it, and Store.Open records it
// in the log as session/recovered before the closers and the marker.
func TestTornTailIsRecordedAsSessionRecovered(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	conf, _ := json.Marshal(map[string]any{"root": root, "compression": "none"})
	cfg := config.Headless(config.Overrides{})
	cfg.Persistence = []config.Persistence{{Name: "jsonl", Config: conf}}
	e, err := Start(ctx, cfg, Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.Store.Create(ctx, store.CreateOptions{ID: "torn"})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []session.AppendInput{
		{Type: "turn/start", Data: []byte(`{"turn":1}`)},
		{Type: "user/message", SurfaceOp: &session.SurfaceOp{}, Data: []byte(`{"id":"u","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`)},
	} {
		if _, err := s.Append(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(root, "torn", "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl"))
	if len(logs) != 1 {
		t.Fatalf("log file not found under %s", root)
	}
	partial := []byte(`{"seq":2,"time":1,"type":"turn/e`)
	f, err := os.OpenFile(logs[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(partial)
	f.Close()

	e, err = Start(ctx, cfg, Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	s, rep, err := e.Store.Open(ctx, "torn")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Torn.Bytes != int64(len(partial)) || rep.Torn.FromSeq != 2 || rep.Torn.Artifact == "" {
		t.Fatalf("repair report %+v", rep)
	}
	rec, _ := s.Event(2)
	if rec.Type() != session.TypeSessionRecovered || !strings.Contains(string(rec.Data()), `"tornBytes":`+strconv.Itoa(len(partial))) || !strings.Contains(string(rec.Data()), `"tornFromSeq":2`) {
		t.Fatalf("event 2: %s", rec.Envelope())
	}
	last, _ := s.Event(sdk.Seq(s.Len() - 1))
	if last.Type() != session.TypeSessionEndSeed {
		t.Fatalf("the batch must end with the lifecycle marker: %s", last.Envelope())
	}
	if cut, err := os.ReadFile(rep.Torn.Artifact); err != nil || !bytes.Equal(cut, partial) {
		t.Fatalf("artifact %s: %q %v", rep.Torn.Artifact, cut, err)
	}
}
