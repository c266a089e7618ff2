package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
)

// An append through a held session's handle (AppendTo, as the session
// service's handles append) is a use: ReleaseIdle leaves the session live
// for another idle period, as it does one a request used.
func TestAppendToKeepsASessionFromTheIdleRelease(t *testing.T) {
	ctx := context.Background()
	h, _ := memoryHost(t)
	o, err := h.Acquire(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	const idle = time.Second
	time.Sleep(idle + idle/2) // the session's last use is now older than idle
	in := events.Input{Type: "app/note", Ignorable: true, Data: []byte(`{"n":1}`)}
	if _, err := h.AppendTo(ctx, o.Session, host.AppendRequest{Inputs: []events.Input{in}}); err != nil {
		t.Fatal(err)
	}
	if n := h.ReleaseIdle(ctx, idle); n != 0 {
		t.Fatalf("ReleaseIdle released %d sessions right after an append to the only one; want 0", n)
	}
	if st, err := h.Stat(ctx, "s"); err != nil || !st.Live {
		t.Fatalf("Stat = %+v, %v; want live", st, err)
	}
}
