package chaos

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/klauspost/compress/zstd"
	_ "modernc.org/sqlite" // the SQLite backend's database, damaged behind its back
)

// opSalvage damages a stored session (an import plus two appends) inside
// its committed part and salvages it into a new session, cut by a kill: the
// child must be absent or hold the valid prefix and its session/salvaged
// event, and every salvage artifact must belong to a child that is there.
// The damaged session is deleted afterwards.
func opSalvage(h *harness) {
	ctx, cancel := opsCtx()
	defer cancel()
	src := h.newID("dmg")
	if r := h.cliWith(ctx, "", uncut, 0, "import", h.ops.src, "--as", src); r.err != nil {
		h.t.Fatalf("salvage: importing %s: %v: %s", src, r.err, tail(r.stderr, 1000))
	}
	// Two more appends, each a whole turn; the second's turn/end proves to
	// a plain-lines log that the damage before it was committed.
	for i, in := range []string{
		turnLines(1, []event{{pid: src + "-a", text: filler(200)}, {pid: src + "-b", text: filler(200)}}),
		turnLines(2, []event{{pid: src + "-c", text: filler(200)}}),
	} {
		if r := runKilled(ctx, uncut, 0, in, "--config", h.config, "--data", h.dir, "append", src); r.err != nil {
			h.t.Fatalf("salvage: append %d to %s: %v: %s", i, src, r.err, tail(r.stderr, 1000))
		}
	}
	lines, _, err := h.readLog(ctx, "", src)
	if err != nil {
		h.t.Fatalf("salvage: reading %s: %v", src, err)
	}
	// At most the first turn/start (the import has none): the prefix ends
	// outside a turn, so the child holds no closers.
	first := slices.IndexFunc(lines, func(l string) bool { return typeOf(l) == "turn/start" })
	valid := h.damage(ctx, src, first+1)
	if valid < 0 {
		return
	}
	want := lines[:valid]
	child := h.newID("salv")
	how, delay := h.pickCut("salvage", h.cliCuts()...)
	r := h.cliWith(ctx, "", how, delay, "--json", "salvage", src, "--as", child)
	h.noteTook("salvage", how, r.took, r.err)
	present := h.checkSalvaged(ctx, child, want)
	h.t.Logf("salvage %s of %s (%d valid events; %s after %s): %v; present %v", child, src, valid, how, delay, r.err, present)
	if how == uncut && r.err != nil {
		h.opProblem("salvage", "logbook salvage %s: %v: %s", src, r.err, tail(r.stderr, 1000))
	}
	if !present {
		if r := h.cliWith(ctx, "", uncut, 0, "--json", "salvage", src, "--as", child); r.err != nil {
			h.opProblem("salvage", "the retry of the salvage of %s as %s: %v: %s", src, child, r.err, tail(r.stderr, 1000))
		}
		present = h.checkSalvaged(ctx, child, want)
	}
	// A child a cut salvage left stored may lack its artifact until the
	// next salvage finishes what the kill interrupted.
	pending := ""
	if how != uncut && r.err != nil && h.ops.children[child] != "" {
		pending = child
	}
	h.checkArtifacts(ctx, pending)
	if r := h.cliWith(ctx, "", uncut, 0, "delete", src, "--reason", "chaos: salvaged"); r.err != nil {
		h.opProblem("salvage", "deleting the damaged %s: %v: %s", src, r.err, tail(r.stderr, 1000))
	}
	if present {
		got, _, _ := h.readLog(ctx, "", child)
		h.ops.pool = append(h.ops.pool, &opSession{id: child, lines: got})
	}
}

// checkSalvaged checks a salvage's child: absent (and not listed), or the
// valid prefix want and then one session/salvaged event. It notes the
// child's artifact and reports whether the child is there.
func (h *harness) checkSalvaged(ctx context.Context, child string, want []string) bool {
	lines, found, err := h.readLog(ctx, "", child)
	list, _ := h.listed(ctx, "")
	h.ops.children[child] = ""
	switch {
	case err != nil:
		h.half("salvage", child, "it does not load: %v", err)
		return false
	case !found:
		if list[child] {
			h.half("salvage", child, "it is listed but not found")
		}
		return false
	case len(lines) != len(want)+2 || !slices.Equal(lines[:len(want)], want) || typeOf(lines[len(want)]) != "session/end-seed":
		h.half("salvage", child, "it holds %d events, want the %d valid ones, the end of the seed and a session/salvaged event (%s)", len(lines), len(want), firstDiff(lines, want))
		return false
	}
	var last struct {
		Type string
		Data struct{ Artifact string }
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "session/salvaged" {
		h.half("salvage", child, "its last event is not session/salvaged: %.200s", lines[len(lines)-1])
		return false
	}
	h.ops.children[child] = filepath.Base(last.Data.Artifact)
	return true
}

// withEndSeed returns the events a fork of prefix stores: prefix, then
// the session/end-seed event that closes what the child inherited, at the
// time of the last inherited event.
func withEndSeed(prefix []string) []string {
	var last struct{ Time int64 }
	if len(prefix) > 0 {
		_ = json.Unmarshal([]byte(prefix[len(prefix)-1]), &last)
	}
	end := fmt.Sprintf(`{"seq":%d,"time":%d,"type":"session/end-seed","data":{"inherited":true}}`, len(prefix), last.Time)
	return append(slices.Clone(prefix), end)
}

// typeOf is an envelope's type.
func typeOf(env string) string {
	s, _ := parseEnvelope([]byte(env))
	return s.typ
}

// checkArtifacts checks that every artifact in the salvage directory (not
// its hidden lock and intent files) belongs to a salvaged child that is
// still stored, and that every stored child but pending has its artifact.
func (h *harness) checkArtifacts(ctx context.Context, pending string) {
	dir := filepath.Join(h.dir, ".salvaged")
	if h.b.store == sqliteStore {
		dir = filepath.Join(h.dir, "sessions.db.salvaged")
	}
	names, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		h.opProblem("salvage", "%v", err)
		return
	}
	list, err := h.listed(ctx, "")
	if err != nil {
		h.opProblem("salvage", "%v", err)
		return
	}
	owned := map[string]string{}
	for child, art := range h.ops.children {
		if art != "" && list[child] {
			owned[art] = child
		}
	}
	there := map[string]bool{}
	for _, n := range names {
		there[n.Name()] = true
		if _, ok := owned[n.Name()]; !ok && !strings.HasPrefix(n.Name(), ".") {
			h.opProblem("salvage", "orphan artifact %s: no stored salvaged child names it", filepath.Join(dir, n.Name()))
		}
	}
	for art, child := range owned {
		if !there[art] && child != pending {
			h.half("salvage", child, "its artifact %s is missing", art)
		}
	}
}

// damage damages stored session id inside its committed part, at an event
// from seq 0 to seq last-1 (a zstd log: in a frame that ends before last),
// and returns how many events before the damage stay
// valid; -1 when it could not.
func (h *harness) damage(ctx context.Context, id string, last int) int {
	k := h.rng.IntN(last)
	switch h.b.store {
	case sqliteStore:
		db, err := sql.Open("sqlite", "file:"+filepath.Join(h.dir, "sessions.db")+"?_pragma=busy_timeout(30000)")
		if err == nil {
			defer db.Close()
			_, err = db.ExecContext(ctx, `UPDATE events SET data = 'not json' WHERE session_id = ? AND seq = ?`, id, k)
		}
		if err != nil {
			h.t.Fatalf("salvage: damaging %s in SQLite: %v", id, err)
		}
		return k
	case postgresStore:
		c, err := pgx.Connect(ctx, h.pgDSN)
		if err == nil {
			defer c.Close(ctx)
			_, err = c.Exec(ctx, "UPDATE "+pgx.Identifier{h.schema, "events"}.Sanitize()+` SET envelope = '{"seq":', zstd = false WHERE session_id = $1 AND seq = $2`, id, k)
		}
		if err != nil {
			h.t.Fatalf("salvage: damaging %s in PostgreSQL: %v", id, err)
		}
		return k
	}
	logs, _ := filepath.Glob(filepath.Join(h.dir, id, "events.v*.jsonl*"))
	if len(logs) != 1 {
		h.t.Fatalf("salvage: the logs of %s: %v", id, logs)
	}
	b, err := os.ReadFile(logs[0])
	if err != nil {
		h.t.Fatal(err)
	}
	if strings.HasSuffix(logs[0], ".zst") {
		var ok bool
		if b, k, ok = damageFrame(b, h.rng.IntN(1<<30)); !ok {
			h.t.Logf("salvage: %s has too few frames to damage one with an intact one after it", id)
			return -1
		}
	} else {
		ls := bytes.SplitAfter(b, []byte("\n"))
		line := ls[1+k] // after the header line
		copy(line, bytes.Repeat([]byte("x"), len(line)-1))
	}
	if err := os.WriteFile(logs[0], b, 0o600); err != nil {
		h.t.Fatal(err)
	}
	return k
}

// damageFrame flips a byte in the middle of a data frame of a zstd log
// (not the last, whose damage is a torn tail) picked by pick, and returns
// the log and the number of events before that frame.
func damageFrame(b []byte, pick int) ([]byte, int, bool) {
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
	var starts []int
	for i := 0; ; {
		j := bytes.Index(b[i:], magic)
		if j < 0 {
			break
		}
		starts = append(starts, i+j)
		i += j + 1
	}
	starts = append(starts, len(b))
	dec, err := zstd.NewReader(nil)
	if err != nil {
		return nil, 0, false
	}
	defer dec.Close()
	counts := make([]int, len(starts)-1) // events per frame; frame 0 is the header
	for i := range counts {
		out, err := dec.DecodeAll(b[starts[i]:starts[i+1]], nil)
		if err != nil {
			return nil, 0, false // a magic inside a frame: leave it
		}
		counts[i] = bytes.Count(out, []byte("\n"))
	}
	if len(counts) < 3 {
		return nil, 0, false
	}
	f := 1 + pick%(len(counts)-2) // a data frame before the last
	before := 0
	for _, c := range counts[1:f] {
		before += c
	}
	b[(starts[f]+starts[f+1])/2] ^= 0xff
	return b, before, true
}

// postJSON posts body as application/json and fails on a status other
// than 2xx.
func postJSON(ctx context.Context, u, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return fmt.Errorf("POST %s: %s: %s", u, resp.Status, tail(b.String(), 500))
	}
	return nil
}

// pathEscape escapes an id as one path segment.
func pathEscape(id string) string { return url.PathEscape(id) }
