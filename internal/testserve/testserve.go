// Package testserve runs a real `logbook serve` process for tests: it starts
// the binary, waits until it listens, keeps its stderr, finds its plugin
// subprocesses through /proc and kills it with SIGKILL.
package testserve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// listenPrefix starts the stderr line on which serve says where it listens.
const listenPrefix = "logbook serve: listening on "

// Process is a running `logbook serve`. Its methods are safe for
// concurrent use.
type Process struct {
	cmd    *exec.Cmd
	addr   string
	mu     sync.Mutex
	stderr bytes.Buffer
	exited chan struct{} // closed when stderr reached its end
	once   sync.Once
	err    error // of cmd.Wait, set once exited and waited
}

// Start runs `bin serve --addr 127.0.0.1:0 args…` and waits up to timeout
// until it listens. On failure the process is gone and the error carries
// its stderr. The server does not see LOGBOOK_CONFIG or LOGBOOK_DATA of the
// test's environment: what it serves comes from args alone.
func Start(bin string, timeout time.Duration, args ...string) (*Process, error) {
	p := &Process{exited: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOGBOOK_CONFIG=") && !strings.HasPrefix(kv, "LOGBOOK_DATA=") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	listening := make(chan string, 1)
	go func() {
		defer close(p.exited)
		sc := bufio.NewScanner(errPipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(line + "\n")
			p.mu.Unlock()
			if addr, ok := strings.CutPrefix(line, listenPrefix); ok {
				listening <- addr
			}
		}
	}()
	select {
	case p.addr = <-listening:
		return p, nil
	case <-p.exited:
		err := p.Wait(timeout)
		return nil, fmt.Errorf("logbook serve exited before listening (%v):\n%s", err, p.Log())
	case <-time.After(timeout):
		_ = p.Kill9(timeout)
		return nil, fmt.Errorf("logbook serve did not listen within %s:\n%s", timeout, p.Log())
	}
}

// Addr is the host:port the server listens on.
func (p *Process) Addr() string { return p.addr }

// Pid is the server's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Log returns what the server wrote to stderr so far.
func (p *Process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// Signal sends sig to the server.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Wait waits up to timeout for the server to exit, its stderr read to the
// end first, and returns its exit error (nil for status 0).
func (p *Process) Wait(timeout time.Duration) error {
	select {
	case <-p.exited:
	case <-time.After(timeout):
		return fmt.Errorf("logbook serve (pid %d) did not exit within %s", p.Pid(), timeout)
	}
	p.once.Do(func() { p.err = p.cmd.Wait() })
	return p.err
}

// Plugins returns the pids of the server's children: its plugin
// subprocesses.
func (p *Process) Plugins() []int { return Children(p.Pid()) }

// Kill9 kills the server with SIGKILL and waits up to timeout until it and
// its plugins, which the kernel kills with it (parent-death signal), are
// gone, so their locks are released. Killing a server that already exited
// is not an error.
func (p *Process) Kill9(timeout time.Duration) error {
	plugins := p.Plugins()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	if err := p.Wait(timeout); err != nil && !isSignaled(err) {
		return err
	}
	return WaitGone(plugins, timeout)
}

// isSignaled reports whether err is the exit error of a process a signal
// ended.
func isSignaled(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

// WaitGone waits up to timeout until none of pids runs.
func WaitGone(pids []int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, pid := range pids {
		for Alive(pid) {
			if time.Now().After(deadline) {
				return fmt.Errorf("process %d still runs after %s: %s", pid, timeout, Describe(pid))
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	return nil
}

// Children returns the pids of the processes whose parent is pid.
func Children(pid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		fields := statFields(f)
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			if child, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				out = append(out, child)
			}
		}
	}
	return out
}

// Alive reports whether any thread of process pid still runs. A process
// whose main thread has exited shows as a zombie while its other threads
// are still on their way out, and those threads hold its open files, and
// so its file locks; only a zombie with no thread left but the main one is
// gone.
func Alive(pid int) bool {
	state, threads := status(pid)
	return state != "" && (state != "Z" || threads > 1)
}

// status returns the state letter and the thread count of process pid from
// /proc/<pid>/status; "" when it cannot be read.
func status(pid int) (state string, threads int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "", 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "State:"); ok {
			state, _, _ = strings.Cut(strings.TrimSpace(v), " ")
		}
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			threads, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return state, threads
}

// statFields returns the fields of a /proc/<pid>/stat file after the
// command name (state, ppid, …); nil when it cannot be read. The name is in
// parentheses and may hold spaces, so the fields start after the last ')'.
func statFields(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
}
