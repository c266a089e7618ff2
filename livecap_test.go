package logbook_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Options.MaxLiveSessions caps the live sessions of a runtime: one more
// Create, Resume or Fork fails with TOO_MANY_LIVE_SESSIONS naming the cap,
// and creates or claims nothing; a Release makes room.
func TestMaxLiveSessionsRefusesOneMore(t *testing.T) {
	ctx := context.Background()
	rt, err := logbook.Open(ctx, logbook.Options{DataDir: t.TempDir(), MaxLiveSessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	stored, err := rt.Create(ctx, "stored", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := stored.Release(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := rt.Create(ctx, "a", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	refused := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, sdk.CodeTooManyLiveSessions) || !strings.Contains(err.Error(), "max_live_sessions = 1") {
			t.Errorf("%s past the cap: %v, want TOO_MANY_LIVE_SESSIONS naming max_live_sessions = 1", op, err)
		}
	}
	_, err = rt.Create(ctx, "b", events.CreateOptions{})
	refused("create", err)
	_, _, err = rt.Resume(ctx, "stored")
	refused("resume", err)
	_, err = rt.Fork(ctx, "stored", nil, "child")
	refused("fork", err)
	list, err := rt.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Errorf("sessions after the refusals: %+v, want a and stored", list)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rt.Resume(ctx, "stored"); err != nil {
		t.Errorf("resume after a release made room: %v", err)
	}
}

// A runtime that holds at most one session live: a second Create fails
// until the first is released.
func ExampleOptions_maxLiveSessions() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "logbook-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	rt, err := logbook.Open(ctx, logbook.Options{DataDir: dir, MaxLiveSessions: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
	first, err := rt.Create(ctx, "first", events.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	_, err = rt.Create(ctx, "second", events.CreateOptions{})
	fmt.Println(sdk.CodeOf(err), sdk.Retryable(err))
	if err := first.Release(ctx); err != nil {
		log.Fatal(err)
	}
	_, err = rt.Create(ctx, "second", events.CreateOptions{})
	fmt.Println(err)
	// Output:
	// TOO_MANY_LIVE_SESSIONS true
	// <nil>
}
