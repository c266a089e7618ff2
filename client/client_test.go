package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/internal/testbin"
	"github.com/seed-e5e476df/logbook/runtime/engine"
	"github.com/seed-e5e476df/logbook/runtime/server"
	"github.com/seed-e5e476df/logbook/runtime/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// logbookBin is the logbook binary the engine re-execs for its plugins.
var logbookBin string

func TestMain(m *testing.M) { testbin.Main(m, &logbookBin) }

// serve starts an engine over cfg and a server for it on a loopback port,
// stopped when the test ends, and returns a client of it.
func serve(t *testing.T, cfg *config.Config, token string) *client.Client {
	t.Helper()
	c, _ := serveAt(t, cfg, token)
	return c
}

// serveAt is serve that also returns the server's host:port.
func serveAt(t *testing.T, cfg *config.Config, token string) (*client.Client, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e, err := engine.Start(ctx, cfg, engine.Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(e, server.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("shutdown: %v", err)
		}
		e.Close(context.Background())
	})
	c := client.New(ln.Addr().String(), client.Options{Token: token})
	t.Cleanup(c.Close)
	return c, ln.Addr().String()
}

func headless(t *testing.T) *config.Config {
	return config.Headless(config.Overrides{DataDir: t.TempDir()})
}

func user(i int) client.Input {
	return client.Input{Type: "user/message", SurfaceOp: &client.SurfaceOp{},
		Data: json.RawMessage(fmt.Sprintf(`{"id":"u%d","role":"user","content":[{"type":"text","text":"message %d"}],"source":{"kind":"user"}}`, i, i))}
}

func TestClientRoundTrip(t *testing.T) {
	c := serve(t, headless(t), "a-token-of-16-bytes")
	ctx := context.Background()
	h, err := c.Create(ctx, client.CreateOptions{ID: "c1", CWD: "/repo", AgentPreset: "coder"})
	if err != nil || !strings.Contains(string(h), `"id":"c1"`) || !strings.Contains(string(h), `"agentPreset":"coder"`) {
		t.Fatalf("create: %s (%v)", h, err)
	}
	if _, err := c.Create(ctx, client.CreateOptions{ID: "c1"}); !errors.Is(err, sdk.ErrSessionAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := c.Create(ctx, client.CreateOptions{ID: "c1", CWD: "relative"}); !errors.Is(err, sdk.ErrSeedInvalid) {
		t.Fatalf("relative cwd: %v", err)
	}
	app, err := c.Append(ctx, "c1", []client.Input{user(0), user(1), user(2)}, client.AppendOptions{Flush: true})
	if err != nil || len(app.Envelopes) != 3 || app.Flush == nil || app.Flush.Backends[0].DurableSeq != 2 {
		t.Fatalf("append: %+v (%v)", app, err)
	}
	// A rejected event: the ones before it stay, the error says how many.
	_, err = c.Append(ctx, "c1", []client.Input{user(3), {Type: "no/such-type", Data: json.RawMessage(`{}`)}}, client.AppendOptions{})
	var ae *client.AppendError
	if !errors.As(err, &ae) || ae.Appended != 1 || !errors.Is(err, sdk.ErrUnknownEventType) {
		t.Fatalf("unknown type: %v", err)
	}
	var se *sdk.Error
	if !errors.As(err, &se) || se.SessionID != "c1" || (se.Seq == nil || *se.Seq != 4) {
		t.Fatalf("the rebuilt error: %#v", se)
	}

	msgs, err := c.Messages(ctx, "c1", nil)
	if err != nil || len(msgs) != 4 || !strings.Contains(string(msgs[3]), `"message 3"`) {
		t.Fatalf("messages: %q (%v)", msgs, err)
	}
	at := sdk.Seq(1)
	if msgs, err = c.Messages(ctx, "c1", &at); err != nil || len(msgs) != 2 {
		t.Fatalf("messages at 1: %q (%v)", msgs, err)
	}
	at = 9
	if _, err = c.Messages(ctx, "c1", &at); !errors.Is(err, sdk.ErrInvalidBoundary) {
		t.Fatalf("messages past the end: %v", err)
	}

	from, to := sdk.Offset(1), sdk.Offset(3)
	var seqs []int
	for env, err := range c.Events(ctx, "c1", client.EventsOptions{From: from, To: &to}) {
		if err != nil {
			t.Fatal(err)
		}
		var ev struct{ Seq int }
		_ = json.Unmarshal(env, &ev)
		seqs = append(seqs, ev.Seq)
	}
	if fmt.Sprint(seqs) != "[1 2]" {
		t.Fatalf("events [1, 3): %v", seqs)
	}
	for _, err := range c.Events(ctx, "missing", client.EventsOptions{}) {
		if !errors.Is(err, sdk.ErrSessionNotFound) {
			t.Fatalf("events of a missing session: %v", err)
		}
	}

	fh, err := c.Fork(ctx, client.ForkOptions{SourceID: "c1", ChildID: "c1-fork"})
	if err != nil || !strings.Contains(string(fh), `"parentSession":"c1"`) {
		t.Fatalf("fork: %s (%v)", fh, err)
	}
	if fr, err := c.Flush(ctx, "c1-fork"); err != nil || !fr.Participated {
		t.Fatalf("flush: %+v (%v)", fr, err)
	}
	in, err := c.Inspect(ctx, "c1")
	if err != nil || in.Events != 4 || !in.Live || in.OpenTurn != nil || len(in.PendingRepair) != 0 {
		t.Fatalf("inspect: %+v (%v)", in, err)
	}
	if err := c.Release(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx, "c1"); !errors.Is(err, sdk.ErrSessionNotLive) {
		t.Fatalf("second release: %v", err)
	}
	op, err := c.Open(ctx, "c1")
	if err != nil || op.AlreadyLive || op.NextSeq != 5 || len(op.Repaired) != 0 {
		t.Fatalf("open: %+v (%v)", op, err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "c1" || !list[0].Live || list[1].ID != "c1-fork" || list[0].Err != nil {
		t.Fatalf("list: %+v (%v)", list, err)
	}
}

// Send coalesces single events into larger messages without reordering
// them, and a held event still reaches the server within its linger.
func TestAppendStreamCoalesces(t *testing.T) {
	c := serve(t, headless(t), "")
	ctx := context.Background()
	if _, err := c.Create(ctx, client.CreateOptions{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	st := c.AppendStream(ctx, "s")
	if err := st.Send([]client.Input{user(0)}, false); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		in, err := c.Inspect(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if in.Events == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a held event did not reach the server within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	for i := 1; i < 3000; i++ {
		if err := st.Send([]client.Input{user(i)}, i == 1500); err != nil {
			t.Fatal(err)
		}
	}
	res, err := st.CloseAndReceive()
	if err != nil || res.Appended != 3000 || res.NextSeq != 3000 {
		t.Fatalf("close: %+v (%v)", res, err)
	}
	i := 0
	for env, err := range c.Events(ctx, "s", client.EventsOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(env), fmt.Sprintf(`"seq":%d,`, i)) || !strings.Contains(string(env), fmt.Sprintf(`"message %d"`, i)) {
			t.Fatalf("event %d: %s", i, env)
		}
		i++
	}
	if i != 3000 {
		t.Fatalf("%d events", i)
	}
	// An empty stream names its session and appends nothing.
	res, err = c.AppendStream(ctx, "s").CloseAndReceive()
	if err != nil || res.Appended != 0 || res.NextSeq != 3000 {
		t.Fatalf("empty stream: %+v (%v)", res, err)
	}
}

// Calls that fail without a logbook code carry one all the same: a server
// that is not there is PLUGIN_UNAVAILABLE (retryable).
func TestUnreachableServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := client.New("http://"+addr+"/", client.Options{})
	defer c.Close()
	_, err = c.List(context.Background())
	if !errors.Is(err, sdk.ErrPluginUnavailable) || !sdk.Retryable(err) {
		t.Fatalf("list on a closed port: %v", err)
	}
}

// Compact runs the configured summarizer (offline extractive mode in the
// default profile); a headless profile has none.
func TestCompact(t *testing.T) {
	c := serve(t, config.Default(config.Overrides{DataDir: t.TempDir()}), "")
	ctx := context.Background()
	if _, err := c.Create(ctx, client.CreateOptions{ID: "k"}); err != nil {
		t.Fatal(err)
	}
	var ins []client.Input
	for _, b := range corpus.Session(7, 400) {
		ev, err := session.ParseEnvelope(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		in := client.Input{Type: ev.Type(), Data: ev.Data()}
		if _, ok := ev.SurfaceOp(); ok {
			in.SurfaceOp = &client.SurfaceOp{}
		}
		ins = append(ins, in)
	}
	for len(ins) > 0 && ins[len(ins)-1].Type != "turn/end" {
		ins = ins[:len(ins)-1] // end on a closed turn: a manual compaction needs one
	}
	if _, err := c.Append(ctx, "k", ins, client.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	evs, err := c.Compact(ctx, "k", client.CompactOptions{SourceCommandID: "cmd-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 4 || !strings.Contains(string(evs[0]), `"type":"compaction/start"`) || !strings.Contains(string(evs[len(evs)-1]), `"type":"compaction/end"`) ||
		!strings.Contains(string(evs[0]), `"sourceCommandId":"cmd-1"`) {
		t.Fatalf("compaction events: %d, first %.200s", len(evs), evs[0])
	}

	h := serve(t, headless(t), "")
	if _, err := h.Create(ctx, client.CreateOptions{ID: "k"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Compact(ctx, "k", client.CompactOptions{}); !errors.Is(err, sdk.ErrConfigInvalid) {
		t.Fatalf("compact without a compaction block: %v", err)
	}
}

// Data that is not valid UTF-8 cannot travel as the wire's JSON text: the
// client rejects it with JSON_INVALID_UTF8 where the server would, after
// the events before it, which are appended (and flushed).
func TestInvalidUTF8Data(t *testing.T) {
	c := serve(t, headless(t), "")
	ctx := context.Background()
	if _, err := c.Create(ctx, client.CreateOptions{ID: "u"}); err != nil {
		t.Fatal(err)
	}
	bad := client.Input{Type: "user/message", SurfaceOp: &client.SurfaceOp{}, Data: json.RawMessage("{\"id\":\"x\",\"text\":\"a\xffb\"}")}

	_, err := c.Append(ctx, "u", []client.Input{user(0), user(1), bad, user(2)}, client.AppendOptions{Flush: true})
	var ae *client.AppendError
	var se *sdk.Error
	if !errors.As(err, &ae) || ae.Appended != 2 || !errors.Is(err, sdk.ErrJSONInvalidUTF8) || !errors.As(err, &se) ||
		se.SessionID != "u" || !strings.Contains(se.Detail, "byte offset 19") {
		t.Fatalf("append with invalid UTF-8: %v", err)
	}
	if _, err := c.Append(ctx, "u", []client.Input{bad}, client.AppendOptions{}); !errors.As(err, &ae) || ae.Appended != 0 || !errors.Is(err, sdk.ErrJSONInvalidUTF8) {
		t.Fatalf("append of invalid UTF-8 alone: %v", err)
	}
	if _, err := c.Append(ctx, "missing", []client.Input{bad}, client.AppendOptions{}); !errors.Is(err, sdk.ErrSessionNotFound) {
		t.Fatalf("append of invalid UTF-8 to a missing session: %v; the server's error comes first", err)
	}

	st := c.AppendStream(ctx, "u")
	if err := st.Send([]client.Input{user(2)}, false); err != nil {
		t.Fatal(err)
	}
	if err := st.Send([]client.Input{user(3), bad, user(4)}, false); !errors.Is(err, sdk.ErrJSONInvalidUTF8) {
		t.Fatalf("stream send of invalid UTF-8: %v", err)
	}
	if err := st.Send([]client.Input{user(5)}, false); !errors.Is(err, sdk.ErrJSONInvalidUTF8) {
		t.Fatalf("send on the broken stream: %v", err)
	}
	if _, err := st.CloseAndReceive(); !errors.As(err, &ae) || ae.Appended != 2 || !errors.Is(err, sdk.ErrJSONInvalidUTF8) {
		t.Fatalf("close of the broken stream: %v", err)
	}
	var got []string
	for env, err := range c.Events(ctx, "u", client.EventsOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		var ev struct{ Data struct{ ID string } }
		if err := json.Unmarshal(env, &ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Data.ID)
	}
	if fmt.Sprint(got) != "[u0 u1 u2 u3]" {
		t.Fatalf("events %v", got)
	}
}

// The JSON documents come back byte for byte, whatever their literals.
func TestExactData(t *testing.T) {
	c := serve(t, headless(t), "")
	ctx := context.Background()
	if _, err := c.Create(ctx, client.CreateOptions{ID: "x"}); err != nil {
		t.Fatal(err)
	}
	data := `{"id":"u0","role":"user","content":[{"type":"text","text":"é \"q\" \\ 😀"}],"source":{"kind":"user"},"plugin:x":{"z":1.50,"a":1E3,"pi":3.14159265358979323846264338327950288}}`
	app, err := c.Append(ctx, "x", []client.Input{{Type: "user/message", SurfaceOp: &client.SurfaceOp{}, Data: json.RawMessage(data)}}, client.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var env struct{ Data json.RawMessage }
	if err := json.Unmarshal(app.Envelopes[0], &env); err != nil || string(env.Data) != data {
		t.Fatalf("envelope %s (%v)", app.Envelopes[0], err)
	}
	for got, err := range c.Events(ctx, "x", client.EventsOptions{}) {
		if err != nil || string(got) != string(app.Envelopes[0]) {
			t.Fatalf("events: %s (%v)", got, err)
		}
	}
}
