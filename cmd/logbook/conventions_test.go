package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/sdk"
)

func TestUnknownCommandSuggestsOnOneLine(t *testing.T) {
	data := t.TempDir()
	for args, want := range map[string]string{
		"sesions": `logbook: USAGE: unknown command "sesions"; did you mean "sessions"?`,
		"i":       `logbook: USAGE: unknown command "i"; did you mean "gc" or "import" or "inspect"?`,
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

// TestDataDirectoryDefaults: the data directory is --data, else
// LOGBOOK_DATA, else a config file's data_dir, else (the embedded profile)
// $XDG_DATA_HOME/logbook, else ~/.local/share/logbook — never the working
// directory; the config file is --config, else LOGBOOK_CONFIG.
func TestDataDirectoryDefaults(t *testing.T) {
	root := t.TempDir()
	cwd, home, xdg, envData, flagData := filepath.Join(root, "cwd"), filepath.Join(root, "home"), filepath.Join(root, "xdg"), filepath.Join(root, "env"), filepath.Join(root, "flag")
	for _, d := range []string{cwd, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfgDir := filepath.Join(root, "cfg")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfgFile := writeConfig(t, cfgDir, "sqlite.hcl", "data_dir = \"./from-file\"\npersistence \"sqlite\" {}\n")
	for name, c := range map[string]struct {
		env   []string
		args  []string
		where string // the session's directory (JSONL) or database (SQLite)
	}{
		"home":                  {env: []string{"HOME=" + home}, where: filepath.Join(home, ".local", "share", "logbook", "s")},
		"relative XDG ignored":  {env: []string{"HOME=" + home, "XDG_DATA_HOME=rel"}, where: filepath.Join(home, ".local", "share", "logbook", "s")},
		"XDG_DATA_HOME":         {env: []string{"HOME=" + home, "XDG_DATA_HOME=" + xdg}, where: filepath.Join(xdg, "logbook", "s")},
		"LOGBOOK_DATA":          {env: []string{"HOME=" + home, "XDG_DATA_HOME=" + xdg, "LOGBOOK_DATA=" + envData}, where: filepath.Join(envData, "s")},
		"--data wins":           {env: []string{"HOME=" + home, "LOGBOOK_DATA=" + envData}, args: []string{"--data", flagData}, where: filepath.Join(flagData, "s")},
		"LOGBOOK_CONFIG":        {env: []string{"HOME=" + home, "LOGBOOK_CONFIG=" + cfgFile}, where: filepath.Join(cfgDir, "from-file", "sessions.db")},
		"LOGBOOK_DATA and file": {env: []string{"HOME=" + home, "LOGBOOK_CONFIG=" + cfgFile, "LOGBOOK_DATA=" + envData}, where: filepath.Join(envData, "sessions.db")},
		"--config wins":         {env: []string{"HOME=" + home, "LOGBOOK_CONFIG=/nonexistent.hcl"}, args: []string{"--config", cfgFile}, where: filepath.Join(cfgDir, "from-file", "sessions.db")},
	} {
		t.Run(name, func(t *testing.T) {
			for _, d := range []string{home, xdg, envData, flagData, filepath.Join(cfgDir, "from-file")} {
				os.RemoveAll(d)
			}
			os.MkdirAll(home, 0o700)
			if r := runEnv(t, cwd, c.env, "", append([]string{"create", "s"}, c.args...)...); r.code != 0 {
				t.Fatalf("create: exit %d\n%s", r.code, r.stderr)
			}
			if _, err := os.Stat(c.where); err != nil {
				t.Fatalf("the session is not at %s: %v", c.where, err)
			}
			if entries, _ := os.ReadDir(cwd); len(entries) != 0 {
				t.Fatalf("the working directory got %v", entries)
			}
			if r := runEnv(t, cwd, c.env, "", append([]string{"sessions", "--json"}, c.args...)...); !strings.Contains(r.stdout, `"id":"s"`) {
				t.Fatalf("sessions does not see it: %+v", r)
			}
		})
	}
	r := runEnv(t, cwd, []string{"HOME="}, "", "sessions")
	wantFail(t, r, sdk.CodeConfigInvalid, "sessions")
	if !strings.Contains(r.lastLine(), "--data DIR or LOGBOOK_DATA") {
		t.Errorf("without HOME: %q", r.lastLine())
	}
}

// TestDemoIgnoresLogbookData: the demo keeps to its own directory even
// when the shell sets LOGBOOK_DATA and LOGBOOK_CONFIG.
func TestDemoIgnoresLogbookData(t *testing.T) {
	elsewhere := t.TempDir()
	dir := filepath.Join(t.TempDir(), "demo")
	env := []string{dataEnv + "=" + elsewhere, configEnv + "=" + filepath.Join(elsewhere, "none.hcl")}
	if r := runEnv(t, t.TempDir(), env, "", "demo", "--data", dir); r.code != 0 {
		t.Fatalf("demo: exit %d\n%s", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("LOGBOOK_DATA got %v", entries)
	}
}

// TestEveryCommandHasExamples walks the command tree: every command a user
// can run shows examples in its --help (cobra's Example), and its Use
// starts with its name.
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || !sub.IsAvailableCommand() {
				continue
			}
			if strings.TrimSpace(sub.Example) == "" {
				t.Errorf("'%s' has no Example for its --help", sub.CommandPath())
			} else if !strings.Contains(sub.Example, sub.CommandPath()) {
				t.Errorf("the examples of '%s' never run it: %q", sub.CommandPath(), sub.Example)
			}
			walk(sub)
		}
	}
	root := newRoot(&app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard})
	if len(root.Commands()) < 20 {
		t.Fatalf("the tree has only %d commands", len(root.Commands()))
	}
	walk(root)
}

// jsonLines checks that every stdout line of r is a JSON document.
func jsonLines(t *testing.T, what string, r result) {
	t.Helper()
	if len(r.lines()) == 0 {
		t.Errorf("%s printed nothing", what)
	}
	for i, l := range r.lines() {
		if !json.Valid([]byte(l)) {
			t.Errorf("%s: stdout line %d is not JSON: %q", what, i+1, l)
		}
	}
}

// TestJSONEverywhere: every command that prints results prints JSON with
// --json (one document, or one a line), and the others refuse --json with
// USAGE instead of ignoring it.
func TestJSONEverywhere(t *testing.T) {
	t.Parallel() // its own data directory and configs
	data := t.TempDir()
	mirrored := writeConfig(t, t.TempDir(), "mirrored.hcl", "persistence \"jsonl\" {}\npersistence \"sqlite\" {}\n")
	ok(t, data, input(crashLines), "append", "m", "--config", mirrored)
	for _, args := range [][]string{
		{"create", "s"},
		{"append", "a"}, // stdin below
		{"resume", "a"},
		{"fork", "a", "--as", "a2"},
		{"fork", "a"},
		{"export", "a"},
		{"events", "a"},
		{"messages", "a"},
		{"messages", "a", "--format", "openai"},
		{"surface", "a"},
		{"header", "a"},
		{"inspect", "a"},
		{"transcript", "a"},
		{"why", "a", "3"},
		{"request", "a", "--at", "4"},
		{"sessions"},
		{"plugins"},
		{"version"},
		{"verify"}, // no mirror: an empty array
		{"migrate", "--to", "sqlite", "--config", mirrored},
		{"verify", "--config", mirrored}, // the comparisons, all ok after the migrate
	} {
		stdin := ""
		if args[0] == "append" {
			stdin = input(crashLines)
		}
		jsonLines(t, strings.Join(args, " "), ok(t, data, stdin, append(args, "--json")...))
	}
	exported := ok(t, data, "", "export", "a").stdout
	if err := os.WriteFile(filepath.Join(data, "a.jsonl"), []byte(exported), 0o600); err != nil {
		t.Fatal(err)
	}
	jsonLines(t, "import", ok(t, data, "", "import", filepath.Join(data, "a.jsonl"), "--as", "a3", "--json"))
	var m migrateResult
	if r := ok(t, data, "", "migrate", "--to", "sqlite", "--config", mirrored, "--json"); json.Unmarshal([]byte(r.stdout), &m) != nil || m.To != "sqlite" || m.Sessions < 5 || m.Complete != m.Sessions-1 || m.Copied != 1 || m.Failed != 0 {
		t.Errorf("migrate --json a second time: %q", r.stdout)
	}
	if r := ok(t, data, "", "verify", "--json"); r.stdout != "[]\n" {
		t.Errorf("verify --json without a mirror: %q", r.stdout)
	}
	for _, args := range [][]string{
		{"demo"},
		{"serve"},
		{"view"},
		{"completion", "bash"},
		{"messages", "a", "--format", "markdown"},
	} {
		r := fail(t, data, "", sdk.CodeUsage, append(args, "--json")...)
		if !strings.Contains(r.lastLine(), "json") {
			t.Errorf("logbook %v --json: %q does not say why", args, r.lastLine())
		}
	}
}
