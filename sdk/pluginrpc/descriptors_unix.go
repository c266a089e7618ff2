//go:build unix

package pluginrpc

import (
	"errors"
	"os"
	"runtime"
	"syscall"

	"github.com/seed-e5e476df/logbook/sdk"
)

// descriptors returns this process's limit on open file descriptors
// (RLIMIT_NOFILE; the Go runtime raised the soft limit to the hard one at
// start) and how many are open, counted by listing the descriptor table:
// that takes a descriptor, so a process that has none left fails with
// IO_ERROR instead of answering. A platform without a descriptor table
// to list reports the limit and 0 open.
func descriptors() (limit, open int64, err error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, nil // unknown: nothing to check against
	}
	limit = int64(min(rl.Cur, 1<<62))
	dir := "/dev/fd"
	if runtime.GOOS == "linux" {
		dir = "/proc/self/fd"
	}
	names, err := readDirNames(dir)
	switch {
	case errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE):
		return 0, 0, &sdk.Error{Code: sdk.CodeIOError, Op: "persistence.Describe",
			Detail: "the plugin process is out of file descriptors; raise its limit (ulimit -n) or lower max_live_sessions", Err: err}
	case err != nil:
		return limit, 0, nil
	}
	return limit, int64(len(names)) - 1, nil // less the one the listing used
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
