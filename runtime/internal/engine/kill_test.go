package engine

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// kill -9 of a persistence plugin 20 times at random points of a stream of
// appends: the plugin is restarted, the store recovers (docs/plugins.md), and the
// stored log ends byte-equal to the in-memory log, every seq stored once.
func TestKillPersistencePluginDuringAppends(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	conf, _ := json.Marshal(map[string]any{"root": root, "compression": "zstd"})
	cfg := config.Headless(config.Overrides{})
	cfg.Persistence = []config.Persistence{{Name: "jsonl", Config: conf}}
	cfg.WriteWindow = 5 * time.Millisecond
	cfg.RetryMaxBackoff = 50 * time.Millisecond
	e, err := Start(ctx, cfg, Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	plugin := e.Plugins["jsonl"]
	s, err := e.Store.Create(ctx, sessionOpts("killed"))
	if err != nil {
		t.Fatal(err)
	}
	events := corpus.Session(3, 6000)
	rng := rand.New(rand.NewPCG(9, 9))
	kills := 0
	// kill hits the live process only: a kill while the previous one is
	// still being restarted would not count.
	kill := func() bool {
		if plugin.Restarts() < kills {
			return false
		}
		pid := plugin.Pid()
		if pid <= 0 || syscall.Kill(pid, syscall.SIGKILL) != nil {
			return false
		}
		kills++
		return true
	}
	for i, env := range events {
		ev, err := session.ParseEnvelope(env, 0)
		if err != nil {
			t.Fatal(err)
		}
		in := session.AppendInput{Type: ev.Type(), Data: ev.Data()}
		if op, ok := ev.SurfaceOp(); ok {
			in.SurfaceOp = &op
		}
		if _, err := s.Append(ctx, in); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if kills < 20 && rng.IntN(len(events)/40) == 0 {
			kill()
		}
	}
	for kills < 20 { // the rest at random moments while the queue still drains
		if !kill() {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := e.Store.Flush(ctx, s)
		if err == nil {
			break
		}
		if s.Fenced() != nil {
			t.Fatalf("session fenced: %v", s.Fenced())
		}
		if time.Now().After(deadline) {
			t.Fatalf("no successful flush within 60 s after %d kills: %v", kills, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for plugin.Restarts() < kills {
		if time.Now().After(deadline) {
			t.Fatalf("%d kills but only %d restarts", kills, plugin.Restarts())
		}
		time.Sleep(10 * time.Millisecond)
	}
	p := plugin.Persistence()
	o, err := p.Open(ctx, "killed", sdk.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = p.Read(ctx, o.Handle, 0, -1, func(c [][]byte) error {
		for _, b := range c {
			want, ok := s.Event(sdk.Seq(n))
			if !ok || string(b) != string(want.Envelope()) {
				t.Fatalf("stored event %d differs from the in-memory log", n)
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != int(s.Len()) {
		t.Fatalf("stored %d events, the session has %d", n, s.Len())
	}
	t.Logf("%d kills, %d restarts, %d events stored once each", kills, plugin.Restarts(), n)
}
