package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

// storage is one root directory and the compression the backends over it
// use: what Reopen shares and what the damage hooks rewrite.
type storage struct {
	root        string
	compression string
}

func (s storage) configJSON() []byte {
	b, _ := json.Marshal(Config{Root: s.root, Compression: s.compression})
	return b
}

// transport connects a backend over storage s: directly, over go-plugin's
// in-memory gRPC connection, or as a `logbook plugin jsonl` subprocess.
type transport struct {
	name    string
	connect func(t *testing.T, s storage) sdk.Persistence
}

var transports = []transport{
	{"in-process", func(t *testing.T, s storage) sdk.Persistence {
		b, err := New(Config{Root: s.root, Compression: s.compression})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}},
	{"grpc-in-memory", func(t *testing.T, s storage) sdk.Persistence {
		// The production ServeConfig, configured over the wire as the host
		// configures a plugin.
		return plugintest.ConfiguredPersistence(t, ServeConfig("test"), s.configJSON())
	}},
	{"subprocess", func(t *testing.T, s storage) sdk.Persistence {
		if logbookBin == "" {
			t.Fatal("the logbook binary was not built (TestMain)")
		}
		return plugintest.LaunchedPersistence(t, exec.Command(logbookBin, "plugin", Name), s.configJSON())
	}},
}

// TestConformance runs the persistence suite through every transport and
// both compressions, with every hook: Reopen (a second backend over the
// same root: another process in the subprocess mode), Tear, Corrupt and
// SetFormatVersion (which rewrite the files).
func TestConformance(t *testing.T) {
	for _, tr := range transports {
		for _, comp := range []string{CompressionZstd, CompressionNone} {
			t.Run(tr.name+"/"+comp, func(t *testing.T) {
				t.Parallel()
				persistencetest.Run(t, harness(tr, comp))
			})
		}
	}
}

func harness(tr transport, comp string) persistencetest.Harness {
	var mu sync.Mutex
	behind := map[sdk.Persistence]storage{}
	connect := func(t *testing.T, s storage) sdk.Persistence {
		p := tr.connect(t, s)
		mu.Lock()
		behind[p] = s
		mu.Unlock()
		t.Cleanup(func() {
			mu.Lock()
			delete(behind, p)
			mu.Unlock()
		})
		return p
	}
	storageOf := func(t *testing.T, p sdk.Persistence) storage {
		mu.Lock()
		defer mu.Unlock()
		s, ok := behind[p]
		if !ok {
			t.Fatalf("harness: %T was not made by this harness", p)
		}
		return s
	}
	return persistencetest.Harness{
		Name: Name,
		// Each zstd batch is one checksummed frame.
		Capabilities: persistencetest.Capabilities{IntactUnitsProveDamage: comp == CompressionZstd},
		Declared:     ServeConfig("test").Info.Capabilities,
		Served:       ServeConfig("test").Persistence,
		New: func(t *testing.T) sdk.Persistence {
			return connect(t, storage{root: filepath.Join(t.TempDir(), "root"), compression: comp})
		},
		Reopen: func(t *testing.T, p sdk.Persistence) sdk.Persistence {
			return connect(t, storageOf(t, p))
		},
		Tear: func(t *testing.T, p sdk.Persistence, id string, n int) {
			path := logPath(t, storageOf(t, p), id)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()-int64(n)); err != nil {
				t.Fatal(err)
			}
		},
		Corrupt: func(t *testing.T, p sdk.Persistence, id string, seq sdk.Seq) string {
			return corruptEvent(t, logPath(t, storageOf(t, p), id), int64(seq))
		},
		SetFormatVersion: func(t *testing.T, p sdk.Persistence, id, literal string) {
			// A generation holds its own format version: a version another
			// build wrote is in a file of that generation.
			path := logPath(t, storageOf(t, p), id)
			setFormatVersion(t, path, literal)
			if v, err := strconv.Atoi(literal); err == nil && v > 0 && strconv.Itoa(v) == literal {
				moved := filepath.Join(filepath.Dir(path), logName(v, filepath.Ext(path) == ".zst"))
				if err := os.Rename(path, moved); err != nil {
					t.Fatal(err)
				}
			}
		},
		Rewrite: func(t *testing.T, p sdk.Persistence, id string, seq sdk.Seq, ev []byte) {
			rewriteEvent(t, logPath(t, storageOf(t, p), id), int64(seq), ev)
		},
	}
}

// logPath is the log of session id under s: its highest generation present
// (the current one when there is none).
func logPath(t testing.TB, s storage, id string) string {
	t.Helper()
	dir := filepath.Join(s.root, EncodeID(id))
	zst := s.compression == CompressionZstd
	names, _ := os.ReadDir(dir)
	best := 0
	for _, n := range names {
		if gen, z, ok := parseLogName(n.Name()); ok && z == zst && gen > best {
			best = gen
		}
	}
	if best == 0 {
		best = sdk.FormatVersion
	}
	return filepath.Join(dir, logName(best, zst))
}

// units splits a log file into its units with the package's scanner
// primitives: lines, or frames. The header unit is units[0].
func units(t testing.TB, data []byte, zst bool) [][2]int {
	t.Helper()
	var out [][2]int
	for pos := 0; pos < len(data); {
		var n int
		if zst {
			var st unitStatus
			var reason string
			n, st, reason = frameSpan(data[pos:])
			if st != unitGood {
				t.Fatalf("test bug: no frame at byte offset %d: %s", pos, reason)
			}
		} else {
			n = bytes.IndexByte(data[pos:], '\n') + 1
			if n == 0 {
				t.Fatalf("test bug: no complete line at byte offset %d", pos)
			}
		}
		out = append(out, [2]int{pos, pos + n})
		pos += n
	}
	return out
}

// logUnits reads the log at path and splits it into its units.
func logUnits(t testing.TB, path string) (data []byte, zst bool, us [][2]int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zst = filepath.Ext(path) == ".zst"
	return data, zst, units(t, data, zst)
}

// decodeUnits returns the decoded content of each unit of a zstd log.
func decodeUnits(t testing.TB, data []byte) [][]byte {
	t.Helper()
	dec, err := newDecoder()
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	var out [][]byte
	for _, u := range units(t, data, true) {
		d, err := dec.DecodeAll(data[u[0]:u[1]], nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// corruptEvent damages the unit holding event seq so that it no longer
// reads as a valid envelope, and returns what a CORRUPT_LOG message names:
// "line <n>" (none: the line's '{' becomes '#') or "byte offset <n>" (zstd:
// a flipped checksum byte, which leaves the frame's structure intact).
func corruptEvent(t testing.TB, path string, seq int64) string {
	t.Helper()
	data, zst, us := logUnits(t, path)
	var where string
	if !zst {
		u := us[seq+1] // line 1 is the header
		data[u[0]] = '#'
		where = "line " + strconv.FormatInt(seq+2, 10)
	} else {
		first := int64(0)
		for i, content := range decodeUnits(t, data)[1:] {
			n := int64(bytes.Count(content, []byte("\n")))
			if seq < first+n {
				u := us[i+1]
				data[u[1]-4] ^= 0xFF
				where = "byte offset " + strconv.Itoa(u[0])
				break
			}
			first += n
		}
		if where == "" {
			t.Fatalf("test bug: no frame holds seq %d", seq)
		}
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return where
}

// rewriteEvent replaces the unit holding event seq, which holds it alone,
// with ev: the line, or a frame of ev encoded as the backend encodes one.
func rewriteEvent(t testing.TB, path string, seq int64, ev []byte) {
	t.Helper()
	data, zst, us := logUnits(t, path)
	line := append(bytes.Clone(ev), '\n')
	var u [2]int
	if !zst {
		u = us[seq+1] // line 1 is the header
	} else {
		first := int64(0)
		for i, content := range decodeUnits(t, data)[1:] {
			n := int64(bytes.Count(content, []byte("\n")))
			if seq == first && n == 1 {
				u = us[i+1]
				break
			}
			first += n
		}
		if u == [2]int{} {
			t.Fatalf("test bug: no frame holds seq %d alone", seq)
		}
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
		if err != nil {
			t.Fatal(err)
		}
		line = enc.EncodeAll(line, nil)
	}
	out := append(append(bytes.Clone(data[:u[0]]), line...), data[u[1]:]...)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// setFormatVersion rewrites the header's version literal, re-encoding the
// header frame of a zstd log.
func setFormatVersion(t testing.TB, path, literal string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, withFormatVersion(t, data, filepath.Ext(path) == ".zst", literal), 0o600); err != nil {
		t.Fatal(err)
	}
}

// withFormatVersion returns the log data with its header's version literal
// rewritten, the header frame of a zstd log re-encoded.
func withFormatVersion(t testing.TB, data []byte, zst bool, literal string) []byte {
	t.Helper()
	hdrEnd := bytes.IndexByte(data, '\n') + 1
	if zst {
		hdrEnd, _, _ = frameSpan(data)
	}
	hdr := data[:hdrEnd]
	if zst {
		hdr = decodeUnits(t, data[:hdrEnd])[0]
	}
	i := bytes.Index(hdr, []byte(`"version":`))
	j := i + len(`"version":`)
	k := j + bytes.IndexByte(hdr[j:], ',')
	if i < 0 || k < j {
		t.Fatalf("test bug: no version member in %q", hdr)
	}
	newHdr := fmt.Appendf(nil, "%s%s%s", hdr[:j], literal, hdr[k:])
	if zst {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
		if err != nil {
			t.Fatal(err)
		}
		newHdr = enc.EncodeAll(newHdr, nil)
	}
	return append(newHdr, data[hdrEnd:]...)
}
