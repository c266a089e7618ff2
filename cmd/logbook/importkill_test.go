package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/sdk"
)

// bigTurns writes n turns of append input (3 events each) whose messages
// carry pad bytes of text.
func bigTurns(n, pad int) string {
	var b strings.Builder
	text := strings.Repeat("x", pad)
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, `{"type":"turn/start","data":{"turn":%d}}`+"\n", k)
		fmt.Fprintf(&b, `{"type":"user/message","data":{"id":"u%d","role":"user","content":[{"type":"text","text":"%s"}],"source":{"kind":"prompt"}},"surfaceOp":"append"}`+"\n", k, text)
		fmt.Fprintf(&b, `{"type":"turn/end","data":{"turn":%d,"reason":{"kind":"completed"}}}`+"\n", k)
	}
	return b.String()
}

// TestImportKilledAtAnyPointIsAllOrNothing: `logbook import` killed with
// SIGKILL at a random moment leaves, on JSONL, SQLite and PostgreSQL,
// either no session under the id (events: SESSION_NOT_FOUND, sessions:
// not listed) or the whole import; a retry of the import then succeeds and
// the session exports to exactly the imported bytes.
func TestImportKilledAtAnyPointIsAllOrNothing(t *testing.T) {
	t.Parallel() // its own data directories and schemas
	src := t.TempDir()
	ok(t, src, bigTurns(4000, 400), "append", "big")
	exported := ok(t, src, "", "export", "big").stdout
	file := filepath.Join(src, "big.jsonl")
	if err := os.WriteFile(file, []byte(exported), 0o600); err != nil {
		t.Fatal(err)
	}
	seed := time.Now().UnixNano()
	t.Logf("kill points from seed %d (a backend's from the stream of its place in jsonl, sqlite, postgres); the export has %d bytes", seed, len(exported))

	// Plugin messages of about 1 MiB: the import travels as a few
	// batches, as a large one does under the default limits.
	const limits = "max_event_bytes = 65536\nrpc_max_bytes = 1114112\n"
	backends := map[string]func(t *testing.T, data string) string{
		"jsonl": func(t *testing.T, data string) string {
			return writeConfig(t, data, "jsonl.hcl", limits+`persistence "jsonl" {}`+"\n")
		},
		"sqlite": func(t *testing.T, data string) string {
			return writeConfig(t, data, "sqlite.hcl", limits+"persistence \"sqlite\" {\n  path = \"s.db\"\n}\n")
		},
		"postgres": func(t *testing.T, data string) string {
			dsn := pgtest.DSN(t)
			return writeConfig(t, data, "pg.hcl", limits+fmt.Sprintf("persistence \"postgres\" {\n  dsn = %q\n  schema = %q\n}\n", dsn, pgtest.Schema(t, dsn)))
		},
	}
	// The backends run in parallel: each has its own data directory (and
	// schema), and its own random stream, since a *rand.Rand is not safe
	// for concurrent use.
	for stream, name := range []string{"jsonl", "sqlite", "postgres"} {
		config := backends[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(stream)))
			data := t.TempDir()
			cfg := config(t, data)
			// How long a whole import takes here (the faster of two; the
			// first runs cold): the kills land within it.
			whole := time.Duration(1 << 62)
			for _, ref := range []string{"ref-1", "ref-2"} {
				start := time.Now()
				ok(t, data, "", "import", file, "--as", ref, "--config", cfg)
				whole = min(whole, time.Since(start))
			}
			kinds := map[string]int{}
			for i := range 8 {
				id := fmt.Sprintf("big-%d", i)
				want := strings.Replace(exported, `"id":"big"`, `"id":"`+id+`"`, 1)
				wantEvents := want[strings.IndexByte(want, '\n')+1:]
				kinds[killImport(t, data, file, id, cfg, time.Duration(rng.Int64N(int64(whole))))]++

				r := lb(t, data, "", "events", id, "--config", cfg)
				complete := false
				switch {
				case r.code == 0 && r.stdout == wantEvents:
					complete = true
					kinds["whole after it"]++
				case r.code == 0:
					t.Fatalf("after the kill, %s holds %d of %d event bytes", id, len(r.stdout), len(wantEvents))
				default:
					wantFail(t, r, sdk.CodeSessionNotFound, "events", id)
					kinds["none after it"]++
				}
				if listed := listedSessions(t, data, cfg); listed[id] && !complete {
					t.Fatalf("after the kill, sessions lists %s, which events does not find", id)
				} else if complete && !listed[id] {
					t.Fatalf("after the kill, %s is stored but sessions does not list it", id)
				}
				ok(t, data, "", "import", file, "--as", id, "--config", cfg)
				if got := ok(t, data, "", "export", id, "--config", cfg).stdout; got != want {
					t.Fatalf("the retried import of %s exports %d bytes, not the %d imported", id, len(got), len(want))
				}
			}
			t.Logf("%s: an import takes %v; of the kills: %v", name, whole, kinds)
		})
	}
}

// killImport starts `logbook import file --as id` and kills it with
// SIGKILL after delay, unless it ended before; it reports which.
func killImport(t *testing.T, data, file, id, cfg string, delay time.Duration) string {
	t.Helper()
	return killAfter(t, data, id, delay, "import", file, "--as", id, "--config", cfg, "--data", data)
}

// killAfter starts logbook with args in data and kills it with SIGKILL
// after delay, unless it ended before (then it must have succeeded); it
// reports which. id names the import in a failure.
func killAfter(t *testing.T, data, id string, delay time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, logbookBin, args...)
	cmd.Dir = data
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the import of %s failed before the kill: %v", id, err)
		}
		return "after it ended"
	case <-time.After(delay):
	}
	_ = cmd.Process.Kill()
	<-done
	return "killed"
}

// listedSessions returns the ids `logbook sessions` lists.
func listedSessions(t *testing.T, data, cfg string) map[string]bool {
	t.Helper()
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(ok(t, data, "", "sessions", "--json", "--config", cfg).stdout), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range list {
		out[e.ID] = true
	}
	return out
}
