package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/internal/pgtest"
)

// follower is a `logbook events ID --follow` process: the lines it printed
// arrive on lines, its exit status on done.
type follower struct {
	cmd   *exec.Cmd
	lines chan string
	done  chan int
}

// startFollow starts `logbook events ... --follow` with args from dir.
func startFollow(t *testing.T, dir string, args ...string) *follower {
	t.Helper()
	cmd := exec.Command(logbookBin, append(args, "--follow")...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	// A pipe of our own rather than StdoutPipe, so that Wait (in its own
	// goroutine) cannot close it before every line is read.
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	f := &follower{cmd: cmd, lines: make(chan string, 1024), done: make(chan int, 1)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			f.lines <- sc.Text()
		}
		close(f.lines)
		out.Close()
	}()
	go func() {
		err := cmd.Wait()
		if err != nil && cmd.ProcessState.ExitCode() != 0 {
			t.Logf("logbook %v: %v\nstderr:\n%s", args, err, stderr.String())
		}
		f.done <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return f
}

// next returns the follower's next n lines, failing after a deadline.
func (f *follower) next(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	deadline := time.After(30 * time.Second)
	for len(got) < n {
		select {
		case l, ok := <-f.lines:
			if !ok {
				t.Fatalf("the follower's stdout ended after %d of %d lines: %q", len(got), n, got)
			}
			got = append(got, l)
		case <-deadline:
			t.Fatalf("the follower printed %d of %d lines within 30s: %q", len(got), n, got)
		}
	}
	return got
}

// exit waits for the follower to end and returns its exit status.
func (f *follower) exit(t *testing.T) int {
	t.Helper()
	select {
	case code := <-f.done:
		return code
	case <-time.After(30 * time.Second):
		t.Fatal("the follower did not exit within 30s")
		return -1
	}
}

// TestEventsFollowTailsAnotherProcess: a `logbook events --follow` process
// prints every event that separate `logbook append` processes store, once
// and in order, on every backend with a watch; SIGINT ends it with status 0.
func TestEventsFollowTailsAnotherProcess(t *testing.T) {
	configs := map[string]func(t *testing.T, data string) []string{
		"jsonl default": func(t *testing.T, data string) []string { return nil },
		"jsonl zstd": func(t *testing.T, data string) []string {
			return []string{"--config", writeConfig(t, data, "zstd.hcl", "persistence \"jsonl\" {\n  compression = \"zstd\"\n}\n")}
		},
		"sqlite": func(t *testing.T, data string) []string {
			return []string{"--config", writeConfig(t, data, "sqlite.hcl", "persistence \"sqlite\" {}\n")}
		},
		"postgres": func(t *testing.T, data string) []string {
			dsn := pgtest.DSN(t)
			return []string{"--config", writeConfig(t, data, "pg.hcl", fmt.Sprintf("persistence \"postgres\" {\n  dsn = %q\n  schema = %q\n}\n", dsn, pgtest.Schema(t, dsn)))}
		},
	}
	for name, config := range configs {
		t.Run(name, func(t *testing.T) {
			data := t.TempDir()
			cfg := config(t, data)
			ok(t, data, input(crashLines), append([]string{"append", "s"}, cfg...)...)
			stored := len(ok(t, data, "", append([]string{"events", "s"}, cfg...)...).lines())
			f := startFollow(t, data, append([]string{"events", "s", "--data", data}, cfg...)...)
			got := f.next(t, stored)
			for i := range 4 {
				lines := turnLines(2+i, fmt.Sprintf("m%d", i), fmt.Sprintf("more %d", i))
				ok(t, data, input(lines), append([]string{"append", "s"}, cfg...)...)
				now := len(ok(t, data, "", append([]string{"events", "s"}, cfg...)...).lines())
				got = append(got, f.next(t, now-len(got))...)
			}
			if err := f.cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			if code := f.exit(t); code != 0 {
				t.Fatalf("SIGINT: exit status %d, want 0", code)
			}
			for l := range f.lines {
				t.Fatalf("the follower printed %q after the last append", l)
			}
			want := ok(t, data, "", append([]string{"events", "s"}, cfg...)...).lines()
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("the follower printed\n%s\nthe log holds\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestEventsFollowFromTo: --from starts the follow inside the log, and --to
// ends it, with status 0, once the event before it is printed, also when
// that event is stored only after the follow started.
func TestEventsFollowFromTo(t *testing.T) {
	data := t.TempDir()
	finished(t, data, "s") // 11 events
	all := ok(t, data, "", "events", "s").lines()
	f := startFollow(t, data, "events", "s", "--from", "3", "--to", "6", "--data", data)
	if got := f.next(t, 3); strings.Join(got, "\n") != strings.Join(all[3:6], "\n") {
		t.Fatalf("--from 3 --to 6 printed %q, want %q", got, all[3:6])
	}
	if code := f.exit(t); code != 0 {
		t.Fatalf("--to reached: exit status %d, want 0", code)
	}
	f = startFollow(t, data, "events", "s", "--from", "9", "--to", "13", "--data", data)
	f.next(t, 2)
	ok(t, data, input(turnLines(2, "u2", "Again")[:2]), "append", "s", "--continue")
	if got := f.next(t, 2); strings.Join(got, "\n") != strings.Join(ok(t, data, "", "events", "s", "--from", "11", "--to", "13").lines(), "\n") {
		t.Fatalf("the events appended while following: %q", got)
	}
	if code := f.exit(t); code != 0 {
		t.Fatalf("--to reached: exit status %d, want 0", code)
	}
}

// TestEventsFollowSIGTERM: SIGTERM, like SIGINT, ends a follow normally.
func TestEventsFollowSIGTERM(t *testing.T) {
	data := t.TempDir()
	finished(t, data, "s")
	f := startFollow(t, data, "events", "s", "--data", data)
	f.next(t, 11)
	if err := f.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := f.exit(t); code != 0 {
		t.Fatalf("SIGTERM: exit status %d, want 0", code)
	}
}
