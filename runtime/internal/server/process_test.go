package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/internal/testserve"
	"github.com/seed-e5e476df/logbook/sdk"
)

// serveProcess is a running `logbook serve` (internal/testserve).
type serveProcess struct {
	*testserve.Process
	addr string
}

// serveTimeout bounds a start and an exit of serve.
const serveTimeout = 60 * time.Second

// startServe runs `logbook serve` on a fresh loopback port over the data
// directory dir (embedded default config: JSONL+zstd, unless args name
// another) and waits until it listens. It is killed when the test ends.
func startServe(t *testing.T, dir string, args ...string) *serveProcess {
	t.Helper()
	p, err := testserve.Start(logbookBin, serveTimeout, append([]string{"--data", dir, "--log-level", "info"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill9(serveTimeout) })
	return &serveProcess{Process: p, addr: p.Addr()}
}

func (p *serveProcess) log() string { return p.Log() }

// wait waits for the process to end, its stderr read to the end first.
func (p *serveProcess) wait(t *testing.T) error {
	t.Helper()
	return p.Wait(serveTimeout)
}

// children returns the pids of the process's children (its plugins).
func children(pid int) []int { return testserve.Children(pid) }

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool { return testserve.Alive(pid) }

// kill9 kills the server with SIGKILL and waits until its plugins, which the
// kernel kills with it (parent-death signal), are gone and their locks
// released.
func (p *serveProcess) kill9(t *testing.T) {
	t.Helper()
	if err := p.Kill9(serveTimeout); err != nil {
		t.Fatalf("%v\n%s", err, p.log())
	}
}

// step is one step of the tool loop: a model call requesting one tool
// call, the call, its result.
func step(k int) []events.Input {
	call := fmt.Sprintf("c%d", k)
	in := func(typ, data string, surface bool) events.Input {
		i := events.Input{Type: typ, Data: []byte(data)}
		if surface {
			i.SurfaceOp = events.Append()
		}
		return i
	}
	return []events.Input{
		in("step/start", fmt.Sprintf(`{"turn":1,"step":%d}`, k), false),
		in("assistant/message", fmt.Sprintf(`{"turn":1,"step":%d,"message":{"id":"a%d","role":"assistant","content":[{"type":"tool-call","id":%q,"name":"ls","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`, k, k, call), true),
		in("tool/call", fmt.Sprintf(`{"turn":1,"step":%d,"callId":%q,"name":"ls","arguments":"{}"}`, k, call), false),
		in("tool/result", fmt.Sprintf(`{"turn":1,"step":%d,"message":{"id":"r%d","role":"tool","toolCallId":%q,"content":[{"type":"text","text":%q}],"source":{"kind":"tool","callId":%q}}}`, k, k, call, strings.Repeat("file.go\n", 100), call), true),
		in("step/end", fmt.Sprintf(`{"turn":1,"step":%d}`, k), false),
	}
}

// kill -9 of a real `logbook serve` during a streaming append: after a
// restart, Inspect shows the open turn and the closers a resume would
// append, without writing; Open (resume) repairs it durably, and every
// acknowledged event is still there.
func TestServeKilledDuringStreamingAppend(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, dir)
	c := client.New(p.addr, client.Options{})
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Create(ctx, "k", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The turn opens and its first tool call starts: acknowledged durable.
	if err := appendFlush(ctx, c, "k", openTurn()...); err != nil {
		t.Fatal(err)
	}
	acked := 5
	if err := appendFlush(ctx, c, "k", events.Input{Type: "tool/result", SurfaceOp: events.Append(),
		Data: []byte(`{"turn":1,"step":1,"message":{"id":"r0","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"a.go"}],"source":{"kind":"tool","callId":"c1"}}}`)}, events.Input{Type: "step/end", Data: []byte(`{"turn":1,"step":1}`)}); err != nil {
		t.Fatal(err)
	}
	acked += 2

	// Stream steps and kill the server mid-stream.
	stream := c.Session("k").AppendStream(ctx)
	sent := make(chan int, 1)
	broken := make(chan error, 1)
	go func() {
		for k := 2; ; k++ {
			// Flush before each tool call runs, as the loop does
			// (docs/architecture.md), so the durable log ends mid-step.
			ev := step(k)
			if err := stream.Send(ev[:2], true); err != nil {
				broken <- err
				return
			}
			if err := stream.Send(ev[2:], false); err != nil {
				broken <- err
				return
			}
			if k == 200 {
				sent <- k
			}
		}
	}()
	select {
	case <-sent:
	case err := <-broken:
		t.Fatalf("the stream broke before the kill: %v\n%s", err, p.log())
	case <-time.After(60 * time.Second):
		t.Fatal("200 steps not sent within 60 s")
	}
	p.kill9(t)
	select {
	case <-broken:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream did not notice the killed server")
	}
	_, _ = stream.CloseAndReceive()

	p = startServe(t, dir)
	c2 := client.New(p.addr, client.Options{})
	defer c2.Close()
	_, in, err := c2.Inspect(ctx, "k")
	if err != nil {
		t.Fatalf("inspect after the kill: %v\n%s", err, p.log())
	}
	if in.OpenTurn == nil || *in.OpenTurn != 1 || len(in.PendingRepair) == 0 || in.Live || in.Events < sdk.Offset(acked) {
		t.Fatalf("inspect after the kill: open turn %v, %d events (%d acknowledged), %d pending closers, live %v",
			in.OpenTurn, in.Events, acked, len(in.PendingRepair), in.Live)
	}
	t.Logf("after the kill: %d events stored, %d closers pending, %d torn bytes", in.Events, len(in.PendingRepair), in.Torn.Bytes)
	last := in.PendingRepair[len(in.PendingRepair)-1]
	if !strings.Contains(string(last.Envelope), `"type":"turn/end","data":{"turn":1,"reason":{"kind":"interrupted"}}`) {
		t.Fatalf("last pending closer %s", last.Envelope)
	}
	// Inspect wrote nothing.
	_, again, err := c2.Inspect(ctx, "k")
	if err != nil || again.Events != in.Events || again.Torn != in.Torn {
		t.Fatalf("a second inspect differs: %+v (%v)", again, err)
	}

	_, op, err := c2.Resume(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if op.AlreadyLive || len(op.Repaired) < len(in.PendingRepair) || op.NextSeq < in.Events+sdk.Offset(len(in.PendingRepair)) {
		t.Fatalf("open: %+v; inspect promised %d closers", op, len(in.PendingRepair))
	}
	for i, want := range in.PendingRepair {
		got := op.Repaired[len(op.Repaired)-len(in.PendingRepair)+i]
		if !sameExceptTime(t, got.Envelope, want.Envelope) {
			t.Fatalf("closer %d: resume wrote %s, inspect showed %s", i, got.Envelope, want.Envelope)
		}
	}
	_, after, err := c2.Inspect(ctx, "k")
	if err != nil || after.OpenTurn != nil || len(after.PendingRepair) != 0 || !after.Live {
		t.Fatalf("inspect after the resume: %+v (%v)", after, err)
	}
	// The repair is durable: the server's flush at open, then a clean stop.
	if err := c2.Session("k").Release(ctx); err != nil {
		t.Fatal(err)
	}
	var types []string
	for ev, err := range c2.Session("k").Read(ctx, client.ReadOptions{From: sdk.Offset(after.Events - 4)}) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
	}
	if types[len(types)-1] != "session/end-seed" || types[len(types)-2] != "turn/end" {
		t.Fatalf("stored tail %v", types)
	}
}

// sameExceptTime compares two envelopes member by member; closers take the
// time of the last stored event, which is the same for both.
func sameExceptTime(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y map[string]json.RawMessage
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return string(x["seq"]) == string(y["seq"]) && string(x["type"]) == string(y["type"]) && string(x["data"]) == string(y["data"])
}

// SIGTERM shuts `logbook serve` down gracefully: exit status 0, and what it
// acknowledged (without a flush) is on disk for the next server.
func TestServeSIGTERM(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, dir)
	c := client.New(p.addr, client.Options{})
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Create(ctx, "t", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	in := []events.Input{events.TurnStart(1)}
	for i := range 98 {
		in = append(in, kib(i, 1024))
	}
	in = append(in, events.TurnEnd(1, events.Completed()))
	if _, err := c.Session("t").Append(ctx, in...); err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t); err != nil {
		t.Fatalf("logbook serve after SIGTERM: %v\n%s", err, p.log())
	}
	if !strings.Contains(p.log(), "sessions_released=1") {
		t.Fatalf("no release logged:\n%s", p.log())
	}
	p = startServe(t, dir)
	c2 := client.New(p.addr, client.Options{})
	defer c2.Close()
	_, got, err := c2.Inspect(ctx, "t")
	if err != nil || got.Events != 100 || got.Torn.Bytes != 0 || got.OpenTurn != nil {
		t.Fatalf("after SIGTERM: %+v (%v)", got, err)
	}
}
