package jsonl

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// TestZstdCLIPrintsTheJSONL: the reference decoder (Debian's zstd) reads
// the concatenated, checksummed frames of a log as one stream and prints
// exactly the plain JSONL: the header line, then one line per event.
func TestZstdCLIPrintsTheJSONL(t *testing.T) {
	bin, err := exec.LookPath("zstd")
	if err != nil {
		t.Fatalf("the zstd command is not on PATH; this test checks logs with the reference decoder: apt-get install zstd (%v)", err)
	}
	for _, level := range []string{"fastest", "default", "better", "best"} {
		t.Run(level, func(t *testing.T) {
			cfg := Config{Root: t.TempDir(), Compression: CompressionZstd, ZstdLevel: level}
			b := newTestBackend(t, cfg)
			big := persistencetest.Envelope(7, "todo/write", `{"todos":[{"content":"`+string(bytes.Repeat([]byte("compressible "), 20_000))+`","status":"pending"}]}`)
			events := storeEvents(t, b, "s1", persistencetest.Batch(0, 1), persistencetest.Batch(1, 6), [][]byte{big})
			path := sessionLog(cfg, "s1")
			want := append(headerjson.Encode(testHeader("s1")), '\n')
			for _, ev := range events {
				want = append(append(want, ev...), '\n')
			}
			var stderr bytes.Buffer
			cmd := exec.Command(bin, "-dc", path)
			cmd.Stderr = &stderr
			got, err := cmd.Output()
			if err != nil {
				t.Fatalf("zstd -dc %s: %v\n%s", path, err, stderr.Bytes())
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("zstd -dc printed %d bytes that differ from the %d-byte JSONL:\n%.300s", len(got), len(want), got)
			}
			if err := exec.Command(bin, "-t", "-q", path).Run(); err != nil {
				t.Fatalf("zstd -t %s (checksums): %v", path, err)
			}
			if len(mustRead(t, path)) >= len(want) {
				t.Fatalf("the zstd log is not smaller than the JSONL")
			}
		})
	}
}
