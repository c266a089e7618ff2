package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// previousRelease is the last commit of format version 1: its logbook
// writes v1 logs and refuses v2 ones.
const previousRelease = "c033b8f"

// copyFixture copies testdata/format-v1/<name> (the data a v1 build wrote,
// see its README.md) into a new data directory.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", "format-v1", name)
	data := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(data, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(data, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Data the previous release (format v1) wrote, JSONL and SQLite: this build
// reads it unchanged, writing nothing; a resume stores the current format
// (JSONL: events.v<current> beside the byte-identical events.v1; SQLite:
// the sessions row) and appends after the old events, which stay as they
// were.
func TestPreviousReleaseDataOpensAndResumes(t *testing.T) {
	for _, c := range []struct{ name, config string }{
		{"jsonl", ""},
		{"sqlite", `persistence "sqlite" {}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := copyFixture(t, c.name)
			var cfg []string
			if c.config != "" {
				cfg = []string{"--config", writeConfig(t, t.TempDir(), "logbook.hcl", c.config)}
			}
			run := func(args ...string) result { return ok(t, data, "", append(args, cfg...)...) }
			want, err := os.ReadFile(filepath.Join("testdata", "format-v1", c.name+".events"))
			if err != nil {
				t.Fatal(err)
			}
			v1 := filepath.Join(data, "s", "events.v1.jsonl.zst")
			current := filepath.Join(data, "s", "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl.zst")
			var before []byte
			if c.name == "jsonl" {
				before, _ = os.ReadFile(v1)
			}
			if got := run("events", "s").stdout; got != string(want) {
				t.Fatalf("events of the v1 session:\n%s\nwant what the v1 build printed:\n%s", got, want)
			}
			n := strconv.Itoa(bytes.Count(want, []byte("\n")))
			if in := run("inspect", "s", "--json").stdout; !strings.Contains(in, `"events":`+n) || !strings.Contains(in, `"openTurn":2`) {
				t.Fatalf("inspect of the v1 session: %s", in)
			}
			if c.name == "jsonl" {
				if _, err := os.Stat(current); !os.IsNotExist(err) {
					t.Fatalf("a read wrote %s (%v)", current, err)
				}
			} else if v := sqliteFormat(t, data); v != 1 {
				t.Fatalf("a read changed format_version to %d", v)
			}

			run("resume", "s")
			got := run("events", "s").stdout
			if !strings.HasPrefix(got, string(want)) || got == string(want) {
				t.Fatalf("events after the resume:\n%s\nwant the v1 events, then the closers", got)
			}
			if c.name == "jsonl" {
				after, err := os.ReadFile(v1)
				if err != nil || !bytes.Equal(after, before) {
					t.Fatalf("events.v1 changed (%v)", err)
				}
				if _, err := os.Stat(current); err != nil {
					t.Fatalf("the resume stored no %s: %v", current, err)
				}
			} else if v := sqliteFormat(t, data); v != sdk.FormatVersion {
				t.Fatalf("after the resume format_version is %d; want %d", v, sdk.FormatVersion)
			}
			if out := run("sessions").stdout; !strings.Contains(out, "v"+strconv.Itoa(sdk.FormatVersion)) {
				t.Fatalf("sessions after the resume: %s", out)
			}
		})
	}
}

// sqliteFormat is the stored format_version of session s.
func sqliteFormat(t *testing.T, data string) int {
	t.Helper()
	var v int
	if err := sqliteDB(t, data).QueryRow("SELECT format_version FROM sessions WHERE id = 's'").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The previous release, built from git, refuses data this build wrote
// (JSONL: FORMAT_TOO_NEW; SQLite: SCHEMA_MISMATCH): `logbook inspect` and
// `logbook events` name the version, and change nothing.
func TestPreviousReleaseRefusesThisBuildsData(t *testing.T) {
	t.Parallel() // the build of the previous release overlaps the other tests
	old := buildPreviousRelease(t)
	// A JSONL log names its format version, which the previous release
	// finds too new. SQLite's schema moved with format version 3 (the
	// operation column), so the previous release refuses the whole
	// database first: SCHEMA_MISMATCH naming its user_version.
	for _, c := range []struct{ name, config, code, names string }{
		{"jsonl", "", "FORMAT_TOO_NEW", "v" + strconv.Itoa(sdk.FormatVersion)},
		{"sqlite", `persistence "sqlite" {}`, "SCHEMA_MISMATCH", "user_version is 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			var cfg []string
			if c.config != "" {
				cfg = []string{"--config", writeConfig(t, t.TempDir(), "logbook.hcl", c.config)}
			}
			turn, err := os.ReadFile(filepath.Join("testdata", "format-v1", "turn.ndjson"))
			if err != nil {
				t.Fatal(err)
			}
			ok(t, data, string(turn), append([]string{"append", "n"}, cfg...)...)
			events := ok(t, data, "", append([]string{"events", "n"}, cfg...)...).stdout
			for _, cmd := range []string{"inspect", "events"} {
				args := append([]string{cmd, "n", "--data", data}, cfg...)
				var stdout, stderr bytes.Buffer
				p := exec.Command(old, args...)
				p.Dir, p.Stdout, p.Stderr = data, &stdout, &stderr
				err := p.Run()
				if err == nil || !strings.Contains(stderr.String(), c.code) || !strings.Contains(stderr.String(), c.names) || stdout.Len() != 0 {
					t.Fatalf("the previous release's logbook %s on this build's data: %v\nstdout %q\nstderr %q; want %s naming %q", cmd, err, stdout.String(), stderr.String(), c.code, c.names)
				}
			}
			if again := ok(t, data, "", append([]string{"events", "n"}, cfg...)...).stdout; again != events {
				t.Fatal("the previous release's refusal changed the session")
			}
		})
	}
}

// buildPreviousRelease builds the logbook binary of previousRelease from
// the repository's history (git archive, so the work tree is left alone)
// and returns its path. A clone without that history fails the test: it
// cannot be proven otherwise.
func buildPreviousRelease(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	archive := exec.Command("git", "archive", previousRelease)
	archive.Dir = filepath.Join("..", "..") // the repository's root: the whole tree
	untar := exec.Command("tar", "-x", "-C", src)
	var archiveErr, untarErr bytes.Buffer // one each: the two processes write at once
	archive.Stderr, untar.Stderr = &archiveErr, &untarErr
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s (the previous release; a clone needs the history of main): %v\n%s", previousRelease, err, archiveErr.String())
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("unpacking %s: %v\n%s", previousRelease, err, untarErr.String())
	}
	bin := filepath.Join(t.TempDir(), "logbook-"+previousRelease)
	build := exec.Command("go", "build", "-o", bin, "./cmd/logbook")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the previous release's logbook: %v\n%s", err, out)
	}
	return bin
}
