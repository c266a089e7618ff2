package logbook_test

import (
	"bufio"
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// module is this module's path.
const module = "github.com/seed-e5e476df/logbook"

// publicPackages returns the module's packages outside internal/, cmd/,
// examples/ and test/ and outside any internal folder, relative to the
// module ("" for the root).
func publicPackages(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		first, _, _ := strings.Cut(rel, "/")
		if slices.Contains([]string{"internal", "cmd", "examples", "test"}, first) ||
			strings.HasSuffix(rel, "/internal") || strings.Contains(rel, "/internal/") {
			continue
		}
		pkgs = append(pkgs, rel)
	}
	return pkgs
}

// The public packages are the doors: the embedder's (logbook, events,
// provider, config, runtime/service, and runtime/service/pgtokens for a
// postgres primary's tokens), the daemon client, the plugin
// author's (sdk and the helpers listed here, plugins/…) and the embedded
// assets (viewer, docs). The engine room stays under runtime/internal; a
// new sdk package is a new promise to plugin authors and is added here on
// purpose.
func TestPublicPackagesAreTheDoors(t *testing.T) {
	doors := []string{"", "events", "provider", "client", "config", "runtime/service", "runtime/service/pgtokens", "viewer", "docs",
		"sdk", "sdk/pluginrpc", "sdk/persistencetest", "sdk/persistencefault", "sdk/plugintest",
		"sdk/proto/logbook/v1", "sdk/proto/logbook/v1/logbookv1connect",
		"sdk/jsonv", "sdk/headerjson", "sdk/envelope", "sdk/durable", "sdk/flockclaim", "sdk/handles",
		"sdk/rowscan", "sdk/frames", "sdk/errinfo"}
	for _, p := range publicPackages(t) {
		first, _, _ := strings.Cut(p, "/")
		if !slices.Contains(doors, p) && first != "plugins" {
			t.Errorf("package %q is public but is not one of the doors; move it under an internal folder (the engine under runtime/internal)", p)
		}
	}
}

// The README's layout table names every public package (a glob such as
// plugins/*/bundle/ may cover several), and every path it names exists.
func TestReadmeLayoutTableMatchesTheModule(t *testing.T) {
	entries := readmeLayoutPaths(t)
	if len(entries) == 0 {
		t.Fatal("README.md has no layout table (## Layout)")
	}
	for _, p := range publicPackages(t) {
		if !slices.ContainsFunc(entries, func(e string) bool { return covers(e, p) }) {
			t.Errorf("README.md's layout table does not name the package %q", p)
		}
	}
	for _, e := range entries {
		if e == "" || strings.Contains(e, "*") {
			continue
		}
		if _, err := os.Stat(e); err != nil {
			t.Errorf("README.md's layout table names %q, which does not exist", e)
		}
	}
}

// covers reports whether the layout entry e ("" for the module root, a
// folder, or a glob of folders) names the package p or, for a glob, a
// folder p is in.
func covers(e, p string) bool {
	if e == p {
		return true
	}
	if !strings.Contains(e, "*") {
		return false
	}
	for q := p; q != "." && q != ""; q = path.Dir(q) {
		if ok, _ := path.Match(e, q); ok {
			return true
		}
	}
	return false
}

// readmeLayoutPaths returns the paths in the first column of the table
// under README.md's "## Layout", without their trailing slash; the module
// root's row ("`logbook` (the module root)") gives "".
func readmeLayoutPaths(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	code := regexp.MustCompile("`([^`]+)`")
	var paths []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "## Layout":
			in = true
		case in && strings.HasPrefix(line, "## "):
			return paths
		case in && strings.HasPrefix(line, "| "):
			first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
			if strings.Contains(first, "(the module root)") {
				paths = append(paths, "")
			}
			for _, m := range code.FindAllStringSubmatch(first, -1) {
				if strings.HasSuffix(m[1], "/") {
					paths = append(paths, strings.TrimSuffix(m[1], "/"))
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return paths
}
