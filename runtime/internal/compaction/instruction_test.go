package compaction

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultInstructionGolden pins the instruction every summarizer gets.
// After a deliberate change, regenerate with
// LOGBOOK_UPDATE_GOLDEN=1 go test -run TestDefaultInstructionGolden ./runtime/internal/compaction
func TestDefaultInstructionGolden(t *testing.T) {
	golden := filepath.Join("testdata", "instruction.golden")
	if os.Getenv("LOGBOOK_UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(golden, []byte(DefaultInstruction), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if DefaultInstruction != string(want) {
		t.Fatalf("DefaultInstruction differs from %s:\n%s", golden, DefaultInstruction)
	}
}

// TestDefaultInstructionCoversTheSpec checks the contents docs/compaction.md asks for.
func TestDefaultInstructionCoversTheSpec(t *testing.T) {
	for _, want := range []string{
		"Markdown", "dense",
		"## Goals and constraints", "## Decisions and key technical concepts", "## Files and artifacts",
		"## Errors and resolutions", "## Open tasks", "## Current work", "## Next step", "## Other context",
		"Do not call any tools", "Do not add a preamble",
	} {
		if !strings.Contains(DefaultInstruction, want) {
			t.Errorf("DefaultInstruction lacks %q", want)
		}
	}
}

func TestCheckpointPreambleIsTheSpecText(t *testing.T) {
	const spec = "Checkpoint: earlier parts of this conversation were condensed into the summary below to save context. Treat it as settled background, do not repeat or acknowledge it, and continue the task from the messages that follow."
	if CheckpointPreamble != spec {
		t.Fatalf("CheckpointPreamble = %q", CheckpointPreamble)
	}
}
