package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/testserve"
)

// `logbook why --json ID SEQ` and GET /v1/sessions/{id}/why?seq= render
// one provenance tree with two implementations (the CLI through
// runtime/service, the server through its /v1 handler): for a session
// with prunes and a compaction, every event of the compaction and of the
// turns it covers, and a message with characters HTML would escape, prints
// byte for byte the document the route serves.
func TestWhyJSONMatchesV1(t *testing.T) {
	data := t.TempDir()
	cfg := compactConfig(t, data)
	ok(t, data, conversation(4, 12000, false), "append", "s1", "--config", cfg)
	ok(t, data, "", "prune", "s1", "--config", cfg)
	ok(t, data, "", "compact", "s1", "--config", cfg)
	ok(t, data, `{"type":"turn/start","data":{"turn":5}}
{"type":"user/message","surfaceOp":"append","data":{"id":"u5","role":"user","content":[{"type":"text","text":"is a<b && b>c?"}],"source":{"kind":"user"}}}
`, "append", "s1", "--config", cfg)

	var seqs []int64
	for _, l := range ok(t, data, "", "events", "s1", "--config", cfg).lines() {
		var ev struct {
			Seq  int64
			Type string
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("events printed %q", l)
		}
		switch {
		case strings.HasPrefix(ev.Type, "compaction/"), ev.Type == "tool/result", ev.Type == "user/message", ev.Type == "assistant/message":
			seqs = append(seqs, ev.Seq)
		}
	}
	cli := make(map[int64]string, len(seqs))
	for _, seq := range seqs {
		cli[seq] = ok(t, data, "", "why", "s1", fmt.Sprint(seq), "--json", "--config", cfg).stdout
	}

	p, err := testserve.Start(logbookBin, cmdTimeout, "--config", cfg, "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill9(cmdTimeout) })
	summarized := false
	for _, seq := range seqs {
		resp, err := http.Get(fmt.Sprintf("http://%s/v1/sessions/s1/why?seq=%d", p.Addr(), seq))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET why?seq=%d: %d %s (%v)", seq, resp.StatusCode, body, err)
		}
		if got, want := strings.TrimSuffix(cli[seq], "\n"), strings.TrimSuffix(string(body), "\n"); got != want {
			t.Errorf("why %d:\n logbook why --json: %s\n GET /v1/…/why:      %s", seq, got, want)
		}
		summarized = summarized || strings.Contains(string(body), `"relation":"summarized"`)
	}
	if !summarized {
		t.Error("no tree has a summarized event: the session has no compaction to compare")
	}
}
