package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seed-e5e476df/logbook/internal/testserve"
)

// fault is one kind of fault. run injects it and heals it; the driver then
// waits until every writer recovered and verifies every session.
type fault struct {
	name string
	// applies says why the kind means nothing on a backend ("" = it
	// applies); such a kind is left out everywhere, CI included.
	applies func(b backend) string
	// unavailable says why the kind cannot run on this machine ("" = it
	// can): logged as skipped, and a failure under CI=true.
	unavailable func(h *harness) string
	run         func(h *harness)
}

// faults are the kinds, in the order of the summary table: the faults of
// the append path, then the operation faults (ops_test.go).
var faults = append([]fault{
	{"serve-kill", killsHolder, always, serveKill},
	{"plugin-kill", killsHolder, always, pluginKill},
	{"disk-full", onLocalDisk, needTmpfs, diskFull},
	{"fsync-eio", onLocalDisk, needStrace, fsyncEIO},
	{"torn-kill", killsHolder, always, tornKill},
	{"torn-garbage", hasTornTail, always, tornGarbageOrRows},
	{"second-cli", killsHolder, always, secondCLI},
	{"second-serve", killsHolder, always, secondServe},
}, opFaults...)

func always(*harness) string { return "" }

// killsHolder: the kind kills the process holding the sessions, or needs a
// second process to see them; neither is possible with the memory backend.
func killsHolder(b backend) string {
	if b.store == memoryStore {
		return "the sessions live in serve's plugin process only"
	}
	return ""
}

// onLocalDisk: the kind strikes the files of the data directory, which
// only the file backends write.
func onLocalDisk(b backend) string {
	switch b.store {
	case memoryStore:
		return "nothing is written to disk"
	case postgresStore:
		return "the database server writes the data, not the plugin"
	}
	return ""
}

func needTmpfs(h *harness) string {
	if !h.mounted {
		return "needs root for a size-limited tmpfs"
	}
	return ""
}

func needStrace(*harness) string {
	if _, err := exec.LookPath("strace"); err != nil {
		return "strace is not installed"
	}
	return ""
}

// hasTornTail: the stored log can end in a torn tail, bytes (JSONL) or
// rows past next_seq (SQLite, PostgreSQL); the memory backend keeps whole
// events only.
func hasTornTail(b backend) string {
	if b.store == memoryStore {
		return "the memory backend keeps whole events only"
	}
	return ""
}

// tornGarbageOrRows is torn-garbage on the backend's kind of log.
func tornGarbageOrRows(h *harness) {
	if h.b.store == jsonlStore {
		tornGarbage(h)
		return
	}
	tornRows(h)
}

// dwell lets the writers run for a random 0.2–1.5 s, so that the fault
// lands at a random point of their appends.
func (h *harness) dwell() {
	time.Sleep(200*time.Millisecond + time.Duration(h.rng.Int64N(int64(1300*time.Millisecond))))
}

// serveKill kills serve with SIGKILL mid-appends and restarts it on the
// same data directory.
func serveKill(h *harness) {
	h.dwell()
	h.restart()
}

// pluginKill kills one of serve's plugin subprocesses with SIGKILL; serve
// must start it again.
func pluginKill(h *harness) {
	h.dwell()
	pids := persistencePlugins(h.server().Plugins())
	if len(pids) == 0 {
		h.problem(errors.New("plugin-kill: serve has no persistence plugin subprocess"))
		return
	}
	pid := pids[h.rng.IntN(len(pids))]
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		h.t.Fatalf("plugin-kill: kill %d: %v", pid, err)
	}
	if err := testserve.WaitGone([]int{pid}, exitTimeout); err != nil {
		h.t.Fatal(err)
	}
}

// diskFull fills the data directory's tmpfs with a ballast file, waits
// until a writer failed (or 30 s), and removes the ballast.
func diskFull(h *harness) {
	h.dwell()
	since := h.failures()
	ballast := filepath.Join(h.root, "ballast")
	f, err := os.OpenFile(ballast, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		h.t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for err == nil {
		_, err = f.Write(chunk)
	}
	if !errors.Is(err, syscall.ENOSPC) {
		h.t.Fatalf("disk-full: filling %s: %v", ballast, err)
	}
	if !h.awaitFailure(since, 30*time.Second) {
		h.t.Log("disk-full: no writer failed within 30 s of a full disk")
	}
	f.Close()
	if err := os.Remove(ballast); err != nil {
		h.t.Fatal(err)
	}
}

// fsyncEIO attaches strace to serve's plugins to make fdatasync and fsync
// fail with EIO (once, from the Nth call on, or every second call from the
// Nth on), waits until strace injected an error (or 20 s), gives the
// writers up to 3 s to fail on it (a retry inside the flush may hide a
// single failure, rightly) and detaches.
func fsyncEIO(h *harness) {
	h.dwell()
	pids := h.server().Plugins()
	when := strconv.Itoa(1 + h.rng.IntN(4))
	switch h.rng.IntN(4) {
	case 0:
		when += "+"
	case 1:
		when += "+2"
	}
	trace := filepath.Join(h.t.TempDir(), "strace.out")
	args := []string{"-f", "-qq", "-o", trace, "-e", "trace=fsync,fdatasync", "-e", "inject=fsync,fdatasync:error=EIO:when=" + when}
	for _, pid := range pids {
		args = append(args, "-p", strconv.Itoa(pid))
	}
	st := exec.Command("strace", args...)
	var out strings.Builder
	st.Stdout, st.Stderr = &out, &out
	if err := st.Start(); err != nil {
		h.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- st.Wait() }()
	if err := awaitTracer(pids, st.Process.Pid, exited); err != nil {
		h.t.Fatalf("fsync-eio: %v: %s", err, out.String())
	}
	since := h.failures()
	injected := awaitInjection(trace, 20*time.Second)
	if injected {
		h.awaitFailure(since, 3*time.Second)
	}
	_ = st.Process.Signal(syscall.SIGTERM) // strace detaches and exits
	select {
	case <-exited:
	case <-time.After(exitTimeout):
		_ = st.Process.Kill()
		h.t.Fatalf("fsync-eio: strace did not detach within %s", exitTimeout)
	}
	if err := awaitTracer(pids, 0, nil); err != nil {
		h.t.Fatalf("fsync-eio: %v", err)
	}
	h.t.Logf("fsync-eio: strace injected EIO into fsync and fdatasync of %v when=%s: injected %v, writers failed %d times",
		pids, when, injected, h.failures()-since)
}

// awaitInjection waits up to d until strace's output file notes an
// injected error.
func awaitInjection(trace string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(trace); err == nil && strings.Contains(string(b), "(INJECTED)") {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// awaitTracer waits until every process of pids that still runs is traced
// by tracer (0: by none); exited, when not nil, reports a tracer that gave
// up.
func awaitTracer(pids []int, tracer int, exited <-chan error) error {
	deadline := time.Now().Add(exitTimeout)
	for _, pid := range pids {
		for {
			got, ok := tracerPid(pid)
			if !ok || got == tracer {
				break
			}
			select {
			case err := <-exited:
				return fmt.Errorf("strace exited before attaching to %d: %v", pid, err)
			default:
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("process %d is traced by %d, want %d, after %s", pid, got, tracer, exitTimeout)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	return nil
}

// tracerPid returns the TracerPid of a process's status; false when it is
// gone.
func tracerPid(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			return n, err == nil
		}
	}
	return 0, false
}

// tornKill makes a writer send a large batch and kills serve with SIGKILL
// 0–500 ms after it went out, so that the kill lands mid-append.
func tornKill(h *harness) {
	w := h.writers[h.rng.IntN(len(h.writers))]
	started := make(chan struct{})
	w.large <- started
	select {
	case <-started:
	case <-time.After(recoverTimeout):
		h.t.Fatalf("torn-kill: the writer of %s did not send its large batch within %s", w.session().id, recoverTimeout)
	}
	time.Sleep(time.Duration(h.rng.Int64N(int64(500 * time.Millisecond))))
	h.restart()
}

// tornGarbage kills serve, appends 1–4096 random bytes to the log of some
// of the writers' sessions (a write torn by a crash) and restarts serve. A
// read-only inspect must call the bytes a torn tail; once the writers
// recovered (their resume cut the tail), it must find none, and the cut
// bytes must be kept in a torn-*.bin file. A plain-lines log gets bytes
// without line endings (a torn line); a zstd log random bytes, half of
// them behind a frame magic (a torn frame).
func tornGarbage(h *harness) {
	h.dwell()
	if err := h.server().Kill9(exitTimeout); err != nil {
		h.t.Fatal(err)
	}
	cut := map[*record][]byte{}
	for _, w := range h.writers {
		rec := w.session()
		logs, _ := filepath.Glob(filepath.Join(h.dir, rec.id, "events.v*.jsonl*"))
		if h.rng.IntN(3) == 0 || len(logs) != 1 || strings.HasSuffix(logs[0], ".tmp") {
			continue
		}
		g := h.garbage(strings.HasSuffix(logs[0], ".zst"))
		if err := appendGarbage(logs[0], g); err != nil {
			h.t.Fatal(err)
		}
		cut[rec] = g
		if torn, err := h.tornBytes(rec.id); err != nil || torn < int64(len(g)) {
			h.problem(fmt.Errorf("torn-garbage: %d bytes appended to %s: inspect says %d torn bytes (%v)", len(g), logs[0], torn, err))
		}
	}
	h.start()
	if err := h.awaitRecovery(h.successes()); err != nil {
		h.t.Fatalf("torn-garbage: %v", err)
	}
	for rec, g := range cut {
		if rec.ackedCount() >= rotateEvents {
			continue // its writer may have moved on before resuming it
		}
		if torn, err := h.tornBytes(rec.id); err != nil || torn != 0 {
			h.problem(fmt.Errorf("torn-garbage: after serve resumed %s, inspect says %d torn bytes (%v)", rec.id, torn, err))
		}
		if !keptIn(filepath.Join(h.dir, rec.id), g) {
			h.problem(fmt.Errorf("torn-garbage: no torn-*.bin in %s ends in the %d bytes the resume cut", rec.id, len(g)))
		}
	}
}

// tornBytes returns the torn bytes `logbook inspect` reports for session
// id.
func (h *harness) tornBytes(id string) (int64, error) {
	stdout, stderr, err := h.cli(context.Background(), "", "--json", "inspect", id)
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, tail(stderr, 1000))
	}
	var in struct {
		TornBytes int64 `json:"tornBytes"`
	}
	err = json.Unmarshal([]byte(stdout), &in)
	return in.TornBytes, err
}

// keptIn reports whether a torn-*.bin file in dir ends in g.
func keptIn(dir string, g []byte) bool {
	kept, _ := filepath.Glob(filepath.Join(dir, "torn-*.bin"))
	for _, path := range kept {
		if b, err := os.ReadFile(path); err == nil && bytes.HasSuffix(b, g) {
			return true
		}
	}
	return false
}

// garbage returns 1–4096 random bytes: for a zstd log, half the time
// behind a frame magic; for a plain log, never a line ending.
func (h *harness) garbage(zstd bool) []byte {
	b := make([]byte, 1+h.rng.IntN(4096))
	for i := range b {
		b[i] = byte(h.rng.IntN(256))
		if !zstd && (b[i] == '\n' || b[i] == '\r') {
			b[i] = 'x'
		}
	}
	if zstd && len(b) >= 4 && h.rng.IntN(2) == 0 {
		copy(b, []byte{0x28, 0xb5, 0x2f, 0xfd})
	}
	return b
}

func appendGarbage(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
