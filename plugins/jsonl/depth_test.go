package jsonl

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// deepEnvelope is a canonical envelope at seq whose data nests depth arrays.
func deepEnvelope(seq, depth int) []byte {
	return fmt.Appendf(nil, `{"seq":%d,"time":1,"type":"x-test/deep","data":%s1%s,"ignorable":true}`,
		seq, strings.Repeat("[", depth), strings.Repeat("]", depth))
}

// Data nested exactly as deep as the host allows (512 levels of its own,
// the envelope not counted) is stored by an Append, in a batch with other
// events and alone, and reads back after a reopen, with both compressions.
func TestDataAtTheDepthLimitIsStored(t *testing.T) {
	for _, comp := range []string{CompressionNone, CompressionZstd} {
		t.Run(comp, func(t *testing.T) {
			cfg := Config{Root: filepath.Join(t.TempDir(), "root"), Compression: comp}
			want := storeEvents(t, newTestBackend(t, cfg), "deep",
				[][]byte{deepEnvelope(0, 1), deepEnvelope(1, 512), deepEnvelope(2, 2)},
				[][]byte{deepEnvelope(3, 512)})
			_, got := readEvents(t, newTestBackend(t, cfg), "deep", sdk.AccessRead)
			requireEqualEvents(t, "after a reopen", got, want)
		})
	}
}
