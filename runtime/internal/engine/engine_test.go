package engine

import (
	"context"
	"github.com/seed-e5e476df/logbook/sdk"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/internal/testbin"
	"github.com/seed-e5e476df/logbook/internal/testserve"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
)

var logbookBin string

func TestMain(m *testing.M) {
	if os.Getenv("LOGBOOK_TEST_WRITER") != "" {
		writerProcess() // the test binary re-executed as a crash-test writer
		return
	}
	testbin.Main(m, &logbookBin)
}

// The embedded default runs a session through a real plugin subprocess, and
// Close flushes, closes and then stops the plugin.
func TestDefaultConfigEndToEndAndOrderlyShutdown(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	e, err := Start(ctx, config.Default(config.Overrides{DataDir: dataDir}), Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range e.Plugins {
		pids = append(pids, p.Pid())
	}
	s, err := e.Store.Create(ctx, store.CreateOptions{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range corpus.Session(1, 10) { // a turn of a real loop
		if _, err := s.Append(ctx, corpusInput(env)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.Store.Flush(ctx, s)
	if err != nil || !res.Participated || res.Backends[0].DurableSeq != 9 {
		t.Fatalf("flush %+v %v", res, err)
	}
	logs, _ := filepath.Glob(filepath.Join(dataDir, "*", "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl.zst"))
	if len(logs) != 1 {
		t.Fatalf("the default stores JSONL+zstd under data_dir; found %v", logs)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !s.Closed() {
		t.Fatal("Close did not release the session")
	}
	for _, pid := range pids {
		if testserve.Alive(pid) {
			t.Fatalf("plugin %d still runs after Close: %s", pid, testserve.Describe(pid))
		}
	}
}

func TestUnknownBundledPluginFailsCleanly(t *testing.T) {
	cfg := config.Headless(config.Overrides{})
	cfg.Persistence[0].Name = "nope"
	if _, err := Start(context.Background(), cfg, Options{Executable: logbookBin}); err == nil {
		t.Fatal("a plugin the binary does not bundle must fail to start")
	}
}

func sessionOpts(id string) store.CreateOptions { return store.CreateOptions{ID: id} }
