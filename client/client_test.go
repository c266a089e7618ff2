package client_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/internal/testserve"
	"github.com/seed-e5e476df/logbook/sdk"
)

// serve starts a `logbook serve` process of the binary the tests built,
// with the configuration file cfg ("" for the embedded default) over a new
// data directory and, when token is not empty, that bearer token; it is
// stopped when the test ends. It returns a client of it.
func serve(t *testing.T, cfg, token string) *client.Client {
	t.Helper()
	c, _ := serveAt(t, cfg, t.TempDir(), token)
	return c
}

// serveAt is serve over the data directory data that also returns the
// server's host:port.
func serveAt(t *testing.T, cfg, data, token string) (*client.Client, string) {
	t.Helper()
	args := []string{"--data", data}
	if cfg != "" {
		args = append(args, "--config", cfg)
	}
	if token != "" {
		file := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(file, []byte(token), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--token-file", file)
	}
	p, err := testserve.Start(logbookBin, time.Minute, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Signal(syscall.SIGTERM); err != nil {
			t.Errorf("stopping logbook serve: %v", err)
		}
		if err := p.Wait(time.Minute); err != nil {
			t.Errorf("logbook serve did not stop cleanly: %v\n%s", err, p.Log())
		}
	})
	c := client.New(p.Addr(), client.Options{Token: token})
	t.Cleanup(c.Close)
	return c, p.Addr()
}

// headless is the repository's headless profile (no compaction).
const headless = "../config/headless.hcl"

func user(i int) events.Input {
	return events.Input{Type: "user/message", SurfaceOp: events.Append(),
		Data: json.RawMessage(fmt.Sprintf(`{"id":"u%d","role":"user","content":[{"type":"text","text":"message %d"}],"source":{"kind":"user"}}`, i, i))}
}

func TestClientRoundTrip(t *testing.T) {
	c := serve(t, headless, "a-token-of-16-bytes")
	ctx := context.Background()
	s, err := c.Create(ctx, "c1", events.CreateOptions{CWD: "/repo", AgentPreset: "coder"})
	if err != nil {
		t.Fatal(err)
	}
	if h, err := s.Header(ctx); err != nil || s.ID() != "c1" || h.ID != "c1" || h.AgentPreset != "coder" || h.CWD != "/repo" {
		t.Fatalf("create: %+v (%v)", h, err)
	}
	if _, err := c.Create(ctx, "c1", events.CreateOptions{}); !errors.Is(err, sdk.CodeSessionAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := c.Create(ctx, "c1", events.CreateOptions{CWD: "relative"}); !errors.Is(err, sdk.CodeSeedInvalid) {
		t.Fatalf("relative cwd: %v", err)
	}
	app, err := s.Append(ctx, events.TurnStart(0), user(0), user(1), user(2))
	if err != nil || len(app) != 4 || app[3].Seq != 3 || app[3].Type != "user/message" {
		t.Fatalf("append: %+v (%v)", app, err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A rejected event: the ones before it stay, the error says how many.
	_, err = s.Append(ctx, user(3), events.Input{Type: "no/such-type", Data: json.RawMessage(`{}`)})
	var ae *client.AppendError
	if !errors.As(err, &ae) || ae.Appended != 1 || !errors.Is(err, sdk.CodeUnknownEventType) {
		t.Fatalf("unknown type: %v", err)
	}
	var se *sdk.Error
	if !errors.As(err, &se) || se.SessionID != "c1" || (se.Seq == nil || *se.Seq != 5) {
		t.Fatalf("the rebuilt error: %#v", se)
	}

	msgs, err := s.Messages(ctx, client.ViewOptions{})
	if err != nil || len(msgs) != 4 || !strings.Contains(string(msgs[3]), `"message 3"`) {
		t.Fatalf("messages: %q (%v)", msgs, err)
	}
	two, nine := sdk.Seq(2), sdk.Seq(9)
	if msgs, err = s.Messages(ctx, client.ViewOptions{At: &two}); err != nil || len(msgs) != 2 {
		t.Fatalf("messages at 2: %q (%v)", msgs, err)
	}
	if _, err = s.Messages(ctx, client.ViewOptions{At: &nine}); !errors.Is(err, sdk.CodeInvalidBoundary) {
		t.Fatalf("messages past the end: %v", err)
	}

	from, to := sdk.Offset(1), sdk.Offset(3)
	var seqs []sdk.Seq
	for ev, err := range s.Read(ctx, client.ReadOptions{From: from, To: &to}) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, ev.Seq)
	}
	if fmt.Sprint(seqs) != "[1 2]" {
		t.Fatalf("events [1, 3): %v", seqs)
	}
	for _, err := range c.Session("missing").Read(ctx, client.ReadOptions{}) {
		if !errors.Is(err, sdk.CodeSessionNotFound) {
			t.Fatalf("events of a missing session: %v", err)
		}
	}

	if _, err := s.Append(ctx, events.TurnEnd(0, events.Completed())); err != nil {
		t.Fatal(err)
	}
	fork, err := c.Fork(ctx, "c1", nil, "c1-fork")
	if err != nil {
		t.Fatal(err)
	}
	if h, err := fork.Header(ctx); err != nil || fork.ID() != "c1-fork" || h.ParentSession != "c1" {
		t.Fatalf("fork: %+v (%v)", h, err)
	}
	if err := fork.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	view, in, err := c.Inspect(ctx, "c1")
	if err != nil || in.Events != 6 || !in.Live || in.OpenTurn != nil || len(in.PendingRepair) != 0 || view.ID() != "c1" {
		t.Fatalf("inspect: %+v (%v)", in, err)
	}
	if h, err := view.Header(ctx); err != nil || h.ID != "c1" {
		t.Fatalf("inspect view's header: %+v (%v)", h, err)
	}
	if err := s.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx); !errors.Is(err, sdk.CodeSessionNotLive) {
		t.Fatalf("second release: %v", err)
	}
	if err := s.Flush(ctx); !errors.Is(err, sdk.CodeSessionNotLive) {
		t.Fatalf("flush of a released session: %v", err)
	}
	resumed, rep, err := c.Resume(ctx, "c1")
	if err != nil || rep.AlreadyLive || rep.NextSeq != 7 || len(rep.Repaired) != 0 || resumed.ID() != "c1" {
		t.Fatalf("resume: %+v (%v)", rep, err)
	}
	if _, rep, err = c.Resume(ctx, "c1"); err != nil || !rep.AlreadyLive {
		t.Fatalf("resume of a live session: %+v (%v)", rep, err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "c1" || !list[0].Live || list[1].ID != "c1-fork" || list[0].Err != nil || list[1].Header.ParentSession != "c1" {
		t.Fatalf("list: %+v (%v)", list, err)
	}
}

// Send coalesces single events into larger messages without reordering
// them, and a held event still reaches the server within its linger.
func TestAppendStreamCoalesces(t *testing.T) {
	c := serve(t, headless, "")
	ctx := context.Background()
	if _, err := c.Create(ctx, "s", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st := c.Session("s").AppendStream(ctx)
	if err := st.Send([]events.Input{events.TurnStart(0)}, false); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, in, err := c.Inspect(ctx, "s")
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
	for i := range 2999 {
		if err := st.Send([]events.Input{user(i)}, i == 1500); err != nil {
			t.Fatal(err)
		}
	}
	res, err := st.CloseAndReceive()
	if err != nil || res.Appended != 3000 || res.NextSeq != 3000 {
		t.Fatalf("close: %+v (%v)", res, err)
	}
	i := 0
	for env, err := range c.Session("s").Read(ctx, client.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if env.Seq != sdk.Seq(i) || i > 0 && !strings.Contains(string(env.Data), fmt.Sprintf(`"message %d"`, i-1)) {
			t.Fatalf("event %d: %s", i, env.Envelope)
		}
		i++
	}
	if i != 3000 {
		t.Fatalf("%d events", i)
	}
	// An empty stream names its session and appends nothing.
	res, err = c.Session("s").AppendStream(ctx).CloseAndReceive()
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
	if !errors.Is(err, sdk.CodePluginUnavailable) || !sdk.Retryable(err) {
		t.Fatalf("list on a closed port: %v", err)
	}
}

// Compact runs the configured summarizer (offline extractive mode in the
// default profile); a headless profile has none.
func TestCompact(t *testing.T) {
	c := serve(t, "", "")
	ctx := context.Background()
	if _, err := c.Create(ctx, "k", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ins []events.Input
	for _, b := range corpus.Session(7, 400) {
		ev, err := events.ParseEvent(b)
		if err != nil {
			t.Fatal(err)
		}
		in := events.Input{Type: ev.Type, Data: ev.Data}
		if ev.SurfaceOp != nil {
			in.SurfaceOp = events.Append()
		}
		ins = append(ins, in)
	}
	for len(ins) > 0 && ins[len(ins)-1].Type != "turn/end" {
		ins = ins[:len(ins)-1] // end on a closed turn: a manual compaction needs one
	}
	if _, err := c.Session("k").Append(ctx, ins...); err != nil {
		t.Fatal(err)
	}
	evs, err := c.Session("k").Compact(ctx, client.CompactOptions{SourceCommandID: "cmd-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 4 || evs[0].Type != "compaction/start" || evs[len(evs)-1].Type != "compaction/end" ||
		!strings.Contains(string(evs[0].Data), `"sourceCommandId":"cmd-1"`) {
		t.Fatalf("compaction events: %d, first %.200s", len(evs), evs[0].Envelope)
	}

	h := serve(t, headless, "")
	if _, err := h.Create(ctx, "k", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Session("k").Compact(ctx, client.CompactOptions{}); !errors.Is(err, sdk.CodeConfigInvalid) {
		t.Fatalf("compact without a compaction block: %v", err)
	}
}

// Data that is not valid UTF-8 cannot travel as the wire's JSON text: the
// client rejects it with JSON_INVALID_UTF8 where the server would, after
// the events before it, which are appended.
func TestInvalidUTF8Data(t *testing.T) {
	c := serve(t, headless, "")
	ctx := context.Background()
	if _, err := c.Create(ctx, "u", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bad := events.Input{Type: "user/message", SurfaceOp: events.Append(), Data: json.RawMessage("{\"id\":\"x\",\"text\":\"a\xffb\"}")}

	_, err := c.Session("u").Append(ctx, events.TurnStart(0), user(0), user(1), bad, user(2))
	var ae *client.AppendError
	var se *sdk.Error
	if !errors.As(err, &ae) || ae.Appended != 3 || !errors.Is(err, sdk.CodeJSONInvalidUTF8) || !errors.As(err, &se) ||
		se.SessionID != "u" || !strings.Contains(se.Detail, "byte offset 19") {
		t.Fatalf("append with invalid UTF-8: %v", err)
	}
	if _, err := c.Session("u").Append(ctx, bad); !errors.As(err, &ae) || ae.Appended != 0 || !errors.Is(err, sdk.CodeJSONInvalidUTF8) {
		t.Fatalf("append of invalid UTF-8 alone: %v", err)
	}
	if _, err := c.Session("missing").Append(ctx, bad); !errors.Is(err, sdk.CodeSessionNotFound) {
		t.Fatalf("append of invalid UTF-8 to a missing session: %v; the server's error comes first", err)
	}

	st := c.Session("u").AppendStream(ctx)
	if err := st.Send([]events.Input{user(2)}, false); err != nil {
		t.Fatal(err)
	}
	if err := st.Send([]events.Input{user(3), bad, user(4)}, false); !errors.Is(err, sdk.CodeJSONInvalidUTF8) {
		t.Fatalf("stream send of invalid UTF-8: %v", err)
	}
	if err := st.Send([]events.Input{user(5)}, false); !errors.Is(err, sdk.CodeJSONInvalidUTF8) {
		t.Fatalf("send on the broken stream: %v", err)
	}
	if _, err := st.CloseAndReceive(); !errors.As(err, &ae) || ae.Appended != 2 || !errors.Is(err, sdk.CodeJSONInvalidUTF8) {
		t.Fatalf("close of the broken stream: %v", err)
	}
	var got []string
	for env, err := range c.Session("u").Read(ctx, client.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		var ev struct{ Data struct{ ID string } }
		if err := json.Unmarshal(env.Envelope, &ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, cmp.Or(ev.Data.ID, env.Type))
	}
	if fmt.Sprint(got) != "[turn/start u0 u1 u2 u3]" {
		t.Fatalf("events %v", got)
	}
}

// The JSON documents come back byte for byte, whatever their literals.
func TestExactData(t *testing.T) {
	c := serve(t, headless, "")
	ctx := context.Background()
	if _, err := c.Create(ctx, "x", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	data := `{"id":"u0","role":"user","content":[{"type":"text","text":"é \"q\" \\ 😀"}],"source":{"kind":"user"},"plugin:x":{"z":1.50,"a":1E3,"pi":3.14159265358979323846264338327950288}}`
	app, err := c.Session("x").Append(ctx, events.TurnStart(0), events.Input{Type: "user/message", SurfaceOp: events.Append(), Data: json.RawMessage(data)})
	if err != nil {
		t.Fatal(err)
	}
	var env struct{ Data json.RawMessage }
	if err := json.Unmarshal(app[1].Envelope, &env); err != nil || string(env.Data) != data || string(app[1].Data) != data {
		t.Fatalf("envelope %s (%v)", app[1].Envelope, err)
	}
	for got, err := range c.Session("x").Read(ctx, client.ReadOptions{From: 1}) {
		if err != nil || string(got.Envelope) != string(app[1].Envelope) {
			t.Fatalf("events: %s (%v)", got.Envelope, err)
		}
	}
}
