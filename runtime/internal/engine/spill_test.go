package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/compaction"
)

// With spill_max_inline_bytes set, the engine's Spiller saves a large tool
// result under spill_root and returns the notice and head/tail in its place;
// the default (0) keeps every result inline; headless has no Spiller.
func TestEngineSpiller(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := compactionConfig(dir)
	cfg.Compaction.Spill.MaxInlineBytes = 2000
	e, err := Start(ctx, cfg, Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	big := strings.Repeat("line of build output\n", 500)
	content, _ := json.Marshal([]map[string]string{{"type": "text", "text": big}})
	r := e.Spiller.Apply(ctx, compaction.ToolOutput{SessionID: "s1", ToolName: "shell", CallID: "c1", Content: content})
	var blocks []struct{ Type, Text string }
	if err := json.Unmarshal(r.Content, &blocks); err != nil || !r.Spilled || len(blocks) != 1 {
		t.Fatalf("spill result %s, spilled %v (%v)", r.Content, r.Spilled, err)
	}
	if text := blocks[0].Text; len(text) > 2000 || !strings.Contains(text, r.Artifact.Locator) || !strings.Contains(text, "bytes omitted") {
		t.Fatalf("inline text of %d bytes: %q", len(text), text)
	}
	if !strings.HasPrefix(r.Artifact.Locator, filepath.Join(dir, "spill")) {
		t.Errorf("artifact %s is not under data_dir/spill", r.Artifact.Locator)
	}
	if b, err := os.ReadFile(r.Artifact.Locator); err != nil || string(b) != big {
		t.Errorf("artifact holds %d bytes (%v), want the whole output", len(b), err)
	}
	if r := e.Spiller.Apply(ctx, compaction.ToolOutput{SessionID: "s1", ToolName: "read", CallID: "c2", Content: content}); r.Spilled {
		t.Error("an exempt tool (read) was spilled")
	}

	off, err := Start(ctx, compactionConfig(t.TempDir()), Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close(ctx)
	if r := off.Spiller.Apply(ctx, compaction.ToolOutput{SessionID: "s1", ToolName: "shell", CallID: "c1", Content: content}); r.Spilled || string(r.Content) != string(content) {
		t.Error("spilling is off by default but the result changed")
	}
}
