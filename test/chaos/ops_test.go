package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The operation faults run an operation besides append — import, delete,
// hold and release-hold, gc, salvage, fork, migrate, compact — through the
// CLI or serve's /v1 routes, as a user would, while the writers append to
// serve, and cut it at a random moment: SIGKILL of the CLI process group
// (the CLI and its plugins) or of the CLI's plugins only, SIGKILL of serve
// during a /v1 call, or a full disk. Then the verifier checks that the
// operation happened in full or not at all, retries it uncut and checks
// again. The sessions they work on are stored ones serve does not hold: the
// pool, filled by importing a generated export.

// opSession is a stored session of the pool.
type opSession struct {
	id     string
	lines  []string // its stored envelopes, as `logbook events` prints them
	held   bool     // under a legal hold
	parent string   // the pool session it was forked from ("" = none)
	// migrated is what the migrate target held of it after the last
	// migrate that ran to its end (nil: nothing yet).
	migrated []string
}

// old reports whether every event of the session is older than the gc
// config's max_age (the pool's imports are; a compaction or a repair
// marker is not).
func (s *opSession) old() bool {
	cutoff := time.Now().Add(-2 * time.Hour).UnixMilli()
	for _, l := range s.lines {
		var v struct{ Time int64 }
		if json.Unmarshal([]byte(l), &v) != nil || v.Time >= cutoff {
			return false
		}
	}
	return true
}

// opState is the operation faults' part of a harness.
type opState struct {
	src      string   // the export the pool's imports read
	big      string   // the export the import faults read: several batches
	bigLines []string // what an import of it stores (nil until one ran)
	bigSize  int64
	pool     []*opSession
	children map[string]string // salvaged child → its artifact's base name ("" = not made)
	took     map[string]time.Duration
	f        findings // what the operation checks found since the last verification

	gcConfig      string // the backend's config plus a retention block
	migrateConfig string // the backend's config plus the migrate target
	targetConfig  string // the migrate target alone
	targetName    string // its persistence block's label
}

// opFaults are the operation kinds, in the order of the summary table.
var opFaults = []fault{
	{"import", cliOnly, always, opImport},
	{"delete", anyStore, always, opDelete},
	{"hold", anyStore, always, opHold},
	{"gc", cliOnly, always, opGC},
	{"salvage", cliOnly, always, opSalvage},
	{"fork", anyStore, always, opFork},
	{"migrate", cliOnly, always, opMigrate},
	{"compact", anyStore, always, opCompact},
}

func anyStore(backend) string { return "" }

func cliOnly(b backend) string {
	if b.store == memoryStore {
		return "a CLI process has a memory store of its own: the operation has no /v1 route"
	}
	return ""
}

// opsCtx bounds one operation fault.
func opsCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 5*cliTimeout)
}

// cliWith runs the CLI over config (the backend's when "") and the data
// directory with a cut.
func (h *harness) cliWith(ctx context.Context, config string, how cut, delay time.Duration, args ...string) opRun {
	if config == "" {
		config = h.config
	}
	return runKilled(ctx, how, delay, "", append([]string{"--config", config, "--data", h.dir}, args...)...)
}

// half notes a half-made session found after an operation of kind.
func (h *harness) half(kind, id, format string, args ...any) {
	h.ops.f.half = append(h.ops.f.half, kind+":"+id)
	h.ops.f.problems = append(h.ops.f.problems, fmt.Sprintf("%s: half-made session %s: %s", kind, id, fmt.Sprintf(format, args...)))
}

// opProblem notes a broken rule of an operation of kind.
func (h *harness) opProblem(kind, format string, args ...any) {
	h.ops.f.problems = append(h.ops.f.problems, kind+": "+fmt.Sprintf(format, args...))
}

// takeOps returns what the operation checks found and forgets it.
func (h *harness) takeOps() findings {
	f := h.ops.f
	h.ops.f = findings{}
	return f
}

// firstGuess is how long an operation is taken to run before a run to the
// end measured it.
const firstGuess = 400 * time.Millisecond

// pickCut chooses how to cut the next operation of kind: uncut or one of
// cuts, at a random moment of the duration of its last run to the end.
func (h *harness) pickCut(kind string, cuts ...cut) (cut, time.Duration) {
	took, ok := h.ops.took[kind]
	if !ok {
		took = firstGuess
	}
	if len(cuts) == 0 {
		return uncut, 0
	}
	i := h.rng.IntN(len(cuts) + 1)
	if i == 0 {
		return uncut, 0
	}
	return cuts[i-1], time.Duration(h.rng.Int64N(int64(took)*6/5 + 1))
}

// noteTook keeps the duration of a run of kind that went to its end.
func (h *harness) noteTook(kind string, how cut, took time.Duration, err error) {
	if how == uncut && err == nil {
		h.ops.took[kind] = took
	}
}

// cliCuts are the cuts of an operation through the CLI.
func (h *harness) cliCuts() []cut { return []cut{killCLI, killPlugin} }

// apiCuts are the cuts of an operation through serve: the client dropping
// its call, and a kill of serve except on the memory backend, whose
// sessions a serve kill takes along.
func (h *harness) apiCuts() []cut {
	if h.b.store == memoryStore {
		return []cut{dropCall}
	}
	return []cut{killServe, dropCall}
}

// viaAPI decides whether the next operation goes through serve's /v1
// routes rather than the CLI: always on the memory backend.
func (h *harness) viaAPI() bool { return h.b.store == memoryStore || h.rng.IntN(2) == 0 }

// api runs call against serve; with killServe it kills serve with SIGKILL
// after delay (and starts it again) while the call runs, and with dropCall
// it cancels the call's context after delay.
func (h *harness) api(kind string, how cut, delay time.Duration, call func(ctx context.Context, c *client.Client) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	c := h.client()
	if how == dropCall {
		drop := time.AfterFunc(delay, cancel)
		defer drop.Stop()
		return call(ctx, c)
	}
	if how != killServe {
		start := time.Now()
		err := call(ctx, c)
		h.noteTook(kind, how, time.Since(start), err)
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- call(ctx, c) }()
	time.Sleep(delay)
	h.restart()
	return <-errc
}

// readLog reads a session's envelopes: with `logbook events` or, on the
// memory backend, from serve. found is false for SESSION_NOT_FOUND.
func (h *harness) readLog(ctx context.Context, config, id string) (lines []string, found bool, err error) {
	if h.b.store == memoryStore {
		for ev, err := range h.client().Session(id).Read(ctx, client.ReadOptions{}) {
			if errors.Is(err, sdk.CodeSessionNotFound) {
				return nil, false, nil
			}
			if err != nil {
				return nil, false, err
			}
			lines = append(lines, string(ev.Envelope))
		}
		return lines, true, nil
	}
	r := h.cliWith(ctx, config, uncut, 0, "events", id)
	if r.err != nil {
		if strings.Contains(r.stderr, string(sdk.CodeSessionNotFound)) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("logbook events %s: %v: %s", id, r.err, tail(r.stderr, 1000))
	}
	return strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"), true, nil
}

// listed returns the ids `logbook sessions` (or serve's List) lists.
func (h *harness) listed(ctx context.Context, config string) (map[string]bool, error) {
	out := map[string]bool{}
	if h.b.store == memoryStore {
		list, err := h.client().List(ctx)
		for _, e := range list {
			out[e.ID] = true
		}
		return out, err
	}
	r := h.cliWith(ctx, config, uncut, 0, "--json", "sessions")
	if r.err != nil {
		return nil, fmt.Errorf("logbook sessions: %v: %s", r.err, tail(r.stderr, 1000))
	}
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		return nil, fmt.Errorf("logbook sessions --json: %v", err)
	}
	for _, e := range list {
		out[e.ID] = true
	}
	return out, nil
}

// snapshot is the session list and, when asked for, the audit log (each
// session's record ops, oldest first), read once for the checks of many
// sessions.
type snapshot struct {
	list  map[string]bool
	audit map[string][]string
}

// snap reads the list of config (the backend's when "") and, with
// withAudit, the backend's audit log.
func (h *harness) snap(ctx context.Context, kind, config string, withAudit bool) snapshot {
	list, err := h.listed(ctx, config)
	if err != nil {
		h.opProblem(kind, "%v", err)
	}
	sn := snapshot{list: list, audit: map[string][]string{}}
	if !withAudit || h.b.store == memoryStore { // the CLI cannot read the memory backend's audit
		return sn
	}
	r := h.cliWith(ctx, "", uncut, 0, "--json", "audit")
	if r.err != nil {
		h.opProblem(kind, "logbook audit: %v: %s", r.err, tail(r.stderr, 1000))
		return sn
	}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var rec struct{ Op, Session string }
		if line != "" && json.Unmarshal([]byte(line), &rec) == nil {
			sn.audit[rec.Session] = append(sn.audit[rec.Session], rec.Op)
		}
	}
	return sn
}

// wholeOrAbsent checks that session id is either absent (not found, not
// listed in sn) or holds one of want (anything else is half-made), and
// reports whether it holds want[0].
func (h *harness) wholeOrAbsent(ctx context.Context, kind, config, id string, sn snapshot, want ...[]string) bool {
	lines, found, err := h.readLog(ctx, config, id)
	switch {
	case err != nil:
		h.half(kind, id, "it does not load: %v", err)
	case !found && sn.list[id]:
		h.half(kind, id, "it is listed but not found")
	case !found:
		return false
	default:
		for _, w := range want {
			if slices.Equal(lines, w) {
				if !sn.list[id] {
					h.opProblem(kind, "session %s loads but is not listed", id)
				}
				return slices.Equal(lines, want[0])
			}
		}
		h.half(kind, id, "it holds %d events, want none or all %d (%s)", len(lines), len(want[0]), firstDiff(lines, want[0]))
	}
	return false
}

// firstDiff describes where got departs from want.
func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("event %d differs: %.120s", i, got[i])
		}
	}
	return "a prefix of the other"
}

// auditOps returns the ops of session id's audit records, oldest first
// (none on the memory backend, whose audit the CLI cannot read).
func (h *harness) auditOps(ctx context.Context, kind, id string) []string {
	if h.b.store == memoryStore {
		return nil
	}
	r := h.cliWith(ctx, "", uncut, 0, "--json", "audit", "--session", id)
	if r.err != nil {
		h.opProblem(kind, "logbook audit --session %s: %v: %s", id, r.err, tail(r.stderr, 1000))
		return nil
	}
	var ops []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var rec struct{ Op string }
		if line != "" && json.Unmarshal([]byte(line), &rec) == nil {
			ops = append(ops, rec.Op)
		}
	}
	return ops
}

// countOp is how many of ops are op.
func countOp(ops []string, op string) int {
	n := 0
	for _, o := range ops {
		if o == op {
			n++
		}
	}
	return n
}

// pool returns the pool session of id, or nil.
func (h *harness) poolSession(id string) *opSession {
	for _, s := range h.ops.pool {
		if s.id == id {
			return s
		}
	}
	return nil
}

// dropPool takes session id out of the pool.
func (h *harness) dropPool(id string) {
	h.ops.pool = slices.DeleteFunc(h.ops.pool, func(s *opSession) bool { return s.id == id })
}

// hasChild reports whether a pool session names s as its parent.
func (h *harness) hasChild(s *opSession) bool {
	return slices.ContainsFunc(h.ops.pool, func(c *opSession) bool { return c.parent == s.id })
}

// pick returns a random pool session that ok accepts, after filling the
// pool; nil when none does.
func (h *harness) pick(ok func(*opSession) bool) *opSession {
	h.fillPool(3)
	var cands []*opSession
	for _, s := range h.ops.pool {
		if ok(s) {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 {
		h.fillPool(len(h.ops.pool) + 1)
		if s := h.ops.pool[len(h.ops.pool)-1]; ok(s) {
			return s
		}
		return nil
	}
	return cands[h.rng.IntN(len(cands))]
}

// fillPool adds sessions to the pool until it holds n: imports of the
// generated export, or sessions made through serve on the memory backend.
func (h *harness) fillPool(n int) {
	ctx, cancel := opsCtx()
	defer cancel()
	for len(h.ops.pool) < n {
		id := h.newID("pool")
		if h.b.store == memoryStore {
			h.makeViaAPI(ctx, id)
		} else if r := h.cliWith(ctx, "", uncut, 0, "import", h.ops.src, "--as", id); r.err != nil {
			h.t.Fatalf("importing %s as %s: %v: %s", h.ops.src, id, r.err, tail(r.stderr, 2000))
		}
		lines, found, err := h.readLog(ctx, "", id)
		if err != nil || !found {
			h.t.Fatalf("reading the new pool session %s: found %v, %v", id, found, err)
		}
		h.ops.pool = append(h.ops.pool, &opSession{id: id, lines: lines})
	}
}

// makeViaAPI makes a stored session of 200 user messages, each in a
// whole turn of its own, through serve (the memory backend's pool).
func (h *harness) makeViaAPI(ctx context.Context, id string) {
	c := h.client()
	s, err := c.Create(ctx, id, events.CreateOptions{})
	if err == nil {
		var ins []events.Input
		for i := range 200 {
			e := event{pid: fmt.Sprintf("%s-%d", id, i), text: filler(100 + h.rng.IntN(300))}
			ins = append(ins, inTurn(i+1, []event{e})...)
		}
		_, err = s.Append(ctx, ins...)
	}
	if err == nil {
		err = s.Release(ctx)
	}
	if err != nil {
		h.t.Fatalf("making the pool session %s through serve: %v", id, err)
	}
}

// setupOps writes the generated export and the operation configs.
func (h *harness) setupOps() {
	h.ops.children = map[string]string{}
	h.ops.took = map[string]time.Duration{}
	if h.b.store == memoryStore {
		return
	}
	dir := h.t.TempDir()
	base, err := os.ReadFile(h.config)
	if err != nil {
		h.t.Fatal(err)
	}
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			h.t.Fatal(err)
		}
		return path
	}
	h.ops.gcConfig = write("gc.hcl", string(base)+"\nretention {\n  max_age = \"1h\"\n}\n")
	// The target is off the tmpfs: a copy of every session would fill it.
	target := `persistence "sqlite" {` + "\n  path = " + hclString(filepath.Join(dir, "migrate.db")) + "\n}\n"
	h.ops.targetName = "sqlite"
	if h.b.store != jsonlStore {
		target = `persistence "jsonl" {` + "\n  root = " + hclString(filepath.Join(dir, "migrate")) + "\n}\n"
		h.ops.targetName = "jsonl"
	}
	h.ops.migrateConfig = write("migrate.hcl", string(base)+"\n"+target)
	h.ops.targetConfig = write("target.hcl", target)
	h.ops.src = filepath.Join(dir, "export.jsonl")
	h.writeExport(h.ops.src, 800+h.rng.IntN(600))
	h.ops.big = filepath.Join(dir, "big.jsonl")
	h.ops.bigSize = h.writeExport(h.ops.big, 5000+h.rng.IntN(3000))
}

// hclString quotes s as an HCL string.
func hclString(s string) string { b, _ := json.Marshal(s); return string(b) }

// writeExport writes an export of n user messages of 100–600 bytes of
// little-compressible text, all of them from 2023 (older than any max_age
// gc is given), and returns its size.
func (h *harness) writeExport(path string, n int) int64 {
	const t0 = 1700000000000
	var b strings.Builder
	b.WriteString(`{"type":"session","version":1,"id":"chaos-export","createdAt":1700000000000,"isSeeded":false,"delegationDepth":0,"cwd":"/"}` + "\n")
	for i := range n {
		text := make([]byte, 100+h.rng.IntN(500))
		for j := range text {
			text[j] = "abcdefghijklmnopqrstuvwxyz      "[h.rng.IntN(32)]
		}
		e := event{pid: fmt.Sprintf("export-%d", i), text: string(text)}
		fmt.Fprintf(&b, `{"seq":%d,"time":%d,"type":"user/message","data":%s,"surfaceOp":"append"}`+"\n", i, t0+int64(i)*1000, e.input().Data)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		h.t.Fatal(err)
	}
	return int64(b.Len())
}

// squeeze fills the tmpfs but for about free bytes and returns the
// function that frees it again.
func (h *harness) squeeze(free int64) func() {
	ballast := filepath.Join(h.root, "ballast")
	f, err := os.OpenFile(ballast, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		h.t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	var size int64
	for {
		n, err := f.Write(chunk)
		size += int64(n)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			h.t.Fatalf("filling %s: %v", ballast, err)
		}
	}
	if err := f.Truncate(max(0, size-free)); err != nil {
		h.t.Fatal(err)
	}
	return func() {
		f.Close()
		if err := os.Remove(ballast); err != nil {
			h.t.Fatal(err)
		}
	}
}

// opImport imports the generated export under a new id, cut by a kill or a
// full disk: the id must then be absent or hold the whole import, and a
// retry must succeed (also one of an import that did complete).
func opImport(h *harness) {
	ctx, cancel := opsCtx()
	defer cancel()
	if h.ops.bigLines == nil { // an import to the end tells what one stores
		id := h.newID("imp")
		if r := h.cliWith(ctx, "", uncut, 0, "import", h.ops.big, "--as", id); r.err != nil {
			h.t.Fatalf("import: %v: %s", r.err, tail(r.stderr, 1000))
		}
		lines, _, err := h.readLog(ctx, "", id)
		if err != nil {
			h.t.Fatal(err)
		}
		h.ops.bigLines = lines
		h.dropImport(ctx, id)
	}
	id := h.newID("imp")
	cuts := h.cliCuts()
	if h.mounted && h.b.store != postgresStore {
		cuts = append(cuts, fillDisk)
	}
	how, delay := h.pickCut("import", cuts...)
	var r opRun
	if how == fillDisk {
		release := h.squeeze(h.rng.Int64N(h.ops.bigSize / 2))
		r = h.cliWith(ctx, "", uncut, 0, "import", h.ops.big, "--as", id)
		release()
	} else {
		r = h.cliWith(ctx, "", how, delay, "import", h.ops.big, "--as", id)
	}
	h.noteTook("import", how, r.took, r.err)
	whole := h.wholeOrAbsent(ctx, "import", "", id, h.snap(ctx, "import", "", false), h.ops.bigLines)
	h.t.Logf("import %s (%s after %s): failed %v, killed %v, whole %v", id, how, delay, r.failed(), r.killed, whole)
	if r.failed() || !whole {
		retry := h.cliWith(ctx, "", uncut, 0, "import", h.ops.big, "--as", id)
		if retry.err != nil {
			h.opProblem("import", "the retry of the import of %s (after %s; it was there in full: %v) failed: %v: %s", id, how, whole, retry.err, tail(retry.stderr, 1000))
		}
		if !h.wholeOrAbsent(ctx, "import", "", id, h.snap(ctx, "import", "", false), h.ops.bigLines) {
			h.opProblem("import", "after the retry %s is not there in full", id)
			return
		}
	}
	h.dropImport(ctx, id)
}

// dropImport deletes an import fault's session: too large for the pool,
// whose sessions every check reads.
func (h *harness) dropImport(ctx context.Context, id string) {
	if r := h.cliWith(ctx, "", uncut, 0, "delete", id, "--reason", "chaos: imported"); r.err != nil {
		h.opProblem("import", "deleting the import %s: %v: %s", id, r.err, tail(r.stderr, 1000))
	}
}

// opDelete deletes a pool session through the CLI or DELETE /v1/sessions,
// cut by a kill: the session must be there in full with no delete in its
// audit, or gone with exactly one; a retry must finish it.
func opDelete(h *harness) {
	ctx, cancel := opsCtx()
	defer cancel()
	s := h.pick(func(s *opSession) bool { return !s.held })
	if s == nil {
		return
	}
	api := h.viaAPI()
	del := func(how cut, delay time.Duration) (cut, error) {
		if api {
			return how, h.api("delete/api", how, delay, func(ctx context.Context, c *client.Client) error {
				return c.Session(s.id).Delete(ctx, client.AuditOptions{Reason: "chaos"})
			})
		}
		r := h.cliWith(ctx, "", how, delay, "delete", s.id, "--reason", "chaos")
		h.noteTook("delete", how, r.took, r.err)
		return how, r.err
	}
	var how cut
	var delay time.Duration
	if api {
		how, delay = h.pickCut("delete/api", h.apiCuts()...)
	} else {
		how, delay = h.pickCut("delete", h.cliCuts()...)
	}
	_, err := del(how, delay)
	present := h.checkDelete(ctx, "delete", s, h.snap(ctx, "delete", "", true))
	h.t.Logf("delete %s (api %v, %s after %s): %v; present %v", s.id, api, how, delay, err, present)
	if present {
		if how == uncut && err == nil {
			h.opProblem("delete", "delete of %s succeeded but the session is still there", s.id)
		}
		if _, err := del(uncut, 0); err != nil {
			h.opProblem("delete", "the retry of the delete of %s failed: %v", s.id, err)
		}
		if h.checkDelete(ctx, "delete", s, h.snap(ctx, "delete", "", true)) {
			h.opProblem("delete", "after the retry %s is still there", s.id)
		}
	}
	h.dropPool(s.id)
}

// checkDelete checks a pool session after a delete: there in full and no
// delete in the audit, or gone (also from the list) and exactly one; it
// reports whether it is there.
func (h *harness) checkDelete(ctx context.Context, kind string, s *opSession, sn snapshot) bool {
	present := h.wholeOrAbsent(ctx, kind, "", s.id, sn, s.lines)
	if h.b.store == memoryStore {
		return present
	}
	ops := sn.audit[s.id]
	switch n := countOp(ops, "delete"); {
	case present && n != 0:
		h.opProblem(kind, "session %s is there in full, but its audit records %d deletes: %v", s.id, n, ops)
	case !present && n != 1:
		h.opProblem(kind, "session %s is gone, but its audit records %d deletes (want 1): %v", s.id, n, ops)
	}
	return present
}

// opHold puts a pool session under a legal hold, or lifts its hold,
// through the CLI or the /v1 route, cut by a kill: the hold state (what
// gc --dry-run keeps as held) and the audit's last hold record must agree;
// the retry must leave the state asked for.
func opHold(h *harness) {
	ctx, cancel := opsCtx()
	defer cancel()
	s := h.pick(func(s *opSession) bool {
		return h.b.store == memoryStore || (s.old() && !h.hasChild(s)) // gc --dry-run tells its hold
	})
	if s == nil {
		return
	}
	op := "hold"
	if s.held {
		op = "release-hold"
	}
	api := h.viaAPI()
	kind := op
	var how cut
	var delay time.Duration
	if api {
		kind += "/api"
		how, delay = h.pickCut(kind, h.apiCuts()...)
	} else {
		how, delay = h.pickCut(kind, h.cliCuts()...)
	}
	run := func(how cut, delay time.Duration) error {
		if api {
			return h.api(kind, how, delay, func(ctx context.Context, c *client.Client) error { return h.holdRoute(ctx, op, s.id) })
		}
		r := h.cliWith(ctx, "", how, delay, op, s.id, "--reason", "chaos")
		h.noteTook(kind, how, r.took, r.err)
		if r.err != nil {
			return fmt.Errorf("%v: %s", r.err, tail(r.stderr, 500))
		}
		return nil
	}
	err := run(how, delay)
	held, known := h.checkHold(ctx, s)
	h.t.Logf("%s %s (api %v, %s after %s): %v; held %v (known %v)", op, s.id, api, how, delay, err, held, known)
	if how == uncut && err != nil {
		h.opProblem("hold", "%s of %s: %v", op, s.id, err)
	}
	if err := run(uncut, 0); err != nil {
		h.opProblem("hold", "the retry of %s of %s: %v", op, s.id, err)
	}
	s.held = op == "hold"
	if held, known := h.checkHold(ctx, s); known && held != s.held {
		h.opProblem("hold", "after %s of %s ran to its end, gc --dry-run says held %v", op, s.id, held)
	}
	if h.b.store == memoryStore && s.held {
		err := h.client().Session(s.id).Delete(ctx, client.AuditOptions{Reason: "chaos: must be refused"})
		if !isCode(err, sdk.CodeSessionHeld) {
			h.opProblem("hold", "DELETE of the held %s: %v (want SESSION_HELD)", s.id, err)
		}
	}
}

// holdRoute posts to /v1/sessions/{id}/hold or /release-hold.
func (h *harness) holdRoute(ctx context.Context, op, id string) error {
	base := h.server().Addr()
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	return postJSON(ctx, base+"/v1/sessions/"+pathEscape(id)+"/"+op, `{"reason":"chaos"}`)
}

// checkHold reads whether s is held (gc --dry-run's verdict; not known on
// the memory backend) and checks that the audit's last hold or
// release-hold record agrees.
func (h *harness) checkHold(ctx context.Context, s *opSession) (held, known bool) {
	if h.b.store == memoryStore {
		return false, false
	}
	r := h.cliWith(ctx, h.ops.gcConfig, uncut, 0, "--json", "gc", "--dry-run")
	var entries []struct{ Session, Action, Kept string }
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		h.opProblem("hold", "gc --dry-run --json: %v (%v): %s", err, r.err, tail(r.stderr, 500))
		return false, false
	}
	i := slices.IndexFunc(entries, func(e struct{ Session, Action, Kept string }) bool { return e.Session == s.id })
	if i < 0 {
		h.opProblem("hold", "gc --dry-run does not name %s, an old session", s.id)
		return false, false
	}
	held = entries[i].Kept == "held"
	last := ""
	for _, op := range h.auditOps(ctx, "hold", s.id) {
		if op == "hold" || op == "release-hold" {
			last = op
		}
	}
	if held != (last == "hold") {
		h.opProblem("hold", "session %s: held %v, but its audit's last hold record is %q", s.id, held, last)
	}
	return held, true
}

// opGC runs gc with a retention of 1h over the pool (old sessions, some
// held, some parents) and the writers' sessions (recent), cut by a kill:
// each pool session must be there in full or gone with its audit record,
// none held or recent gone; the retry must delete every old one that is
// neither held nor a parent.
func opGC(h *harness) {
	ctx, cancel := opsCtx()
	defer cancel()
	h.fillPool(3)
	if !slices.ContainsFunc(h.ops.pool, func(s *opSession) bool { return s.held }) {
		if s := h.pick(func(s *opSession) bool { return s.old() && !h.hasChild(s) }); s != nil {
			if r := h.cliWith(ctx, "", uncut, 0, "hold", s.id, "--reason", "chaos: kept by gc"); r.err != nil {
				h.opProblem("gc", "hold %s: %v: %s", s.id, r.err, tail(r.stderr, 500))
			} else {
				s.held = true
			}
		}
	}
	how, delay := h.pickCut("gc", h.cliCuts()...)
	parents := h.parents()
	r := h.cliWith(ctx, h.ops.gcConfig, how, delay, "--json", "gc")
	h.noteTook("gc", how, r.took, r.err)
	h.t.Logf("gc (%s after %s): %v", how, delay, r.err)
	h.checkGC(ctx, false, parents)
	parents = h.parents()
	if r := h.cliWith(ctx, h.ops.gcConfig, uncut, 0, "--json", "gc"); r.err != nil {
		h.opProblem("gc", "gc run to its end: %v: %s", r.err, tail(r.stderr, 1000))
	}
	h.checkGC(ctx, true, parents)
}

// parents returns the pool sessions another pool session names as its
// parent: gc decides on the sessions as they are when it starts.
func (h *harness) parents() map[string]bool {
	out := map[string]bool{}
	for _, s := range h.ops.pool {
		if s.parent != "" {
			out[s.parent] = true
		}
	}
	return out
}

// checkGC checks the pool after gc and drops the deleted sessions; done: gc
// ran to its end, so every old session it may delete is gone; parents: the
// parents when it started.
func (h *harness) checkGC(ctx context.Context, done bool, parents map[string]bool) {
	present := map[string]bool{}
	sn := h.snap(ctx, "gc", "", true)
	for _, s := range h.ops.pool {
		present[s.id] = h.checkDelete(ctx, "gc", s, sn)
	}
	for _, s := range h.ops.pool {
		child := parents[s.id]
		switch {
		case !present[s.id] && s.held:
			h.opProblem("gc", "it deleted %s, which is under a legal hold", s.id)
		case !present[s.id] && !s.old():
			h.opProblem("gc", "it deleted %s, whose last activity is recent", s.id)
		case !present[s.id] && child:
			h.opProblem("gc", "it deleted %s, the parent of a stored fork", s.id)
		case done && present[s.id] && s.old() && !s.held && !child:
			h.opProblem("gc", "after gc ran to its end, %s (old, not held, no child) is still there", s.id)
		}
	}
	h.ops.pool = slices.DeleteFunc(h.ops.pool, func(s *opSession) bool { return !present[s.id] })
}

// outsideTurns returns the seqs of the log lines after which no turn is
// open (every seq of a log without turns): a fork there writes no closers.
// A log of whole turns has at least its last.
func outsideTurns(lines []string) []int {
	var ats []int
	open := false
	for i, l := range lines {
		switch typeOf(l) {
		case "turn/start":
			open = true
		case "turn/end":
			open = false
		}
		if !open {
			ats = append(ats, i)
		}
	}
	return ats
}

// opFork forks a pool session at a random seq outside a turn through the CLI or the /v1
// route, cut by a kill: the child must be absent or hold exactly the
// parent's events up to there.
func opFork(h *harness) {
	ctx, cancel := opsCtx()
	defer cancel()
	p := h.pick(func(s *opSession) bool { return len(s.lines) > 0 })
	if p == nil {
		return
	}
	ats := outsideTurns(p.lines)
	at := ats[h.rng.IntN(len(ats))]
	child := h.newID("fork")
	want := withEndSeed(p.lines[:at+1])
	api := h.viaAPI()
	run := func(how cut, delay time.Duration) error {
		if api {
			return h.api("fork/api", how, delay, func(ctx context.Context, c *client.Client) error {
				seq := sdk.Seq(at)
				s, err := c.Fork(ctx, p.id, &seq, child)
				if err == nil {
					err = s.Release(ctx)
				}
				return err
			})
		}
		r := h.cliWith(ctx, "", how, delay, "fork", p.id, "--as", child, "--at", fmt.Sprint(at))
		h.noteTook("fork", how, r.took, r.err)
		if r.err != nil {
			return fmt.Errorf("%v: %s", r.err, tail(r.stderr, 500))
		}
		return nil
	}
	var how cut
	var delay time.Duration
	if api {
		how, delay = h.pickCut("fork/api", h.apiCuts()...)
	} else {
		how, delay = h.pickCut("fork", h.cliCuts()...)
	}
	err := run(how, delay)
	if how == dropCall {
		// serve may have made the child live before the call was dropped;
		// the client that dropped it releases it, as its Release would.
		rctx, rcancel := context.WithTimeout(ctx, callTimeout)
		_ = h.client().Session(child).Release(rctx) // none made, or not live: nothing to release
		rcancel()
	}
	whole := h.wholeOrAbsent(ctx, "fork", "", child, h.snap(ctx, "fork", "", false), want)
	h.t.Logf("fork %s of %s at %d (api %v, %s after %s): %v; whole %v", child, p.id, at, api, how, delay, err, whole)
	if how == uncut && err != nil {
		h.opProblem("fork", "fork of %s at %d: %v", p.id, at, err)
	}
	if !whole {
		if err := run(uncut, 0); err != nil {
			h.opProblem("fork", "the retry of the fork %s of %s at %d: %v", child, p.id, at, err)
		}
		if !h.wholeOrAbsent(ctx, "fork", "", child, h.snap(ctx, "fork", "", false), want) {
			h.opProblem("fork", "after the retry the fork %s is not there in full", child)
			return
		}
	}
	h.ops.pool = append(h.ops.pool, &opSession{id: child, lines: slices.Clone(want), parent: p.id})
}

// opCompact compacts a writer's live session through POST /compact (cut by
// a serve kill; the writers' verification checks its events) or a pool
// session with `logbook compact` (cut by a kill): the session must load,
// keep every event it had and have a valid surface.
func opCompact(h *harness) {
	ctx, cancel := opsCtx()
	defer cancel()
	if h.viaAPI() {
		w := h.writers[h.rng.IntN(len(h.writers))]
		id := w.session().id
		how, delay := h.pickCut("compact/api", h.apiCuts()...)
		err := h.api("compact/api", how, delay, func(ctx context.Context, c *client.Client) error {
			_, err := c.Session(id).Compact(ctx, client.CompactOptions{})
			return err
		})
		h.t.Logf("compact %s over /v1 (%s after %s): %v", id, how, delay, err)
		if how == uncut && err != nil && !refusedCompaction(err.Error()) {
			h.opProblem("compact", "POST /compact of the live %s: %v", id, err)
		}
		sctx, scancel := context.WithTimeout(ctx, callTimeout)
		defer scancel()
		if _, err := h.client().Session(id).Surface(sctx, client.ViewOptions{}); err != nil && !errors.Is(err, sdk.CodeSessionNotFound) {
			h.opProblem("compact", "the surface of %s after a compaction: %v", id, err)
		}
		return
	}
	s := h.pick(func(*opSession) bool { return true })
	if s == nil {
		return
	}
	how, delay := h.pickCut("compact", h.cliCuts()...)
	r := h.cliWith(ctx, "", how, delay, "compact", s.id)
	h.noteTook("compact", how, r.took, r.err)
	lines, found, err := h.readLog(ctx, "", s.id)
	h.t.Logf("compact %s (%s after %s): %v; %d events, was %d", s.id, how, delay, r.err, len(lines), len(s.lines))
	switch {
	case how == uncut && r.err != nil && !refusedCompaction(r.stderr):
		h.opProblem("compact", "logbook compact %s: %v: %s", s.id, r.err, tail(r.stderr, 1000))
	case err != nil || !found:
		h.half("compact", s.id, "after a compaction it does not load (found %v): %v", found, err)
		return
	case len(lines) < len(s.lines) || !slices.Equal(lines[:len(s.lines)], s.lines):
		h.half("compact", s.id, "a compaction changed its events: %s", firstDiff(lines, s.lines))
	}
	if r := h.cliWith(ctx, "", uncut, 0, "surface", s.id); r.err != nil {
		h.opProblem("compact", "logbook surface %s after a compaction: %v: %s", s.id, r.err, tail(r.stderr, 1000))
	}
	s.lines = lines
}

// refusedCompaction reports whether msg names a compaction's refusal,
// which leaves the events as they were: too little to compact, a summary
// that would not be smaller, or a writer that appended between the
// measurement and the compaction.
func refusedCompaction(msg string) bool {
	for _, c := range []sdk.Code{sdk.CodeInvalidBoundary, sdk.CodeCompactionNoRange, sdk.CodeCompactionNotSmaller, sdk.CodeCompactionSurfaceMismatch} {
		if strings.Contains(msg, string(c)) {
			return true
		}
	}
	return false
}

// opMigrate copies every session to the migrate target, cut by a kill:
// each pool session's copy must be absent, the copy the last full migrate
// left, or whole; after a migrate that ran to its end, whole.
func opMigrate(h *harness) {
	ctx, cancel := opsCtx()
	defer cancel()
	h.fillPool(2)
	how, delay := h.pickCut("migrate", h.cliCuts()...)
	r := h.cliWith(ctx, h.ops.migrateConfig, how, delay, "--json", "migrate", "--to", h.ops.targetName)
	h.noteTook("migrate", how, r.took, nil) // a session serve holds fails it: exit 1
	h.t.Logf("migrate (%s after %s): %v %s", how, delay, r.err, tail(r.stdout, 300))
	sn := h.snap(ctx, "migrate", h.ops.targetConfig, false)
	for _, s := range h.ops.pool {
		want := [][]string{s.lines}
		if s.migrated != nil {
			want = append(want, s.migrated)
		}
		h.wholeOrAbsent(ctx, "migrate", h.ops.targetConfig, s.id, sn, want...)
	}
	r = h.cliWith(ctx, h.ops.migrateConfig, uncut, 0, "--json", "migrate", "--to", h.ops.targetName)
	sn = h.snap(ctx, "migrate", h.ops.targetConfig, false)
	for _, s := range h.ops.pool {
		if h.wholeOrAbsent(ctx, "migrate", h.ops.targetConfig, s.id, sn, s.lines) {
			s.migrated = s.lines
		} else {
			h.opProblem("migrate", "after a migrate ran to its end (%v: %s), the target does not hold %s in full", r.err, tail(r.stdout, 300), s.id)
		}
	}
}
