package chaos

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seed-e5e476df/logbook/internal/testserve"
)

// cut is how an operation fault interrupts the operation it runs.
type cut int

const (
	uncut      cut = iota // the operation runs to its end
	killCLI               // SIGKILL of the CLI process and its plugins, at a random moment
	killPlugin            // SIGKILL of the CLI's plugin subprocesses only
	killServe             // SIGKILL of serve while it runs the operation (a /v1 route)
	fillDisk              // the tmpfs fills up while the operation writes
	dropCall              // the client drops its /v1 call (cancels its context): serve lives on
)

func (c cut) String() string {
	return [...]string{"uncut", "cli-kill", "plugin-kill", "serve-kill", "disk-full", "drop-call"}[c]
}

// opRun is what one CLI run of an operation did.
type opRun struct {
	stdout, stderr string
	err            error
	killed         bool          // the planned kill landed before the process ended
	took           time.Duration // from start to exit
}

// failed reports whether the run ended with an error (a kill included).
func (r opRun) failed() bool { return r.err != nil }

// runKilled runs the logbook CLI with args (global flags included) in a
// process group of its own. With killCLI or killPlugin it sends SIGKILL,
// after delay, to the whole group or to the CLI's plugin subprocesses
// only; the CLI's plugins die with it (they are started with a parent
// death signal).
func runKilled(ctx context.Context, how cut, delay time.Duration, stdin string, args ...string) opRun {
	ctx, cancel := context.WithTimeout(ctx, cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, logbookBin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return opRun{err: err}
	}
	done := make(chan struct{})
	landed := make(chan bool, 1)
	go func() {
		if how != killCLI && how != killPlugin {
			landed <- false
			return
		}
		select {
		case <-done:
			landed <- false
			return
		case <-time.After(delay):
		}
		pid := cmd.Process.Pid
		if how == killCLI {
			landed <- syscall.Kill(-pid, syscall.SIGKILL) == nil
			return
		}
		kids := testserve.Children(pid)
		for _, k := range kids {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
		landed <- len(kids) > 0
	}()
	err := cmd.Wait()
	took := time.Since(start)
	close(done)
	killed := <-landed
	var ee *exec.ExitError
	if how == killCLI && killed && !(errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled()) {
		killed = false // it had exited already
	}
	// The group may still hold plugins of a killed CLI for a moment.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	return opRun{stdout: out.String(), stderr: errb.String(), err: err, killed: killed, took: took}
}

// persistencePlugins returns the plugin subprocesses of pids that are not
// the summarizer: a kill meant for the storage path spares it.
func persistencePlugins(pids []int) []int {
	var out []int
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && bytes.HasSuffix(bytes.TrimRight(b, "\x00"), []byte("compactor-summary")) {
			continue
		}
		out = append(out, pid)
	}
	return out
}
