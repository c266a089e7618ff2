package service_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/foreigntest"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// importLines imports paths with the test-lines dialect (and the built-in
// ones) through a fresh importer, as one `logbook import` run does.
func importLines(t testing.TB, svc *service.Service, r service.ImportSourceRequest) service.ImportSummary {
	t.Helper()
	ctx := context.Background()
	if r.From == "" {
		r.From = "test-lines"
	}
	im := svc.NewSourceImporter().WithDialects(foreigntest.Lines())
	sum, err := im.Import(ctx, r)
	if err := im.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("import %v: %v", r.Paths, err)
	}
	return sum
}

// exportSource is the source file session id writes back.
func exportSource(t testing.TB, svc *service.Service, id, tool string) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := svc.ExportSource(context.Background(), id, tool, &b); err != nil {
		t.Fatalf("export %s as %s: %v", id, tool, err)
	}
	return b.Bytes()
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// typed is the session's events without time and operation members: what
// an import stored, comparable across runs.
func typed(t testing.TB, svc *service.Service, id string) []string {
	t.Helper()
	v, _, err := svc.InspectView(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range v.Events() {
		out = append(out, fmt.Sprintf("%d %s %s %v", e.Seq, e.Type, e.Data, e.SurfaceOp))
	}
	return out
}

// lines is a test-lines file of session s: a prompt, a merged prompt left
// open at the end (End completes it).
const linesFile = `{"lines":"s","text":"one","version":"9","cwd":"/w"}
{"lines":"s","text":"two"}
{"lines":"s","merge":"a","text":"th"}
{"lines":"s","merge":"a","text":"ree"}
`

// Every fixture of every dialect imports and exports back byte-identical,
// and imports a second time appending nothing. A dialect directory with
// fixtures but no registered dialect fails.
func TestImportSourceRoundTripsEveryFixture(t *testing.T) {
	svc := openMemory(t)
	dirs, _ := filepath.Glob(filepath.Join("..", "internal", "foreign", "*", "testdata"))
	byDir := map[string]string{}
	for _, name := range service.DialectNames() {
		byDir[strings.ReplaceAll(name, "-", "")] = name
	}
	n := 0
	for _, dir := range dirs {
		var files []string
		for _, pat := range []string{"*.jsonl", "*.jsonl.zst"} {
			m, _ := filepath.Glob(filepath.Join(dir, pat))
			files = append(files, m...)
		}
		files = slices.DeleteFunc(files, func(f string) bool { return strings.HasPrefix(filepath.Base(f), "damaged-") })
		if len(files) == 0 {
			continue
		}
		pkg := filepath.Base(filepath.Dir(dir))
		tool, ok := byDir[pkg]
		if !ok {
			t.Fatalf("%s holds %d fixtures, but no registered dialect is named after %s", dir, len(files), pkg)
		}
		for _, file := range files {
			n++
			id := fmt.Sprintf("fixture-%d", n)
			t.Run(pkg+"/"+filepath.Base(file), func(t *testing.T) {
				r := service.ImportSourceRequest{From: tool, Paths: []string{file}, As: id}
				sum := importLines(t, svc, r)
				if sum.Files != 1 || sum.Events == 0 {
					t.Fatalf("summary %+v", sum)
				}
				want, err := readDecompressed(file)
				if err != nil {
					t.Fatal(err)
				}
				if got := exportSource(t, svc, id, tool); !bytes.Equal(got, want) {
					t.Fatalf("export differs from %s: %d bytes, want %d", file, len(got), len(want))
				}
				if again := importLines(t, svc, r); again.Events != 0 {
					t.Fatalf("a second import appended %d events", again.Events)
				}
			})
		}
	}
	t.Logf("%d fixtures", n)
}

func readDecompressed(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(path, ".zst") {
		return b, err
	}
	d, err := zstd.NewReader(nil)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.DecodeAll(b, nil)
}

// A file imports into claude-code-like ids, with a lenient header and the
// import labels; a second import appends nothing; a grown file appends
// only its new lines, and the log is the one a single import of each
// stage through one importer (the mirror's way) writes: a replay rebuilds
// the mapper exactly, End included.
func TestImportSourceIsIdempotentAndIncremental(t *testing.T) {
	for _, b := range importBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			svc := b.open(t)
			dir := t.TempDir()
			file := filepath.Join(dir, "s.jsonl")
			writeFile(t, file, linesFile)
			sum := importLines(t, svc, service.ImportSourceRequest{Paths: []string{dir}})
			if sum.Files != 1 || !slices.Equal(sum.Sessions, []string{"test-lines-s"}) || sum.Events != 7 || len(sum.DamagedLines) != 0 {
				t.Fatalf("first import: %+v; want 1 file, test-lines-s, 4 raw records and 3 prompts", sum)
			}
			h := statHeader(t, svc, "test-lines-s")
			if h.Protocol != sdk.ProtocolLenient || h.CWD != "/w" || h.Labels["import/tool"] != "test-lines" || h.Labels["import/version"] != "9" || h.Labels["import/file"] != file {
				t.Fatalf("header %+v", h)
			}
			if again := importLines(t, svc, service.ImportSourceRequest{Paths: []string{file}}); again.Events != 0 {
				t.Fatalf("re-import appended %d events", again.Events)
			}
			grown := linesFile + `{"lines":"s","merge":"a","text":"!"}` + "\n" + `{"lines":"s","text":"four"}` + "\n"
			writeFile(t, file, grown)
			if sum := importLines(t, svc, service.ImportSourceRequest{Paths: []string{file}}); sum.Events != 4 {
				t.Fatalf("grown import: %+v; want 2 raw records and 2 prompts", sum)
			}
			if got := exportSource(t, svc, "test-lines-s", "test-lines"); string(got) != grown {
				t.Fatalf("export %q", got)
			}
			// The same two stages through one importer.
			other := filepath.Join(t.TempDir(), "s.jsonl")
			writeFile(t, other, linesFile)
			ctx := context.Background()
			im := svc.NewSourceImporter().WithDialects(foreigntest.Lines())
			r := service.ImportSourceRequest{From: "test-lines", Paths: []string{other}, As: "live"}
			if _, err := im.Import(ctx, r); err != nil {
				t.Fatal(err)
			}
			writeFile(t, other, grown)
			if _, err := im.Import(ctx, r); err != nil {
				t.Fatal(err)
			}
			if n, err := im.ReleaseIdle(ctx, 0); n != 1 || err != nil {
				t.Fatalf("ReleaseIdle(0) = %d, %v; want the one session released", n, err)
			}
			if sum, err := im.Import(ctx, r); err != nil || sum.Events != 0 {
				t.Fatalf("an import after the release: %+v, %v; want it reopened, appending nothing", sum, err)
			}
			if err := im.Close(ctx); err != nil {
				t.Fatal(err)
			}
			a, l := typed(t, svc, "test-lines-s"), typed(t, svc, "live")
			if !slices.Equal(a, l) {
				t.Fatalf("replayed import:\n%s\nlive import:\n%s", strings.Join(a, "\n"), strings.Join(l, "\n"))
			}
		})
	}
}

func statHeader(t testing.TB, svc *service.Service, id string) sdk.Header {
	t.Helper()
	st, err := svc.StatStored(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return st.Header
}

type importBackend struct {
	name string
	open func(t *testing.T) *service.Service
}

// importBackends are the backends the import runs on: memory, JSONL with
// zstd, SQLite and PostgreSQL.
func importBackends(t *testing.T) []importBackend {
	open := func(t *testing.T, hcl string) *service.Service {
		cfg, err := config.Parse([]byte(hcl), "import.hcl")
		if err != nil {
			t.Fatal(err)
		}
		svc, err := service.Open(context.Background(), service.Options{Config: cfg, Executable: logbookBin})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close(context.Background()) })
		return svc
	}
	return []importBackend{
		{"memory", func(t *testing.T) *service.Service { return openMemory(t) }},
		{"jsonl-zstd", func(t *testing.T) *service.Service {
			return open(t, fmt.Sprintf("persistence \"jsonl\" {\n  root = %q\n  compression = \"zstd\"\n}\n", t.TempDir()))
		}},
		{"sqlite", func(t *testing.T) *service.Service {
			return open(t, fmt.Sprintf("persistence \"sqlite\" {\n  path = %q\n}\n", filepath.Join(t.TempDir(), "l.db")))
		}},
		{"postgres", func(t *testing.T) *service.Service {
			dsn := pgtest.DSN(t)
			return open(t, fmt.Sprintf("persistence \"postgres\" {\n  dsn = %q\n  schema = %q\n}\n", dsn, pgtest.Schema(t, dsn)))
		}},
	}
}

// A file rewritten rather than appended to becomes a revision: a fork of
// the session before the first differing line, holding the new lines; the
// first session keeps the old file. Importing the rewritten file again
// appends nothing and makes no second revision.
func TestImportSourceRewriteIsARevision(t *testing.T) {
	svc := openMemory(t)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, file, linesFile)
	importLines(t, svc, service.ImportSourceRequest{Paths: []string{file}})
	rewritten := strings.Replace(linesFile, `"two"`, `"TWO"`, 1)
	writeFile(t, file, rewritten)
	sum := importLines(t, svc, service.ImportSourceRequest{Paths: []string{file}})
	if !slices.Equal(sum.Sessions, []string{"test-lines-s-rev-1"}) {
		t.Fatalf("rewrite: %+v; want the revision test-lines-s-rev-1", sum)
	}
	if got := exportSource(t, svc, "test-lines-s", "test-lines"); string(got) != linesFile {
		t.Fatalf("the first session changed: %q", got)
	}
	if got := exportSource(t, svc, "test-lines-s-rev-1", "test-lines"); string(got) != rewritten {
		t.Fatalf("the revision exports %q", got)
	}
	if h := statHeader(t, svc, "test-lines-s-rev-1"); h.ParentSession != "test-lines-s" || h.Labels["import/tool"] != "test-lines" {
		t.Fatalf("revision header %+v", h)
	}
	if again := importLines(t, svc, service.ImportSourceRequest{Paths: []string{file}}); again.Events != 0 || !slices.Equal(again.Sessions, []string{}) {
		t.Fatalf("re-import of the rewritten file: %+v", again)
	}
}

// Damage never aborts: a line that is not JSON, one that is not UTF-8, a
// torn last line without a line feed are stored raw with their damage and
// reported; an unreadable file is damage of line 0 and the next file
// imports. Every file still exports back byte-identical.
func TestImportSourceKeepsDamage(t *testing.T) {
	svc := openMemory(t)
	dir := t.TempDir()
	damaged := `{"lines":"d","text":"ok"}` + "\n" + "not json\n" + "\xff\xfe{\n" + `{"lines":"d","te`
	writeFile(t, filepath.Join(dir, "a.jsonl"), damaged)
	writeFile(t, filepath.Join(dir, "b.jsonl.zst"), "not zstd")
	enc, _ := zstd.NewWriter(nil)
	writeFile(t, filepath.Join(dir, "c.jsonl.zst"), string(enc.EncodeAll([]byte(`{"lines":"z","text":"zipped"}`+"\n"), nil)))
	writeFile(t, filepath.Join(dir, "ignored.txt"), "x")
	sum := importLines(t, svc, service.ImportSourceRequest{Paths: []string{dir}})
	var got []string
	for _, d := range sum.DamagedLines {
		got = append(got, fmt.Sprintf("%s:%d", filepath.Base(d.File), d.Line))
	}
	if want := []string{"a.jsonl:2", "a.jsonl:3", "a.jsonl:4", "b.jsonl.zst:0"}; !slices.Equal(got, want) || sum.Files != 3 {
		t.Fatalf("summary %+v: damaged %v, want %v and 3 files", sum, got, want)
	}
	if got := exportSource(t, svc, "test-lines-d", "test-lines"); string(got) != damaged {
		t.Fatalf("damaged file exports %q", got)
	}
	if got := exportSource(t, svc, "test-lines-z", "test-lines"); string(got) != `{"lines":"z","text":"zipped"}`+"\n" {
		t.Fatalf("zstd file exports %q", got)
	}
}

// A line whose inputs the session refuses is kept raw (Accepted(false))
// and the import goes on; a branch request forks the session at the
// line's raw record; a re-import appends nothing and makes no second fork.
func TestImportSourceRefusedInputsAndBranches(t *testing.T) {
	svc := openMemory(t)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	text := `{"lines":"b","text":"one"}` + "\n" + `{"lines":"b","text":"two","bad":true}` + "\n" + `{"lines":"b","text":"three","branch":true}` + "\n" + `{"lines":"b","text":"four"}` + "\n"
	writeFile(t, file, text)
	sum := importLines(t, svc, service.ImportSourceRequest{Paths: []string{file}})
	if !slices.Equal(sum.Sessions, []string{"test-lines-b", "test-lines-b-branch-1"}) || len(sum.DamagedLines) != 0 {
		t.Fatalf("summary %+v", sum)
	}
	evs := typed(t, svc, "test-lines-b")
	// one: raw, prompt; two: raw, its first group (the refused second is
	// not stored); three: raw, prompt; four: raw, prompt.
	if len(evs) != 8 || !strings.Contains(evs[2], `"line":2`) || !strings.Contains(evs[3], `"two"`) || !strings.Contains(evs[4], `"line":3`) || strings.Contains(strings.Join(evs, "\n"), `"bad"`) {
		t.Fatalf("log:\n%s", strings.Join(evs, "\n"))
	}
	child := typed(t, svc, "test-lines-b-branch-1")
	if len(child) < 5 || !strings.Contains(child[4], `"line":3`) || strings.Contains(strings.Join(child, "\n"), "four") {
		t.Fatalf("branch child:\n%s", strings.Join(child, "\n"))
	}
	if again := importLines(t, svc, service.ImportSourceRequest{Paths: []string{file}}); again.Events != 0 || len(again.Sessions) != 0 {
		t.Fatalf("re-import: %+v", again)
	}
	if got := exportSource(t, svc, "test-lines-b", "test-lines"); string(got) != text {
		t.Fatalf("export %q", got)
	}
}

// --from auto picks the dialect that claims most lines, not line 1's; the
// foreign first line is kept raw. --as renames one session and needs
// exactly one file; an unknown --from is USAGE.
func TestImportSourceAutoAndAs(t *testing.T) {
	svc := openMemory(t)
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	text := `{"type":"session","version":3,"id":"x"}` + "\n" + `{"lines":"auto","text":"one"}` + "\n" + `{"lines":"auto","text":"two"}` + "\n"
	writeFile(t, a, text)
	sum := importLines(t, svc, service.ImportSourceRequest{From: "auto", Paths: []string{a}, As: "renamed"})
	if !slices.Equal(sum.Sessions, []string{"renamed"}) || sum.Events != 5 {
		t.Fatalf("auto: %+v", sum)
	}
	if got := exportSource(t, svc, "renamed", "test-lines"); string(got) != text {
		t.Fatalf("export %q", got)
	}
	writeFile(t, filepath.Join(dir, "b.jsonl"), text)
	ctx := context.Background()
	im := svc.NewSourceImporter().WithDialects(foreigntest.Lines())
	defer im.Close(ctx)
	_, err := im.Import(ctx, service.ImportSourceRequest{From: "test-lines", Paths: []string{dir}, As: "two"})
	requireCode(t, err, sdk.CodeUsage)
	_, err = im.Import(ctx, service.ImportSourceRequest{From: "nope", Paths: []string{dir}})
	requireCode(t, err, sdk.CodeUsage)
	if _, err := svc.Stat(ctx, "two"); sdk.CodeOf(err) != sdk.CodeSessionNotFound {
		t.Fatalf("a refused --as created a session: %v", err)
	}
}

// Export of a session that is not an import of the tool is NOT_IMPORTED.
func TestExportSourceOfANonImportIsNotImported(t *testing.T) {
	svc := openMemory(t)
	create(t, svc, "plain", 1).Release(context.Background())
	_, err := svc.ExportSource(context.Background(), "plain", "claude-code", &bytes.Buffer{})
	requireCode(t, err, sdk.CodeNotImported)
}

// Session ids follow docs/import.md.
func TestForeignSessionIDs(t *testing.T) {
	long := strings.Repeat("x", 90)
	for _, c := range []struct {
		id   foreign.Identity
		want string
	}{
		{foreign.Identity{Tool: "claude-code", SessionID: "abc"}, "claude-code-abc"},
		{foreign.Identity{Tool: "codex", SessionID: "p", ParentSessionID: "p", AgentID: "a1"}, "codex-p-agent-a1"},
		{foreign.Identity{Tool: "pi", SessionID: long}, ""},
	} {
		got, err := foreign.SessionID(c.id)
		if c.id.Tool == "pi" {
			if err != nil || len(got) != 57 || got[:41] != "pi-"+long[:37]+"-" {
				t.Fatalf("long id: %q %v", got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Fatalf("SessionID(%+v) = %q, %v; want %q", c.id, got, err, c.want)
		}
	}
	if got := foreign.ChildID("s", "branch-1"); got != "s-branch-1" {
		t.Fatalf("ChildID: %q", got)
	}
}
