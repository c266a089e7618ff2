//go:build unix

package pluginrpc

import (
	"errors"
	"syscall"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// A plugin process out of file descriptors fails Describe's count with
// IO_ERROR saying so, instead of answering: the host's readiness probe
// then reports it not ready.
func TestDescriptorsOutOfDescriptorsIsAnError(t *testing.T) {
	limit, open, err := descriptors()
	if err != nil || limit <= 0 || open <= 0 {
		t.Fatalf("descriptors() = %d, %d, %v", limit, open, err)
	}
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	low := was
	low.Cur = 0 // every new descriptor fails with EMFILE
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("cannot lower RLIMIT_NOFILE: %v", err)
	}
	_, _, err = descriptors()
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(err, sdk.CodeIOError) || !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("descriptors() without a descriptor left: %v, want IO_ERROR wrapping EMFILE", err)
	}
}
