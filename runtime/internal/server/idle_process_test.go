package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// waitIdleReleases scrapes p's metrics until logbook_idle_releases_total
// is want, and fails past it or after 30 s.
func waitIdleReleases(t *testing.T, p *serveProcess, want float64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, _ := scrapeServe(t, p).Value("logbook_idle_releases_total")
		if v == want {
			return
		}
		if v > want || time.Now().After(deadline) {
			t.Fatalf("logbook_idle_releases_total = %v, want %v\n%s", v, want, p.log())
		}
	}
}

// A real `logbook serve` with idle_release = 1s releases a session no
// request used for a second: a CLI `logbook append` of it then succeeds
// (serve no longer holds its write claim), and serve's next request
// resumes it with the CLI's events. An append stream in flight keeps its
// session all the while, however long it stays idle between sends.
func TestServeReleasesIdleSessions(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfg := writeConfig(t, "persistence \"jsonl\" {}\nserve {\n  idle_release = \"1s\"\n}\n")
	p := startServe(t, data, "--config", cfg)
	c := client.New(p.addr, client.Options{})
	defer c.Close()
	ctx := context.Background()

	if _, err := c.Create(ctx, "streamed", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stream := c.Session("streamed").AppendStream(ctx)
	if err := stream.Send([]events.Input{events.TurnStart(1), userInput("s1", "one")}, true); err != nil {
		t.Fatal(err)
	}
	idle, err := c.Create(ctx, "idle", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := idle.Append(ctx, events.TurnStart(1), userInput("u1", "before")); err != nil {
		t.Fatal(err)
	}

	// "idle" is released a second after its last request; "streamed",
	// idle longer but inside a stream in flight, is not.
	waitIdleReleases(t, p, 1)
	cli := exec.Command(logbookBin, "append", "idle", "-", "--data", data, "--config", cfg)
	// Its resume closes turn 1, left open; the CLI writes a whole turn.
	cli.Stdin = bytes.NewReader([]byte(`{"type":"turn/start","data":{"turn":2}}` + "\n" +
		`{"type":"user/message","data":` + string(userData("u2", "from the CLI")) + `,"surfaceOp":"append"}` + "\n" +
		`{"type":"turn/end","data":{"turn":2,"reason":{"kind":"completed"}}}` + "\n"))
	if out, err := cli.CombinedOutput(); err != nil {
		t.Fatalf("logbook append of the released session: %v\n%s", err, out)
	}

	if err := stream.Send([]events.Input{userInput("s2", "two")}, true); err != nil {
		t.Fatalf("the open stream's session was released under it: %v", err)
	}
	if _, err := stream.CloseAndReceive(); err != nil {
		t.Fatalf("the open stream: %v", err)
	}

	evs, err := c.Session("idle").Append(ctx, events.TurnStart(3), userInput("u3", "after"))
	if err != nil {
		t.Fatalf("serve resuming the released session: %v", err)
	}
	all, err := c.Session("idle").Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range all {
		if e.Type == "user/message" {
			texts = append(texts, string(e.Data))
		}
	}
	if len(evs) != 2 || len(texts) != 3 {
		t.Fatalf("after the CLI's append and serve's resume: %d user messages %v", len(texts), texts)
	}
}

// A real `logbook serve` with idle_release = 1s: once it released a
// session for idleness, the client's flush of it answers 200 with the
// backends' durable seq at the last event it appended, and its release
// succeeds, over /v1 and Connect alike and however often; an append then
// resumes it. A session the client released itself stays
// SESSION_NOT_LIVE to a flush.
func TestServeFlushAndReleaseOfAnIdleReleasedSession(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, "persistence \"jsonl\" {}\nserve {\n  idle_release = \"1s\"\n}\n")
	p := startServe(t, filepath.Join(dir, "data"), "--config", cfg)
	r := &running{addr: p.addr, url: "http://" + p.addr}
	c := client.New(p.addr, client.Options{})
	defer c.Close()
	ctx := context.Background()

	s, err := c.Create(ctx, "thinking", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.Append(ctx, events.TurnStart(1), userInput("u1", "before"), userInput("u2", "the long tool run"))
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1].Seq
	waitIdleReleases(t, p, 1)

	flushV1 := func(when string) {
		t.Helper()
		code, body := v1(t, r, http.MethodPost, "/v1/sessions/thinking/flush", "")
		var got struct {
			Participated bool `json:"participated"`
			Backends     []struct {
				Name       string     `json:"name"`
				DurableSeq sdk.Cursor `json:"durableSeq"`
			} `json:"backends"`
		}
		if code != http.StatusOK {
			t.Fatalf("/v1 flush %s: %d %s", when, code, body)
		}
		if err := json.Unmarshal(body, &got); err != nil || !got.Participated || len(got.Backends) != 1 || got.Backends[0].DurableSeq != sdk.Cursor(last) {
			t.Fatalf("/v1 flush %s: %s (%v), want the jsonl backend durable at seq %d", when, body, err, last)
		}
	}
	flushV1("after the idle release")
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Connect Flush after the idle release: %v", err)
	}
	if code, body := v1(t, r, http.MethodPost, "/v1/sessions/thinking/release", ""); code != http.StatusNoContent {
		t.Fatalf("/v1 release after the idle release: %d %s", code, body)
	}
	if err := s.Release(ctx); err != nil {
		t.Fatalf("Connect Release after the idle release and a release: %v", err)
	}
	flushV1("after the releases")

	more, err := s.Append(ctx, events.TurnStart(2), userInput("u3", "after")) // the resume closed turn 1
	if err != nil {
		t.Fatalf("an append resuming the idle-released session: %v", err)
	}
	if more[0].Seq <= last {
		t.Fatalf("the resumed session appended at seq %d, after %d", more[0].Seq, last)
	}
	if err := s.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); sdk.CodeOf(err) != sdk.CodeSessionNotLive {
		t.Fatalf("Connect Flush after the client's own Release: %v, want SESSION_NOT_LIVE", err)
	}
	if code, body := v1(t, r, http.MethodPost, "/v1/sessions/thinking/flush", ""); !strings.Contains(string(body), "SESSION_NOT_LIVE") {
		t.Fatalf("/v1 flush after the client's own release: %d %s, want SESSION_NOT_LIVE", code, body)
	}
}
