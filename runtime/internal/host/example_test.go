package host_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/testbin"
	"github.com/seed-e5e476df/logbook/runtime/internal/engine"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// logbookBin is the logbook binary the engine re-execs for its plugins.
var logbookBin string

func TestMain(m *testing.M) { testbin.Main(m, &logbookBin) }

// printer is a tail's sink that prints each event's data.
type printer struct{}

func (printer) Event(e session.Event) error { fmt.Printf("%s\n", e.DataView().Bytes()); return nil }

func (printer) Flush() error { return nil }

// A host creates and holds a session, a second Acquire finds it live, Tail
// reads its log, and ReleaseAll flushes and releases it.
func Example() {
	ctx := context.Background()
	cfg, err := config.Parse([]byte(`persistence "memory" {}`), "example.hcl")
	if err != nil {
		fmt.Println(err)
		return
	}
	e, err := engine.Start(ctx, cfg, engine.Options{Executable: logbookBin})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close(ctx)
	h := host.New(e, hclog.NewNullLogger())
	sess, err := h.Create(ctx, store.CreateOptions{ID: "s1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := sess.Append(ctx, session.AppendInput{Type: "app/note", Ignorable: true, Data: []byte(`{"n":1.0e0}`)}); err != nil {
		fmt.Println(err)
		return
	}
	o, _ := h.Acquire(ctx, "s1")
	fmt.Println("already live:", o.AlreadyLive)
	_ = h.Tail(ctx, host.TailRequest{ID: "s1", End: 1 << 53}, printer{})
	fmt.Println("released:", h.ReleaseAll(ctx) == nil)
	// Output:
	// already live: true
	// {"n":1.0e0}
	// released: true
}

// A read-only host reads what another host stored and refuses every write
// with SESSION_READ_ONLY.
func ExampleNewReadOnly() {
	ctx := context.Background()
	cfg, err := config.Parse([]byte(`persistence "memory" {}`), "example.hcl")
	if err != nil {
		fmt.Println(err)
		return
	}
	e, err := engine.Start(ctx, cfg, engine.Options{Executable: logbookBin})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close(ctx)
	writer := host.New(e, hclog.NewNullLogger())
	if _, err := writer.Create(ctx, store.CreateOptions{ID: "s1"}); err != nil {
		fmt.Println(err)
		return
	}
	if err := writer.ReleaseAll(ctx); err != nil {
		fmt.Println(err)
		return
	}
	ro := host.NewReadOnly(e, hclog.NewNullLogger())
	if sess, err := ro.At(ctx, "s1", nil); err == nil {
		fmt.Println("read s1:", sess.Len(), "events")
	}
	_, err = ro.Acquire(ctx, "s1")
	fmt.Println("open:", sdk.CodeOf(err))
	_, err = ro.Create(ctx, store.CreateOptions{ID: "s2"})
	fmt.Println("create:", sdk.CodeOf(err))
	_, err = ro.Fork(ctx, store.ForkRequest{SourceID: "s1"})
	fmt.Println("fork:", sdk.CodeOf(err))
	fmt.Println("release:", sdk.CodeOf(ro.Release(ctx, "s1")))
	// Output:
	// read s1: 0 events
	// open: SESSION_READ_ONLY
	// create: SESSION_READ_ONLY
	// fork: SESSION_READ_ONLY
	// release: SESSION_READ_ONLY
}
