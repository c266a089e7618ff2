package server_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
)

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

	if _, err := c.Create(ctx, "streamed"); err != nil {
		t.Fatal(err)
	}
	stream := c.Session("streamed").AppendStream(ctx)
	if err := stream.Send([]events.Input{userInput("s1", "one")}, true); err != nil {
		t.Fatal(err)
	}
	idle, err := c.Create(ctx, "idle")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := idle.Append(ctx, userInput("u1", "before")); err != nil {
		t.Fatal(err)
	}

	// "idle" is released a second after its last request; "streamed",
	// idle longer but inside a stream in flight, is not.
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, _ := scrapeServe(t, p).Value("logbook_idle_releases_total")
		if v == 1 {
			break
		}
		if v > 1 || time.Now().After(deadline) {
			t.Fatalf("logbook_idle_releases_total = %v, want 1 (the session in the open stream kept)\n%s", v, p.log())
		}
	}
	cli := exec.Command(logbookBin, "append", "idle", "-", "--data", data, "--config", cfg)
	cli.Stdin = bytes.NewReader([]byte(`{"type":"user/message","data":` + string(userData("u2", "from the CLI")) + `,"surfaceOp":"append"}` + "\n"))
	if out, err := cli.CombinedOutput(); err != nil {
		t.Fatalf("logbook append of the released session: %v\n%s", err, out)
	}

	if err := stream.Send([]events.Input{userInput("s2", "two")}, true); err != nil {
		t.Fatalf("the open stream's session was released under it: %v", err)
	}
	if _, err := stream.CloseAndReceive(); err != nil {
		t.Fatalf("the open stream: %v", err)
	}

	evs, err := c.Session("idle").Append(ctx, userInput("u3", "after"))
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
	if len(evs) != 1 || len(texts) != 3 {
		t.Fatalf("after the CLI's append and serve's resume: %d user messages %v", len(texts), texts)
	}
}
