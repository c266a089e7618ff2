package service_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/foreigntest"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// live reports whether session id is live in svc.
func live(t *testing.T, svc *service.Service, id string) bool {
	t.Helper()
	st, err := svc.Stat(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return st.Live
}

// What the live mirror relies on of one SourceImporter kept across passes
// (docs/import.md, "The live mirror"): a branch child is not held after its
// fork; a session released under the importer (serve's idle release) is
// reopened by the next Import, and ReleaseIdle of such a file is no error;
// an Import that fails (here TOO_MANY_LIVE_SESSIONS) may be repeated after
// ReleaseIdle(0) and appends every line once.
func TestSourceImporterAcrossReleasesAndFailures(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Parse([]byte("max_live_sessions = 2\npersistence \"memory\" {}\n"), "memory.hcl")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(ctx) })
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	textA := `{"lines":"a","text":"one"}` + "\n" + `{"lines":"a","text":"two","branch":true}` + "\n"
	textB := `{"lines":"b","text":"one"}` + "\n"
	writeFile(t, a, textA)
	writeFile(t, b, textB)
	im := svc.NewSourceImporter().WithDialects(foreigntest.Lines())
	t.Cleanup(func() { im.Close(ctx) })
	imp := func(paths ...string) (service.ImportSummary, error) {
		return im.Import(ctx, service.ImportSourceRequest{From: "test-lines", Paths: paths, CompleteLinesOnly: true})
	}

	// The fork's child is released at once: the import of a holds only a.
	if _, err := imp(a); err != nil {
		t.Fatal(err)
	}
	if !live(t, svc, "test-lines-a") || live(t, svc, "test-lines-a-branch-1") {
		t.Fatal("after the import: want test-lines-a live, its branch child not")
	}

	// Released under the importer: ReleaseIdle is no error, and the next
	// Import reopens the session and appends only the new line.
	if err := svc.Release(ctx, "test-lines-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := im.ReleaseIdle(ctx, 0); err != nil {
		t.Fatalf("ReleaseIdle of a session released under the importer: %v", err)
	}
	if _, err := imp(a); err != nil {
		t.Fatal(err)
	}
	if err := svc.Release(ctx, "test-lines-a"); err != nil {
		t.Fatal(err)
	}
	textA += `{"lines":"a","text":"three"}` + "\n"
	writeFile(t, a, textA)
	sum, err := imp(a)
	if err != nil {
		t.Fatalf("Import after a release under the importer: %v", err)
	}
	if sum.Events != 2 { // raw record + prompt
		t.Fatalf("Import after the release appended %d events, want 2", sum.Events)
	}

	// With a and another session live, a's next fork is over the cap:
	// the Import fails after storing the line. Repeated (the mirror's
	// retry), it makes the fork and appends nothing twice.
	other, err := svc.Create(ctx, service.CreateRequest{ID: "other"})
	if err != nil {
		t.Fatal(err)
	}
	textA += `{"lines":"a","text":"four","branch":true}` + "\n" + `{"lines":"a","text":"five"}` + "\n"
	writeFile(t, a, textA)
	if _, err := imp(a); !errors.Is(err, sdk.CodeTooManyLiveSessions) {
		t.Fatalf("Import with a fork over the cap: %v; want TOO_MANY_LIVE_SESSIONS", err)
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := imp(a); err != nil {
		t.Fatalf("Import repeated: %v", err)
	}
	if live(t, svc, "test-lines-a-branch-2") {
		t.Fatal("the branch child made on the retry is still live")
	}
	if _, err := svc.Stat(ctx, "test-lines-a-branch-2"); err != nil {
		t.Fatalf("the fork of line 4 after the retry: %v", err)
	}

	// a is held, so a, b and another session are over the cap: the
	// Import fails at b; after ReleaseIdle(0) (and the other's release) it
	// succeeds.
	if other, err = svc.Create(ctx, service.CreateRequest{ID: "other2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := imp(a, b); !errors.Is(err, sdk.CodeTooManyLiveSessions) {
		t.Fatalf("Import over the cap: %v; want TOO_MANY_LIVE_SESSIONS", err)
	}
	if n, err := im.ReleaseIdle(ctx, 0); err != nil || n != 1 {
		t.Fatalf("ReleaseIdle(0) = %d, %v; want 1 session released", n, err)
	}
	if live(t, svc, "test-lines-a") {
		t.Fatal("test-lines-a is live after ReleaseIdle(0)")
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := imp(a, b); err != nil {
		t.Fatalf("Import again: %v", err)
	}
	for id, want := range map[string]string{"test-lines-a": textA, "test-lines-b": textB} {
		if got := exportSource(t, svc, id, "test-lines"); string(got) != want {
			t.Errorf("%s exports\n%s\nwant\n%s", id, got, want)
		}
	}
	if _, err := imp(a, b); err != nil {
		t.Fatal(err)
	}
}

// While following, a Claude Code file whose lines name no session yet (it
// starts with a file-history-snapshot) is waited for, not reported as
// damage; the pass that brings the naming line imports the file whole. A
// one-shot import of the same unnamed file reports it as damage of line 0.
func TestFollowedFileThatNamesNoSessionYetIsWaitedFor(t *testing.T) {
	ctx := context.Background()
	svc := openMemory(t)
	b, err := os.ReadFile(filepath.Join("..", "internal", "foreign", "claudecode", "testdata", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := foreign.SplitLines(b)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, string(lines[0].Text)+"\n")
	im := svc.NewSourceImporter()
	t.Cleanup(func() { im.Close(ctx) })
	follow := service.ImportSourceRequest{From: "claude-code", Paths: []string{path}, CompleteLinesOnly: true}
	sum, err := im.Import(ctx, follow)
	if err != nil || len(sum.DamagedLines) != 0 || len(sum.Sessions) != 0 {
		t.Fatalf("a followed file naming no session yet: %+v, %v; want nothing reported or imported", sum, err)
	}
	once, err := svc.ImportSource(ctx, service.ImportSourceRequest{From: "claude-code", Paths: []string{path}})
	if err != nil || len(once.DamagedLines) != 1 || once.DamagedLines[0].Line != 0 {
		t.Fatalf("a one-shot import of it: %+v, %v; want damage of line 0", once, err)
	}
	writeFile(t, path, string(lines[0].Text)+"\n"+string(lines[1].Text)+"\n")
	if sum, err = im.Import(ctx, follow); err != nil || len(sum.Sessions) != 1 || sum.Events < 2 {
		t.Fatalf("the pass that brings the naming line: %+v, %v; want its session with both lines", sum, err)
	}
}
