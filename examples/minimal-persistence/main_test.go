package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/internal/testbin"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// logbookBin is the logbook binary the engine re-executes for bundled
// plugins; TestMain builds it.
var logbookBin string

func TestMain(m *testing.M) { testbin.Main(m, &logbookBin) }

// newConfigured returns a backend configured as the host would, over a root
// that does not exist yet (the first materialization creates it).
func newConfigured(t *testing.T) *backend {
	t.Helper()
	b := newBackend()
	conf, _ := json.Marshal(map[string]string{"root": filepath.Join(t.TempDir(), "sessions")})
	if err := b.Configure(t.Context(), conf); err != nil {
		t.Fatal(err)
	}
	return b
}

// The backend keeps the persistence contract: the conformance suite, called
// in process with only Harness.New, so the groups that need a hook skip.
func TestConformance(t *testing.T) {
	persistencetest.Run(t, persistencetest.Harness{
		New: func(t *testing.T) sdk.Persistence { return newConfigured(t) },
	})
}

func TestConfigureWantsAnAbsoluteRoot(t *testing.T) {
	for _, conf := range []string{`{}`, `{"root":"relative/dir"}`, `{"root":1}`, `not json`} {
		err := (&backend{}).Configure(t.Context(), []byte(conf))
		persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, conf)
	}
}

// A crash in the middle of an append leaves an incomplete last line: reads
// never return it, a read open reports it and changes nothing, and a write
// open cuts it off and appends after it.
func TestIncompleteLastLineIsNeverRead(t *testing.T) {
	b := newConfigured(t)
	ctx := t.Context()
	o, err := b.Create(ctx, sdk.Header{ID: "s1", CreatedAt: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(ctx, o.Handle, 0, persistencetest.Batch(0, 3)); err != nil {
		t.Fatal(err)
	}
	b.Close(ctx, o.Handle)
	partial := persistencetest.Batch(3, 1)[0]
	partial = partial[:len(partial)/2]
	f, err := os.OpenFile(b.path("s1"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(partial)
	f.Close()

	r, err := b.Open(ctx, "s1", sdk.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	want := sdk.Torn{Bytes: int64(len(partial)), FromSeq: 3}
	if r.NextSeq != 3 || r.Torn != want {
		t.Fatalf("Open(read): next seq %d, torn %+v; want 3, %+v", r.NextSeq, r.Torn, want)
	}
	requireEqual(t, "read beside a torn tail", persistencetest.ReadAll(t, b, r.Handle), persistencetest.Batch(0, 3))

	w, err := b.Open(ctx, "s1", sdk.AccessWrite)
	if err != nil {
		t.Fatal(err)
	}
	if w.Torn != want {
		t.Fatalf("Open(write): torn %+v; want %+v", w.Torn, want)
	}
	if _, err := b.Append(ctx, w.Handle, 3, persistencetest.Batch(3, 2)); err != nil {
		t.Fatal(err)
	}
	requireEqual(t, "read after the write open", persistencetest.ReadAll(t, b, r.Handle), persistencetest.Batch(0, 5))
}

// The built binary runs as a third-party plugin under the runtime: a
// session written through the service reads back byte-equal after a restart, and sits
// on disk as the header line plus one envelope per line.
func TestRunsAsAPluginUnderTheEngine(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	bin := filepath.Join(dir, "minimal-persistence")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root := filepath.Join(dir, "sessions")
	hcl := fmt.Sprintf("persistence \"minimal\" {\n  root = %q\n}\n\nplugin \"minimal\" {\n  command = %q\n}\n", root, bin)
	cfg, err := config.Parse([]byte(hcl), filepath.Join(dir, "logbook.hcl"))
	if err != nil {
		t.Fatalf("config:\n%s\n%v", hcl, err)
	}

	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	s, err := svc.Create(ctx, service.CreateRequest{ID: "demo"})
	if err != nil {
		svc.Close(ctx)
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, service.AppendRequest{Inputs: []events.Input{
		{Type: "turn/start", Data: []byte(`{"turn":1}`)},
		{Type: "user/message", SurfaceOp: events.Append(), Data: []byte(`{"id":"u1","role":"user","content":[{"type":"text","text":"héllo \"plugin\""}],"source":{"kind":"user"}}`)},
		{Type: "todo/write", Data: []byte(`{"todos":[{"content":"write a plugin","status":"in_progress"}]}`)},
	}}); err != nil {
		svc.Close(ctx)
		t.Fatal(err)
	}
	if _, err := s.Flush(ctx); err != nil {
		svc.Close(ctx)
		t.Fatal(err)
	}
	var want [][]byte
	for _, ev := range s.Events() {
		want = append(want, ev.Envelope)
	}
	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(filepath.Join(root, hex.EncodeToString([]byte("demo"))+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if !bytes.HasPrefix(lines[0], []byte(`{"type":"session","version":`+strconv.Itoa(sdk.FormatVersion)+`,"id":"demo",`)) {
		t.Fatalf("first line is not the session header: %s", lines[0])
	}
	requireEqual(t, "the lines after the header", lines[1:], want)

	svc, err = service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(ctx)
	l, err := svc.OpenStored(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	var stored [][]byte
	if err := l.Read(ctx, 0, l.Len(), func(envs [][]byte) error { stored = append(stored, envs...); return nil }); err != nil {
		t.Fatal(err)
	}
	l.Close()
	requireEqual(t, "read through the restarted plugin", stored, want)

	// The service opens it for writing again (and closes the open turn).
	s, _, err = svc.Resume(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	got := s.Events()
	if len(got) < len(want) {
		t.Fatalf("Resume: %d events; want at least %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i].Envelope, want[i]) {
			t.Fatalf("Resume: event %d = %s; want %s", i, got[i].Envelope, want[i])
		}
	}
}

// The README's "Writing a plugin" section sends readers to this example, so
// the example must stay where the link points.
func TestREADMELinksThisExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Writing a plugin\n")
	if !ok {
		t.Fatal(`README.md has no "## Writing a plugin" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	if !strings.Contains(section, "(examples/minimal-persistence/") {
		t.Fatal(`README.md's "Writing a plugin" section does not link examples/minimal-persistence/`)
	}
}

func requireEqual(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events; want %d", what, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: event %d = %s; want %s", what, i, got[i], want[i])
		}
	}
}
