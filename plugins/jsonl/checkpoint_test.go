package jsonl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// checkpointFixture stores 3 batches of session "s", writes a checkpoint
// covering them through a write handle and appends one more batch; it
// returns the config and the write handle's backend closed again.
func checkpointFixture(t *testing.T, compression string) (Config, *Backend) {
	t.Helper()
	cfg := Config{Root: t.TempDir(), Compression: compression}
	b := newTestBackend(t, cfg)
	storeEvents(t, b, "s", persistencetest.Batch(0, 10), persistencetest.Batch(10, 10), persistencetest.Batch(20, 10))
	o, err := b.Open(t.Context(), "s", sdk.AccessWrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteCheckpoint(t.Context(), o.Handle, 29, []byte("short")); !sdkCode(err, sdk.CodeInvalidBoundary) {
		t.Fatalf("a checkpoint of 29 of 30 durable events: %v, want INVALID_BOUNDARY", err)
	}
	if err := b.WriteCheckpoint(t.Context(), o.Handle, 30, []byte("the host's bytes")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(t.Context(), o.Handle, 30, persistencetest.Batch(30, 5)); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(t.Context(), o.Handle); err != nil {
		t.Fatal(err)
	}
	return cfg, b
}

func sdkCode(err error, code sdk.Code) bool { return sdk.CodeOf(err) == code }

// readCheckpoint opens s with access and returns its checkpoint.
func readCheckpoint(t *testing.T, b *Backend, access sdk.Access) (sdk.Offset, string, bool) {
	t.Helper()
	o, err := b.Open(t.Context(), "s", access)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context(), o.Handle)
	events, data, found, err := b.ReadCheckpoint(t.Context(), o.Handle)
	if err != nil {
		t.Fatal(err)
	}
	return events, string(data), found
}

// A checkpoint is read back while the log's bytes up to its events are
// the ones it was bound to (also after later appends, through read and
// write handles), and is ignored — never an error — once they are not: a
// flipped byte in the covered log, a flipped byte in the checkpoint file,
// or a log that is no longer the one it was written for.
func TestCheckpointBinding(t *testing.T) {
	for _, compression := range []string{CompressionZstd, CompressionNone} {
		t.Run(compression, func(t *testing.T) {
			cfg, b := checkpointFixture(t, compression)
			for _, access := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
				events, data, found := readCheckpoint(t, b, access)
				if !found || events != 30 || data != "the host's bytes" {
					t.Fatalf("access %d: checkpoint %d %q found %v; want 30 events", access, events, data, found)
				}
			}
			ckPath := filepath.Join(cfg.Root, EncodeID("s"), checkpointName)
			intact := mustRead(t, ckPath)
			for _, at := range []int{0, 9, len(intact) / 2, len(intact) - 1} {
				flipped := append([]byte(nil), intact...)
				flipped[at] ^= 1
				if err := os.WriteFile(ckPath, flipped, 0o600); err != nil {
					t.Fatal(err)
				}
				if _, _, found := readCheckpoint(t, b, sdk.AccessRead); found {
					t.Errorf("a checkpoint with byte %d flipped was read back", at)
				}
			}
			if err := os.WriteFile(ckPath, intact, 0o600); err != nil {
				t.Fatal(err)
			}
			// The covered log changes: its first event's time, same length.
			// Plain JSONL still loads (the line is valid), but the
			// checkpoint no longer matches it.
			if compression == CompressionNone {
				log := sessionLog(cfg, "s")
				data := mustRead(t, log)
				i := indexOf(data, []byte(`"time":`))
				data[i+len(`"time":`)] ^= 1 // one digit for another
				if err := os.WriteFile(log, data, 0o600); err != nil {
					t.Fatal(err)
				}
				if _, _, found := readCheckpoint(t, b, sdk.AccessRead); found {
					t.Error("the checkpoint of a log whose covered bytes changed was read back")
				}
			}
		})
	}
}

func indexOf(b, sub []byte) int {
	for i := 0; i+len(sub) <= len(b); i++ {
		if string(b[i:i+len(sub)]) == string(sub) {
			return i
		}
	}
	return -1
}
