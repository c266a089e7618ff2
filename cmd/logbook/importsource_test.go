package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// piFile is a pi v3 session file of id with n user prompts of pad bytes
// each, one line per prompt after the header.
func piFile(id string, n, pad int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"session","version":3,"id":%q,"timestamp":"2026-12-07T16:33:49.277Z","cwd":"/home/dev/project"}`+"\n", id)
	parent := "null"
	text := strings.Repeat("p", pad)
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, `{"type":"message","id":"m%08d","parentId":%s,"timestamp":"2026-12-07T16:33:49.304Z","message":{"role":"user","content":"prompt %d %s","timestamp":1796115602000}}`+"\n", k, parent, k, text)
		parent = fmt.Sprintf(`"m%08d"`, k)
	}
	return b.String()
}

// import --from prints the summary as {files, sessions, events,
// damagedLines} with --json and for people without; --as renames the
// session; a second run appends nothing; export --format writes the file
// back byte for byte; a session of another kind is NOT_IMPORTED.
func TestImportFromPrintsTheSummary(t *testing.T) {
	data := t.TempDir()
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	text := piFile("p1", 3, 10) + "not json\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	out := ok(t, data, "", "import", "--from", "pi", dir, "--as", "mine", "--json").stdout
	var sum struct {
		Files        int      `json:"files"`
		Sessions     []string `json:"sessions"`
		Events       int64    `json:"events"`
		DamagedLines []struct {
			File   string `json:"file"`
			Line   int    `json:"line"`
			Reason string `json:"reason"`
		} `json:"damagedLines"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("--json printed %q: %v", out, err)
	}
	if sum.Files != 1 || len(sum.Sessions) != 1 || sum.Sessions[0] != "mine" || sum.Events < 5 ||
		len(sum.DamagedLines) != 1 || sum.DamagedLines[0].File != file || sum.DamagedLines[0].Line != 5 || sum.DamagedLines[0].Reason == "" {
		t.Fatalf("summary %s", out)
	}
	if got := ok(t, data, "", "export", "mine", "--format", "pi").stdout; got != text {
		t.Fatalf("export --format pi: %q", got)
	}
	human := ok(t, data, "", "import", "--from", "pi", file, "--as", "mine").stdout
	if !strings.Contains(human, "imported 1 file(s): 0 event(s) appended to 0 session(s)") {
		t.Fatalf("second import: %s", human)
	}
	first := ok(t, data, "", "import", "--from", "auto", file).stdout
	if !strings.Contains(first, "pi-p1") || !strings.Contains(first, file+":5: ") {
		t.Fatalf("human summary: %s", first)
	}
	out2 := filepath.Join(dir, "back.jsonl")
	ok(t, data, "", "export", "pi-p1", "--format", "pi", "-o", out2)
	if b, _ := os.ReadFile(out2); string(b) != text {
		t.Fatalf("export -o wrote %q", b)
	}
	ok(t, data, "", "create", "plain")
	wantFail(t, lb(t, data, "", "export", "plain", "--format", "pi"), sdk.CodeNotImported, "export", "plain")
	wantFail(t, lb(t, data, "", "import", "--from", "nope", file), sdk.CodeUsage, "import", "")
}

// `logbook import --from pi` killed with SIGKILL at random moments, then
// run to the end, stores every source line exactly once: the session
// exports back byte-identical to the file, and another run appends
// nothing.
func TestImportFromKilledLosesAndDuplicatesNothing(t *testing.T) {
	data := t.TempDir()
	file := filepath.Join(t.TempDir(), "big.jsonl")
	text := piFile("big", 20000, 200)
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ok(t, data, "", "import", "--from", "pi", file, "--as", "ref")
	whole := time.Since(start)
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("a whole import takes %v; kill points from seed %d", whole, seed)
	kinds := map[string]int{}
	for range 6 {
		kinds[killSourceImport(t, data, file, "big", time.Duration(rng.Int64N(int64(whole))))]++
	}
	ok(t, data, "", "import", "--from", "pi", file, "--as", "big")
	if got := ok(t, data, "", "export", "big", "--format", "pi").stdout; got != text {
		t.Fatalf("after the kills, big exports %d bytes, not the file's %d", len(got), len(text))
	}
	again := ok(t, data, "", "import", "--from", "pi", file, "--as", "big", "--json").stdout
	if !strings.Contains(again, `"events":0`) {
		t.Fatalf("a run after the whole import: %s", again)
	}
	t.Logf("kills: %v", kinds)
}

// killSourceImport starts `logbook import --from pi file --as id` and
// kills it with SIGKILL after delay, unless it ended before.
func killSourceImport(t *testing.T, data, file, id string, delay time.Duration) string {
	t.Helper()
	return killAfter(t, data, id, delay, "import", "--from", "pi", file, "--as", id, "--data", data)
}
