package testserve

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// lockChildEnv names the file the test binary, re-executed as a child,
// flocks before its main thread exits alone.
const lockChildEnv = "TESTSERVE_LOCK_CHILD"

func init() {
	if os.Getenv(lockChildEnv) != "" {
		runtime.LockOSThread() // main runs on the main thread, which it ends
	}
}

func TestMain(m *testing.M) {
	if path := os.Getenv(lockChildEnv); path != "" {
		lockAndEndMainThread(path)
	}
	os.Exit(m.Run())
}

// held keeps the child's locked file open (and out of the collector's
// reach) after its main thread is gone.
var held *os.File

// lockAndEndMainThread flocks path, says "locked" and ends the main thread
// only (exit(2), not exit_group(2)): the process lives on in its other
// threads, with the lock.
func lockAndEndMainThread(path string) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	held = f
	fmt.Println("locked")
	syscall.Syscall(syscall.SYS_EXIT, 0, 0, 0)
}

// A process whose main thread has exited while another thread runs shows as
// a zombie, yet it still holds its files and their locks: Alive counts it
// running, LockHolders names it, and both change only once it is killed.
func TestAliveUntilTheLastThreadExits(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "held.lock")
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), lockChildEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		t.Fatalf("child said %q (%v)", line, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for state, _ := status(pid); state != "Z"; state, _ = status(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the child's main thread did not exit within 10 s: %s", Describe(pid))
		}
		time.Sleep(2 * time.Millisecond)
	}
	if !Alive(pid) {
		t.Fatalf("Alive(%d) = false for a zombie main thread whose process still runs: %s", pid, Describe(pid))
	}
	if err := tryLock(path); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Fatalf("the child's lock on %s should still be held: flock says %v", path, err)
	}
	if holders := LockHolders(dir); len(holders) != 1 || !strings.HasPrefix(holders[0], path+": FLOCK WRITE lock of pid "+strconv.Itoa(pid)+": state Z,") {
		t.Fatalf("LockHolders does not name the child %d alone: %q", pid, holders)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := WaitGone([]int{pid}, 10*time.Second); err != nil { // not reaped yet: a zombie
		t.Fatal(err)
	}
	if err := tryLock(path); err != nil {
		t.Fatalf("Alive(%d) = false, but its lock is still held: %v %q", pid, err, LockHolders(dir))
	}
	if holders := LockHolders(dir); holders != nil {
		t.Fatalf("LockHolders after the child is gone: %q", holders)
	}
}

// tryLock flocks path without waiting and releases it at once.
func tryLock(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}
