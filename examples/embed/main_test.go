package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The program runs as an embedder's would: built on its own, it serves the
// bundled plugins as its own subprocesses, and a second run over the same
// data directory resumes nothing it should not.
func TestEmbedderProgram(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "embed")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	for run := range 2 {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, "-data", data)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, stderr.Bytes())
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		want := []*regexp.Regexp{
			regexp.MustCompile(`^\{"id":"u1","role":"user",.*"list the files"`),
			regexp.MustCompile(`^\{"id":"a1","role":"assistant",.*"README.md and go.mod"`),
			regexp.MustCompile(`^resumed: 7 events, 0 closers$`),
		}
		if len(lines) != len(want) {
			t.Fatalf("run %d printed %q", run, lines)
		}
		for i, re := range want {
			if !re.MatchString(lines[i]) {
				t.Errorf("run %d, line %d: %q does not match %s", run, i, lines[i], re)
			}
		}
	}
	sessions, err := os.ReadDir(data)
	if err != nil || len(sessions) != 2 {
		t.Errorf("data directory holds %d entries (%v); want the two sessions", len(sessions), err)
	}
}

// A program that embeds logbook with the JSONL backend links no SQL driver
// and no model API client: those come only with the bundle packages of the
// plugins that need them (plugins/sqlite/bundle, plugins/postgres/bundle,
// plugins/compactor-summary/bundle).
func TestLinksNoHeavyPlugin(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, heavy := range []string{"github.com/jackc/pgx", "modernc.org/", "github.com/openai/", "github.com/anthropics/"} {
			if strings.HasPrefix(pkg, heavy) {
				t.Errorf("examples/embed links %s", pkg)
			}
		}
	}
}

// The README's embedding section shows this program verbatim, so what
// readers copy compiles and runs.
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := bytes.Cut(src, []byte("\nfunc main() {\n"))
	if !ok {
		t.Fatal("main.go has no func main")
	}
	body, _, _ = bytes.Cut(body, []byte("\n}\n"))
	want := "```go\nfunc main() {\n" + string(body) + "\n}\n```"
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not show func main of examples/embed/main.go verbatim; it should contain:\n%s", want)
	}
}
