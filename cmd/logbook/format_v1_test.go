package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
)

// previousRelease is the last commit before tenants (format version 4,
// SQLite schema version 3): its logbook writes v4 logs, which this build
// reads as the implicit tenant's, and refuses v5 ones.
const previousRelease = "b0faf68"

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

// The previous release, built from git once for both checks:
//   - it refuses data this build wrote (JSONL: FORMAT_TOO_NEW; SQLite:
//     SCHEMA_MISMATCH): `logbook inspect` and `logbook events` name the
//     version, and change nothing;
//   - data it wrote opens unchanged in this build's implicit tenant: the
//     same events with or without --tenant default, listed under the
//     default tenant only, absent from a named tenant, and (JSONL) not
//     rewritten by the reads.
func TestPreviousRelease(t *testing.T) {
	t.Parallel() // the build of the previous release overlaps the other tests
	old := buildPreviousRelease(t)
	turn, err := os.ReadFile(filepath.Join("testdata", "format-v1", "turn.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	backends := []struct{ name, config string }{{"jsonl", ""}, {"sqlite", `persistence "sqlite" {}`}}
	config := func(t *testing.T, body string) []string {
		if body == "" {
			return nil
		}
		return []string{"--config", writeConfig(t, t.TempDir(), "logbook.hcl", body)}
	}
	runOld := func(t *testing.T, data string, stdin string, args ...string) (stdout, stderr string, err error) {
		var out, errb bytes.Buffer
		p := exec.Command(old, append(args, "--data", data)...)
		p.Dir, p.Stdin, p.Stdout, p.Stderr = data, strings.NewReader(stdin), &out, &errb
		err = p.Run()
		return out.String(), errb.String(), err
	}
	t.Run("refuses this build's data", func(t *testing.T) {
		// A JSONL log names its format version, which the previous release
		// finds too new. SQLite's schema moved with tenants (the tenant
		// column), so the previous release refuses the whole database
		// first: SCHEMA_MISMATCH naming its user_version.
		names := map[string]struct{ code, names string }{
			"jsonl":  {"FORMAT_TOO_NEW", "v" + strconv.Itoa(sdk.FormatVersion)},
			"sqlite": {"SCHEMA_MISMATCH", "user_version is " + strconv.Itoa(sqlite.UserVersion)},
		}
		for _, c := range backends {
			t.Run(c.name, func(t *testing.T) {
				data, cfg := t.TempDir(), config(t, c.config)
				ok(t, data, string(turn), append([]string{"append", "n"}, cfg...)...)
				events := ok(t, data, "", append([]string{"events", "n"}, cfg...)...).stdout
				for _, cmd := range []string{"inspect", "events"} {
					stdout, stderr, err := runOld(t, data, "", append([]string{cmd, "n"}, cfg...)...)
					want := names[c.name]
					if err == nil || !strings.Contains(stderr, want.code) || !strings.Contains(stderr, want.names) || stdout != "" {
						t.Fatalf("the previous release's logbook %s on this build's data: %v\nstdout %q\nstderr %q; want %s naming %q", cmd, err, stdout, stderr, want.code, want.names)
					}
				}
				if again := ok(t, data, "", append([]string{"events", "n"}, cfg...)...).stdout; again != events {
					t.Fatal("the previous release's refusal changed the session")
				}
			})
		}
	})
	t.Run("its data opens in the implicit tenant", func(t *testing.T) {
		for _, c := range backends {
			t.Run(c.name, func(t *testing.T) {
				data, cfg := t.TempDir(), config(t, c.config)
				if _, stderr, err := runOld(t, data, string(turn), append([]string{"append", "o"}, cfg...)...); err != nil {
					t.Fatalf("the previous release's append: %v\n%s", err, stderr)
				}
				want, stderr, err := runOld(t, data, "", append([]string{"events", "o"}, cfg...)...)
				if err != nil || want == "" {
					t.Fatalf("the previous release's events: %v\n%s", err, stderr)
				}
				tree := func() string { return dirListing(t, data) }
				before := tree()
				for _, args := range [][]string{{"events", "o"}, {"events", "o", "--tenant", "default"}} {
					if got := ok(t, data, "", append(args, cfg...)...).stdout; got != want {
						t.Fatalf("logbook %v on the previous release's data:\n%s\nwant what it printed:\n%s", args, got, want)
					}
				}
				if c.name == "jsonl" {
					if after := tree(); after != before {
						t.Fatalf("reading the previous release's data changed the data directory:\n%s\nwas\n%s", after, before)
					}
				}
				all := ok(t, data, "", append([]string{"sessions", "--tenant", "*", "--json"}, cfg...)...).stdout
				if lines := strings.Split(strings.TrimSpace(all), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], `{"tenant":"default","result":[{"id":"o"`) {
					t.Fatalf("sessions --tenant '*' on the previous release's data: %s; want the default tenant alone, with session o", all)
				}
				wantFail(t, lb(t, data, "", append([]string{"events", "o", "--tenant", "b"}, cfg...)...), sdk.CodeSessionNotFound)
				header, _, _ := strings.Cut(ok(t, data, "", append([]string{"export", "o"}, cfg...)...).stdout, "\n")
				if !strings.Contains(header, `"id":"o"`) || strings.Contains(header, `"tenant"`) {
					t.Fatalf("the exported header of a session of the implicit tenant: %s; want no tenant member", header)
				}
			})
		}
	})
}

// dirListing lists every file under dir with its size and modification
// time, one a line, in walk order.
func dirListing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %v %d %d\n", rel, d.IsDir(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
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
