package testserve

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// LockHolders describes the file locks the kernel holds on files under dir
// (from /proc/locks), one line each: the file, the kind of lock and the
// process that owns it, with its state, thread count, parent and command
// line; none when nothing there is locked. A test failing on a lock it
// expected free can say who holds it.
func LockHolders(dir string) []string {
	files := map[string]string{} // "maj:min:inode" as /proc/locks prints it → path
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				files[fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)] = path
			}
		}
		return nil
	})
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		return []string{"reading /proc/locks: " + err.Error()}
	}
	var out []string
	for _, line := range strings.Split(string(locks), "\n") {
		// "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF"; a waiter has "->" after the number.
		f := strings.Fields(strings.Replace(line, "->", "", 1))
		if len(f) < 6 {
			continue
		}
		path, ok := files[f[5]]
		if !ok {
			continue
		}
		waits := ""
		if strings.Contains(line, "->") {
			waits = " (waiting)"
		}
		pid, _ := strconv.Atoi(f[4])
		out = append(out, fmt.Sprintf("%s: %s %s lock%s of pid %d: %s", path, f[1], f[3], waits, pid, Describe(pid)))
	}
	return out
}

// Describe says what process pid is: its state and thread count, its
// parent and its command line, or that it is gone.
func Describe(pid int) string {
	state, threads := status(pid)
	if state == "" {
		return "gone"
	}
	ppid := "?"
	if f := statFields("/proc/" + strconv.Itoa(pid) + "/stat"); len(f) > 1 {
		ppid = f[1]
	}
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return fmt.Sprintf("state %s, %d threads, parent %s, %q", state, threads, ppid, string(bytes.TrimRight(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), " ")))
}
