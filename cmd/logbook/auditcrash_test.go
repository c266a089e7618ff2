package main

import (
	"bytes"
	"context"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// killableSyscalls are the calls a hold, release-hold or delete of the
// JSONL backend may make on its files; the test kills the command at each
// one that touches the data directory.
var killableSyscalls = []string{"openat", "write", "pwrite64", "fsync", "fdatasync", "ftruncate", "rename", "renameat",
	"renameat2", "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir", "link", "linkat", "flock"}

// auditCrash is one operation the test kills: its command and the state it
// starts from.
type auditCrash struct {
	op    string // the logbook command
	setup func(t *testing.T, data string)
	// check asserts that the audit and the state agree after a kill, and
	// that the command run again leaves them agreeing, with the change made
	// once.
	check func(t *testing.T, data string)
}

// The audit log of a JSONL root and the state agree after a kill at any
// point of hold, release-hold and delete: the audit never says held with
// no hold, released with the hold in place, or deleted with the session
// present; and the command run again finishes the change with exactly one
// record of it. Each run kills the command (its plugin subprocess
// included, strace -f) at the N-th call of one syscall on a path of the
// data directory, for every syscall and N that a plain run makes (the
// plain run under strace enumerates them first).
func TestAuditAgreesWithStateAfterAKillAtEachSyscall(t *testing.T) {
	t.Parallel() // its own data directories and config
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("strace is not installed; CI must install it (apt-get install strace)")
		}
		t.Skip("SKIPPED: strace is not installed (apt-get install strace)")
	}
	const id = "s"
	// One persistence plugin and no compaction: each command starts one
	// plugin process.
	cfg := filepath.Join(t.TempDir(), "jsonl.hcl")
	if err := os.WriteFile(cfg, []byte(`persistence "jsonl" {}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	events := `{"type":"app/note","data":{"n":1},"ignorable":true}` + "\n" + `{"type":"app/note","data":{"n":2},"ignorable":true}` + "\n"
	held := func(data string) bool {
		_, err := os.Lstat(filepath.Join(data, id, "hold"))
		return err == nil
	}
	// ops returns the operations the audit records for the session, in
	// order.
	ops := func(t *testing.T, data string) []sdk.AuditOp {
		var out []sdk.AuditOp
		for _, r := range auditRecords(t, data, "--session", id, "--config", cfg) {
			out = append(out, r.Op)
		}
		return out
	}
	holdCheck := func(before []sdk.AuditOp, want bool, op sdk.AuditOp) func(t *testing.T, data string) {
		return func(t *testing.T, data string) {
			recs := ops(t, data)
			switch {
			case slices.Equal(recs, before):
				if held(data) != !want {
					t.Fatalf("the audit records %v (no %s) but the session is held=%v", recs, op, held(data))
				}
			case slices.Equal(recs, append(slices.Clone(before), op)):
				if held(data) != want {
					t.Fatalf("the audit records %v (a %s) but the session is held=%v", recs, op, held(data))
				}
			default:
				t.Fatalf("the audit records %v; want %v, with or without a last %s", recs, before, op)
			}
			ok(t, data, "", string(op), id, "--config", cfg)
			if recs := ops(t, data); !slices.Equal(recs, append(slices.Clone(before), op)) || held(data) != want {
				t.Fatalf("after %s again the audit records %v and held=%v; want one %s more than %v", op, recs, held(data), op, before)
			}
		}
	}
	cases := []auditCrash{
		{op: "hold",
			setup: func(t *testing.T, data string) { ok(t, data, events, "append", id, "--config", cfg) },
			check: holdCheck(nil, true, sdk.AuditHold)},
		{op: "release-hold",
			setup: func(t *testing.T, data string) {
				ok(t, data, events, "append", id, "--config", cfg)
				ok(t, data, "", "hold", id, "--config", cfg)
			},
			check: holdCheck([]sdk.AuditOp{sdk.AuditHold}, false, sdk.AuditReleaseHold)},
		{op: "delete",
			setup: func(t *testing.T, data string) {
				ok(t, data, events, "append", id, "--config", cfg)
				ok(t, data, "", "hold", id, "--config", cfg)
				ok(t, data, "", "release-hold", id, "--config", cfg)
			},
			check: func(t *testing.T, data string) {
				before := []sdk.AuditOp{sdk.AuditHold, sdk.AuditReleaseHold}
				recs := ops(t, data)
				r := lb(t, data, "", "events", id, "--config", cfg)
				switch {
				case slices.Equal(recs, before):
					if r.code != 0 || len(r.lines()) != 2 {
						t.Fatalf("the audit records no delete but events of the session: exit %d, %d events\n%s", r.code, len(r.lines()), r.stderr)
					}
					ok(t, data, events, "append", id, "--config", cfg) // intact and writable
					ok(t, data, "", "delete", id, "--config", cfg)
					if recs := ops(t, data); !slices.Equal(recs, append(slices.Clone(before), sdk.AuditDelete)) {
						t.Fatalf("after delete again the audit records %v; want one delete", recs)
					}
				case slices.Equal(recs, append(slices.Clone(before), sdk.AuditDelete)):
					if r.code == 0 || !strings.Contains(r.lastLine(), string(sdk.CodeSessionNotFound)) {
						t.Fatalf("the audit records the delete but events of the session: exit %d, %d events", r.code, len(r.lines()))
					}
				default:
					t.Fatalf("the audit records %v; want %v, with or without a last delete", recs, before)
				}
			}},
	}
	// Every kill point runs in its own copy of its operation's starting
	// state, killPool at a time.
	type point struct {
		c        auditCrash
		template string
		sc       string
		n        int
		paths    []string // of the enumerating run, under its data directory
		enumData string
	}
	var points []point
	hits := map[string]int{}
	for _, c := range cases {
		template := filepath.Join(t.TempDir(), "template")
		if err := os.Mkdir(template, 0o700); err != nil {
			t.Fatal(err)
		}
		c.setup(t, template)
		data := filepath.Join(t.TempDir(), "d")
		copyTree(t, template, data)
		counts, paths := enumerateSyscalls(t, strace, data, cfg, c.op, id)
		t.Logf("%s: %d kill points %v", c.op, sum(counts), counts)
		for _, sc := range killableSyscalls {
			for n := 1; n <= counts[sc]; n++ {
				points = append(points, point{c: c, template: template, sc: sc, n: n, paths: paths, enumData: data})
			}
			if counts[sc] > 0 {
				hits[c.op+" "+sc] = 0
			}
		}
	}
	const killPool = 4
	var mu sync.Mutex
	work := make(chan point)
	var wg sync.WaitGroup
	for range killPool {
		wg.Go(func() {
			for p := range work {
				t.Run(p.c.op+"/"+p.sc+"-"+strconv.Itoa(p.n), func(t *testing.T) {
					data := filepath.Join(t.TempDir(), "d")
					copyTree(t, p.template, data)
					args := []string{"-f", "-qq", "-o", "/dev/null"}
					for _, path := range p.paths {
						args = append(args, "-P", data+strings.TrimPrefix(path, p.enumData))
					}
					args = append(args, "-e", "trace="+p.sc, "-e", "inject="+p.sc+":signal=KILL:when="+strconv.Itoa(p.n),
						logbookBin, p.c.op, id, "--data", data, "--config", cfg)
					code, stderr := runStrace(t, strace, data, args)
					if code == 0 {
						return // this thread made fewer such calls: the point was not reached
					}
					if !strings.Contains(stderr, "killed") {
						t.Fatalf("exit %d without a kill:\n%s", code, stderr)
					}
					mu.Lock()
					hits[p.c.op+" "+p.sc]++
					mu.Unlock()
					if sameTree(t, p.template, data) {
						return // killed before it changed anything
					}
					p.c.check(t, data)
				})
			}
		})
	}
	for _, p := range points {
		work <- p
	}
	close(work)
	wg.Wait()
	for k, n := range hits {
		if n == 0 {
			t.Errorf("%s: no run was killed at it", k)
		}
	}
}

// copyTree copies the directory from to to, which must not exist.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// sameTree reports whether directories a and b hold the same names with the
// same contents.
func sameTree(t *testing.T, a, b string) bool {
	t.Helper()
	read := func(root string) map[string]string {
		m := map[string]string{}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				m[path[len(root):]] = "dir"
				return err
			}
			b, err := os.ReadFile(path)
			m[path[len(root):]] = string(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	return maps.Equal(read(a), read(b))
}

// enumerateSyscalls runs `logbook op id` on data (with config cfg) under strace and returns,
// for each of killableSyscalls, how many calls touched a path of data, and
// those paths (less the randomly named temporary files, which a later run
// names differently).
func enumerateSyscalls(t *testing.T, strace, data, cfg, op, id string) (map[string]int, []string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "strace.out")
	code, stderr := runStrace(t, strace, data, []string{"-f", "-qq", "-y", "-o", out,
		"-e", "trace=" + strings.Join(killableSyscalls, ","), logbookBin, op, id, "--data", data, "--config", cfg})
	if code != 0 {
		t.Fatalf("logbook %s under strace: exit %d\n%s", op, code, stderr)
	}
	trace, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	pathRE := regexp.MustCompile(`["<](` + regexp.QuoteMeta(data) + `[^"<>]*)[">]`)
	callRE := regexp.MustCompile(`^\d+ +(\w+)\(`)
	counts := map[string]int{}
	seen := map[string]bool{}
	var paths []string
	for _, line := range strings.Split(string(trace), "\n") {
		m := callRE.FindStringSubmatch(line)
		if m == nil {
			continue // a resumed call, or a signal
		}
		touches := false
		for _, p := range pathRE.FindAllStringSubmatch(line, -1) {
			if strings.HasSuffix(p[1], ".tmp") {
				continue
			}
			touches = true
			if !seen[p[1]] {
				seen[p[1]] = true
				paths = append(paths, p[1])
			}
		}
		if touches {
			counts[m[1]]++
		}
	}
	if len(counts) == 0 {
		t.Fatalf("strace saw no call on %s:\n%s", data, trace)
	}
	return counts, paths
}

// runStrace runs strace with args and returns its exit code and stderr.
func runStrace(t *testing.T, strace, dir string, args []string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, strace, args...)
	cmd.Dir = filepath.Dir(dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if strings.Contains(stderr.String(), "PTRACE_") {
		if os.Getenv("CI") == "true" {
			t.Fatalf("strace cannot trace here: %s", stderr.String())
		}
		t.Skipf("SKIPPED: strace cannot trace here: %s", stderr.String())
	}
	if ee, isExit := err.(*exec.ExitError); isExit {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatalf("strace: %v", err)
	}
	return 0, stderr.String()
}

// sum adds the values of m.
func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
