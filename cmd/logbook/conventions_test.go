package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

func TestUnknownCommandSuggestsOnOneLine(t *testing.T) {
	data := t.TempDir()
	for args, want := range map[string]string{
		"sesions": `logbook: USAGE: unknown command "sesions"; did you mean "sessions"?`,
		"i":       `logbook: USAGE: unknown command "i"; did you mean "import" or "inspect"?`,
		"xyzzy":   `logbook: USAGE: unknown command "xyzzy"; 'logbook --help' lists the commands`,
	} {
		r := fail(t, data, "", sdk.CodeUsage, args)
		if r.lastLine() != want {
			t.Errorf("logbook %s: last line %q, want %q", args, r.lastLine(), want)
		}
	}
}

func TestCompletionScripts(t *testing.T) {
	data := t.TempDir()
	bash := ok(t, data, "", "completion", "bash")
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed to check the bash completion script")
	}
	check := exec.Command("bash", "-n")
	check.Stdin = strings.NewReader(bash.stdout)
	if out, err := check.CombinedOutput(); err != nil || !strings.Contains(bash.stdout, "__start_logbook") {
		t.Fatalf("bash -n on the bash completion: %v\n%s", err, out)
	}
	for _, shell := range []string{"zsh", "fish", "powershell"} {
		if r := ok(t, data, "", "completion", shell); !strings.Contains(r.stdout, "logbook") {
			t.Errorf("completion %s printed %q", shell, r.stdout)
		}
	}
	// The scripts call back into the binary: it completes command names.
	if r := runIn(t, data, "", "__complete", "sess"); r.code != 0 || !strings.HasPrefix(r.stdout, "sessions\t") {
		t.Errorf("__complete sess printed %q", r.stdout)
	}
	for _, args := range [][]string{{"completion", "tcsh"}, {"completion"}, {"completion", "bash", "zsh"}} {
		r := fail(t, data, "", sdk.CodeUsage, args...)
		if !strings.Contains(r.lastLine(), completionShellNames) {
			t.Errorf("logbook %v: %q does not name the shells", args, r.lastLine())
		}
	}
}

func TestVersionReportsTheBuild(t *testing.T) {
	data := t.TempDir()
	var got buildInfo
	r := ok(t, data, "", "version", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("version --json printed %q: %v", r.stdout, err)
	}
	// What the toolchain recorded in the binary, read by `go version -m`.
	recorded := map[string]string{}
	out, err := exec.CommandContext(context.Background(), "go", "version", "-m", logbookBin).Output()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[0] == "mod":
			recorded["mod"] = f[2]
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs."):
			k, v, _ := strings.Cut(f[1], "=")
			recorded[k] = v
		}
	}
	wantVersion := recorded["mod"]
	if wantVersion == "(devel)" || wantVersion == "" {
		wantVersion = "dev"
	}
	if got.Version != wantVersion || got.Commit != recorded["vcs.revision"] || got.Time != recorded["vcs.time"] ||
		got.Modified != (recorded["vcs.modified"] == "true") || !strings.HasPrefix(got.Go, "go1.") {
		t.Errorf("version --json = %+v, the binary records %v", got, recorded)
	}
	text := ok(t, data, "", "version")
	flag := ok(t, data, "", "--version")
	if first := text.lines()[0]; first != "logbook "+got.Version || flag.stdout != first+"\n" {
		t.Errorf("version starts %q, --version prints %q, want both %q", first, flag.stdout, "logbook "+got.Version)
	}
	fail(t, data, "", sdk.CodeUsage, "version", "extra")
}
