package engine

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/testserve"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Ready reports one check per plugin and one for the primary; after a
// kill -9 of the plugin it is not ready until the host has restarted the
// plugin, and then ready again.
func TestReadyFollowsPluginRestart(t *testing.T) {
	ctx := context.Background()
	e, err := Start(ctx, config.Headless(config.Overrides{DataDir: t.TempDir()}), Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	notReady := func() []string {
		var out []string
		for _, c := range e.Ready(ctx) {
			if c.Err != nil {
				out = append(out, c.Component+" "+c.Name+": "+c.Err.Error())
			}
		}
		return out
	}
	checks := e.Ready(ctx)
	if len(checks) != 2 || checks[0] != (Check{Component: ComponentPlugin, Name: "jsonl"}) || checks[1] != (Check{Component: ComponentBackend, Name: "jsonl"}) {
		t.Fatalf("checks of a running engine: %+v", checks)
	}
	pl := e.Plugins["jsonl"]
	pid := pl.Pid()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := testserve.WaitGone([]int{pid}, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	// With the process gone, either the host sees it exit (the plugin is
	// down) or the next probe through its dead connection fails (the last
	// one is reused for ProbeTTL), unless a restart has already replaced it.
	for deadline := time.Now().Add(ProbeTTL + ProbeTimeout + 5*time.Second); len(notReady()) == 0 && pl.Restarts() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("ready with the plugin process killed and not restarted")
		}
		time.Sleep(2 * time.Millisecond)
	}
	deadline := time.Now().Add(30 * time.Second)
	for pl.Restarts() == 0 || len(notReady()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("not ready 30 s after the kill: %v", notReady())
		}
		time.Sleep(2 * time.Millisecond)
	}
	if !pl.Up() || pl.Pid() == pid {
		t.Fatalf("after the restart: up %v, pid %d (killed %d)", pl.Up(), pl.Pid(), pid)
	}
}

// A probe error means "not reachable" only when it says the backend did
// not answer.
func TestReadyProbeErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{sdk.Errorf(sdk.CodeSessionNotFound, "jsonl", "no session"), false},
		{sdk.Errorf(sdk.CodeCorruptLog, "jsonl", "damaged"), false},
		{sdk.Errorf(sdk.CodePluginUnavailable, "plugin", "restarting"), true},
		{sdk.Errorf(sdk.CodeIOError, "jsonl", "EIO"), true},
		{sdk.Errorf(sdk.CodeBackendBusy, "sqlite", "locked"), true},
		{fmt.Errorf("probe: %w", context.DeadlineExceeded), true},
		{errors.New("transport closed"), true},
	} {
		if got := unavailable(tc.err); got != tc.want {
			t.Errorf("unavailable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
