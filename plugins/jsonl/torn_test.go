package jsonl

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// TestTornTailAtEveryByteOffset cuts the log at every byte offset inside
// its last batch, as a crash during that batch's write would leave it. A
// read open must return exactly the committed prefix, report the rest as
// torn and change nothing; a write open must keep exactly the cut bytes in
// torn-<ms>.bin, truncate, and then append normally.
func TestTornTailAtEveryByteOffset(t *testing.T) {
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		t.Run(comp, func(t *testing.T) {
			t.Parallel()
			cfg := Config{Root: t.TempDir(), Compression: comp}
			b := newTestBackend(t, cfg)
			all := storeEvents(t, b, "s1", persistencetest.Batch(0, 3), persistencetest.Batch(3, 2), persistencetest.Batch(5, 3))
			path := sessionLog(cfg, "s1")
			dir := filepath.Dir(path)
			full := mustRead(t, path)
			us := units(t, full, comp == CompressionZstd)
			lastStart := us[len(us)-1][0] // the last batch's frame
			if comp == CompressionNone {
				lastStart = us[1+5][0] // the line of event 5
			}
			for cut := lastStart; cut < len(full); cut++ {
				if err := os.WriteFile(path, full[:cut], 0o600); err != nil {
					t.Fatal(err)
				}
				// The committed prefix: for none every complete line counts.
				wantN, wantEnd := 5, lastStart
				if comp == CompressionNone {
					for _, u := range us[1+5:] {
						if u[1] <= cut {
							wantN, wantEnd = wantN+1, u[1]
						}
					}
				}
				wantTorn := sdk.Torn{}
				if cut > wantEnd {
					wantTorn = sdk.Torn{Bytes: int64(cut - wantEnd), FromSeq: sdk.Seq(wantN)}
				}

				r, events := readEvents(t, b, "s1", sdk.AccessRead)
				if r.NextSeq != sdk.Offset(wantN) || r.Torn != wantTorn {
					t.Fatalf("cut at %d: Open(read) = next seq %d, torn %+v; want %d, %+v", cut, r.NextSeq, r.Torn, wantN, wantTorn)
				}
				requireEqualEvents(t, "read open", events, all[:wantN])
				if got := mustRead(t, path); !bytes.Equal(got, full[:cut]) {
					t.Fatalf("cut at %d: a read open changed the file", cut)
				}

				w, events := readEvents(t, b, "s1", sdk.AccessWrite)
				requireEqualEvents(t, "write open", events, all[:wantN])
				if w.NextSeq != sdk.Offset(wantN) || w.Torn.Bytes != wantTorn.Bytes || w.Torn.FromSeq != wantTorn.FromSeq {
					t.Fatalf("cut at %d: Open(write) = next seq %d, torn %+v; want %d, %+v", cut, w.NextSeq, w.Torn, wantN, wantTorn)
				}
				if wantTorn.Bytes > 0 {
					if filepath.Dir(w.Torn.Artifact) != dir || !strings.HasPrefix(filepath.Base(w.Torn.Artifact), "torn-") {
						t.Fatalf("cut at %d: artifact %q is not a torn-<ms>.bin in %s", cut, w.Torn.Artifact, dir)
					}
					if got := mustRead(t, w.Torn.Artifact); !bytes.Equal(got, full[wantEnd:cut]) {
						t.Fatalf("cut at %d: the artifact holds %q; want the cut bytes %q", cut, got, full[wantEnd:cut])
					}
					fi, err := os.Stat(w.Torn.Artifact)
					if err != nil || fi.Mode().Perm() != 0o600 {
						t.Fatalf("cut at %d: artifact mode %v, %v; want 0600", cut, fi.Mode(), err)
					}
					if err := os.Remove(w.Torn.Artifact); err != nil {
						t.Fatal(err)
					}
				} else if w.Torn.Artifact != "" {
					t.Fatalf("cut at %d: an artifact %q without a torn tail", cut, w.Torn.Artifact)
				}
				if got := mustRead(t, path); !bytes.Equal(got, full[:wantEnd]) {
					t.Fatalf("cut at %d: after the write open the file has %d bytes; want the committed %d", cut, len(got), wantEnd)
				}
				next := persistencetest.Batch(wantN, 1)
				if _, err := b.Append(t.Context(), w.Handle, sdk.Seq(wantN), next); err != nil {
					t.Fatalf("cut at %d: append after the cut: %v", cut, err)
				}
				if err := b.Close(t.Context(), w.Handle); err != nil {
					t.Fatal(err)
				}
				o, events := readEvents(t, b, "s1", sdk.AccessRead)
				if o.Torn != (sdk.Torn{}) {
					t.Fatalf("cut at %d: torn %+v after the repair and an append", cut, o.Torn)
				}
				requireEqualEvents(t, "after the repair and an append", events, append(all[:wantN:wantN], next...))
			}
			t.Logf("cut the last batch at each of its %d byte offsets", len(full)-lastStart)
		})
	}
}

// TestReadHandleSeesAWritersRepair: a read handle opened on a torn log
// shows the committed prefix; after a writer cuts the tail and appends, it
// shows the new events (the bytes it had committed never changed).
func TestReadHandleSeesAWritersRepair(t *testing.T) {
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		t.Run(comp, func(t *testing.T) {
			cfg := Config{Root: t.TempDir(), Compression: comp}
			b := newTestBackend(t, cfg)
			all := storeEvents(t, b, "s1", persistencetest.Batch(0, 4), persistencetest.Batch(4, 1))
			path := sessionLog(cfg, "s1")
			full := mustRead(t, path)
			if err := os.WriteFile(path, full[:len(full)-3], 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := b.Open(t.Context(), "s1", sdk.AccessRead)
			if err != nil || r.NextSeq != 4 {
				t.Fatalf("Open(read) = %+v, %v; want next seq 4", r, err)
			}
			requireEqualEvents(t, "read handle on the torn log", persistencetest.ReadAll(t, b, r.Handle), all[:4])
			w, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
			if err != nil {
				t.Fatal(err)
			}
			more := persistencetest.Batch(4, 3)
			if _, err := b.Append(t.Context(), w.Handle, 4, more); err != nil {
				t.Fatal(err)
			}
			requireEqualEvents(t, "read handle after the repair", persistencetest.ReadAll(t, b, r.Handle), append(all[:4:4], more...))
		})
	}
}
