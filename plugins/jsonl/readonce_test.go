package jsonl

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// countingFS is a vfs.FS that counts the bytes read from each file.
type countingFS struct {
	vfs.FS
	mu   sync.Mutex
	read map[string]int64
}

func newCountingFS() *countingFS { return &countingFS{FS: vfs.OS(), read: map[string]int64{}} }

func (c *countingFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return countingFile{File: f, fs: c, name: name}, nil
}

// bytesRead returns the bytes read from name since the last call, and
// starts counting again.
func (c *countingFS) bytesRead(name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.read[name]
	delete(c.read, name)
	return n
}

type countingFile struct {
	vfs.File
	fs   *countingFS
	name string
}

func (f countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.fs.mu.Lock()
	f.fs.read[f.name] += int64(n)
	f.fs.mu.Unlock()
	return n, err
}

// A resume of a session with a checkpoint (an open, ReadCheckpoint, then
// every event through ReadFrames, or Read for a plain log, as the host
// restores) reads each byte of the log file and of the checkpoint file
// once: the open reads both, the handle hands what it read to the others.
func TestResumeReadsEachFileOnce(t *testing.T) {
	for _, comp := range []string{CompressionNone, CompressionZstd} {
		for _, access := range []sdk.Access{sdk.AccessWrite, sdk.AccessRead} {
			t.Run(comp+"/"+map[sdk.Access]string{sdk.AccessWrite: "write", sdk.AccessRead: "read"}[access], func(t *testing.T) {
				cfg, plain := checkpointFixture(t, comp)
				o, all := readEvents(t, plain, "s", sdk.AccessRead)
				if o.NextSeq != 35 {
					t.Fatalf("the fixture holds %d events, want 35", o.NextSeq)
				}
				log := sessionLog(cfg, "s")
				ckPath := filepath.Join(cfg.Root, EncodeID("s"), checkpointName)
				logSize, ckSize := fileSize(t, log), fileSize(t, ckPath)

				cfs := newCountingFS()
				b := newTestBackend(t, cfg, WithFS(cfs))
				o, err := b.Open(t.Context(), "s", access)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close(t.Context(), o.Handle)
				events, data, found, err := b.ReadCheckpoint(t.Context(), o.Handle)
				if err != nil || !found || events != 30 || string(data) != "the host's bytes" {
					t.Fatalf("ReadCheckpoint: %d %q %v %v; want the fixture's checkpoint of 30 events", events, data, found, err)
				}
				var got [][]byte
				if comp == CompressionZstd {
					var framed bool
					got, framed, err = readThroughFrames(t, b, o, 0, o.NextSeq)
					if !framed {
						t.Fatal("a zstd log was not read as frames")
					}
				} else {
					err = b.Read(t.Context(), o.Handle, 0, -1, func(c [][]byte) error {
						got = append(got, c...)
						return nil
					})
				}
				if err != nil {
					t.Fatal(err)
				}
				requireEqualEvents(t, "the resume", got, all)
				if n := cfs.bytesRead(log); n != logSize {
					t.Errorf("the resume read %d bytes of the %d-byte log", n, logSize)
				}
				if n := cfs.bytesRead(ckPath); n != ckSize {
					t.Errorf("the resume read %d bytes of the %d-byte checkpoint", n, ckSize)
				}
			})
		}
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// hookFS is vfs.OS that calls onOpen before each OpenFile.
type hookFS struct {
	vfs.FS
	onOpen func(name string, flag int)
}

func (h hookFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	h.onOpen(name, flag)
	return h.FS.OpenFile(name, flag, perm)
}

// A write open reads the header before it claims the session and the rest
// after; when the log changed in between (a writer that held it replaced
// it and left), it scans the log as it is after the claim, not the header
// it read before.
func TestWriteOpenRereadsALogChangedBeforeTheClaim(t *testing.T) {
	for _, comp := range []string{CompressionNone, CompressionZstd} {
		t.Run(comp, func(t *testing.T) {
			cfg, _ := checkpointFixture(t, comp)
			log := sessionLog(cfg, "s")
			other := Config{Root: t.TempDir(), Compression: comp}
			want := storeEvents(t, newTestBackend(t, other), "s", persistencetest.Batch(0, 3))
			b := newTestBackend(t, cfg, WithFS(hookFS{FS: vfs.OS(), onOpen: func(name string, flag int) {
				if name == log && flag&os.O_RDWR != 0 {
					if err := os.Rename(sessionLog(other, "s"), log); err != nil {
						t.Error(err)
					}
				}
			}}))
			o, got := readEvents(t, b, "s", sdk.AccessWrite)
			if o.NextSeq != 3 || o.Torn != (sdk.Torn{}) {
				t.Fatalf("Opened %+v; want the 3 events of the log that replaced it before the claim", o)
			}
			requireEqualEvents(t, "the replaced log", got, want)
		})
	}
}

// The first read of a plain log serves the bytes its open read only when
// it reads every event: the events of a shorter read are read from the
// file, so that keeping them does not pin the whole log.
func TestShortFirstReadOfAPlainLogReadsTheFile(t *testing.T) {
	cfg, _ := checkpointFixture(t, CompressionNone)
	cfs := newCountingFS()
	b := newTestBackend(t, cfg, WithFS(cfs))
	o, err := b.Open(t.Context(), "s", sdk.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context(), o.Handle)
	log := sessionLog(cfg, "s")
	cfs.bytesRead(log)
	var got [][]byte
	if err := b.Read(t.Context(), o.Handle, 3, 2, func(c [][]byte) error {
		got = append(got, c...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n, want := cfs.bytesRead(log), int64(len(got[0])+len(got[1])+2); n != want {
		t.Errorf("a read of events 3 and 4 read %d bytes of the log, want their %d", n, want)
	}
}
