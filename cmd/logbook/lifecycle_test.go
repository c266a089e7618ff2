package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/internal/testserve"
	"github.com/seed-e5e476df/logbook/sdk"
)

// auditRecords parses `logbook audit --json`.
func auditRecords(t *testing.T, data string, args ...string) []sdk.AuditRecord {
	t.Helper()
	var out []sdk.AuditRecord
	for _, l := range ok(t, data, "", append([]string{"audit", "--json"}, args...)...).lines() {
		var r sdk.AuditRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

func fileDigest(t *testing.T, path string) (string, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), b
}

// delete, hold, release-hold and audit through the binary: the digest is
// the stored file's SHA-256, a refused delete leaves the log byte for byte
// and records nothing, and the id can be used again.
func TestDeleteHoldAndAudit(t *testing.T) {
	data := t.TempDir()
	finished(t, data, "s")
	finished(t, data, "keep")
	log := filepath.Join(data, "s", "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl.zst")
	digest, before := fileDigest(t, log)

	if r := ok(t, data, "", "hold", "s", "--reason", "LEGAL-7"); r.stdout != "held s: 11 events, "+digest+"\n" {
		t.Fatalf("hold printed %q; want the session, its length and the digest %s", r.stdout, digest)
	}
	if r := ok(t, data, "", "hold", "s"); !strings.Contains(r.stdout, "already held") {
		t.Fatalf("hold of a held session printed %q", r.stdout)
	}
	fail(t, data, "", sdk.CodeSessionHeld, "delete", "s")
	if _, after := fileDigest(t, log); string(after) != string(before) {
		t.Fatal("the log changed under a refused delete")
	}
	if recs := auditRecords(t, data); len(recs) != 1 || recs[0].Op != sdk.AuditHold || recs[0].Reason != "LEGAL-7" || recs[0].By != sdk.ByCLI || recs[0].Digest != digest {
		t.Fatalf("audit after the refused delete: %+v; want the hold alone", recs)
	}
	fail(t, data, "", sdk.CodeSessionNotFound, "delete", "nope")
	fail(t, data, "", sdk.CodeUsage, "delete", "s", "--reason", "two\nlines")

	ok(t, data, "", "release-hold", "s")
	var rec sdk.AuditRecord
	if err := json.Unmarshal([]byte(ok(t, data, "", "delete", "s", "--reason", "bye", "--json").stdout), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Op != sdk.AuditDelete || rec.Session != "s" || rec.Events != 11 || rec.Digest != digest || rec.Reason != "bye" || rec.By != sdk.ByCLI {
		t.Fatalf("delete --json printed %+v", rec)
	}
	if _, err := os.Stat(filepath.Join(data, "s")); !os.IsNotExist(err) {
		t.Fatalf("the session directory is still there: %v", err)
	}
	if r := ok(t, data, "", "sessions"); strings.Contains(r.stdout, "s  ") || !strings.Contains(r.stdout, "keep") {
		t.Fatalf("sessions after the delete:\n%s", r.stdout)
	}
	fail(t, data, "", sdk.CodeSessionNotFound, "events", "s")
	if recs := auditRecords(t, data, "--session", "s"); len(recs) != 3 || recs[1].Op != sdk.AuditReleaseHold || recs[2].Op != sdk.AuditDelete {
		t.Fatalf("audit --session s: %+v; want hold, release-hold, delete", recs)
	}
	if recs := auditRecords(t, data, "--session", "keep"); len(recs) != 0 {
		t.Fatalf("audit --session keep: %+v; want none", recs)
	}
	if r := ok(t, data, "", "audit"); len(r.lines()) != 4 || !strings.HasPrefix(r.lines()[0], "TIME") || !strings.Contains(r.lines()[3], "delete") {
		t.Fatalf("audit table:\n%s", r.stdout)
	}
	// The id is free again.
	finished(t, data, "s")
}

// oldSession imports a copy of session src as id with every time (header
// and events) set to at.
func oldSession(t *testing.T, data, src, id string, at time.Time) {
	t.Helper()
	exported := ok(t, data, "", "export", src).stdout
	ms := strconv.FormatInt(at.UnixMilli(), 10)
	exported = regexp.MustCompile(`"(time|createdAt)":\d+`).ReplaceAllString(exported, `"$1":`+ms)
	exported = strings.Replace(exported, `"id":"`+src+`"`, `"id":"`+id+`"`, 1)
	ok(t, data, exported, "import", "-")
}

// gc --dry-run lists what the retention block would delete and deletes
// nothing; gc deletes through the audited path (by retention), keeping
// held sessions and parents of stored sessions.
func TestGCAppliesTheRetentionBlock(t *testing.T) {
	data := t.TempDir()
	cfg := writeConfig(t, t.TempDir(), "retention.hcl", "persistence \"jsonl\" {}\nretention {\n  max_age = \"30d\"\n}\n")
	finished(t, data, "fresh")
	old := time.Now().Add(-40 * 24 * time.Hour)
	oldSession(t, data, "fresh", "old", old)
	oldSession(t, data, "fresh", "held", old)
	oldSession(t, data, "fresh", "parent", old)
	ok(t, data, "", "fork", "fresh", "--as", "child") // a child of fresh, then make one of parent:
	exported := ok(t, data, "", "export", "child").stdout
	exported = strings.Replace(exported, `"id":"child"`, `"id":"child2"`, 1)
	exported = strings.Replace(exported, `"parentSession":"fresh"`, `"parentSession":"parent"`, 1)
	ok(t, data, exported, "import", "-")
	ok(t, data, "", "hold", "held")

	var plan []gcEntry
	if err := json.Unmarshal([]byte(ok(t, data, "", "gc", "--dry-run", "--json", "--config", cfg).stdout), &plan); err != nil {
		t.Fatal(err)
	}
	got := map[string]gcEntry{}
	for _, e := range plan {
		got[e.Session] = e
	}
	if len(plan) != 3 || got["old"].Action != "would-delete" || got["held"].Kept != "held" || got["parent"].Kept != "parent of child2" {
		t.Fatalf("gc --dry-run: %+v", plan)
	}
	ok(t, data, "", "events", "old") // still there
	if r := ok(t, data, "", "gc", "--config", cfg); !strings.Contains(r.stdout, "old") || !strings.Contains(r.stdout, "delete") {
		t.Fatalf("gc printed:\n%s", r.stdout)
	}
	fail(t, data, "", sdk.CodeSessionNotFound, "events", "old")
	for _, id := range []string{"fresh", "held", "parent", "child", "child2"} {
		ok(t, data, "", "events", id)
	}
	recs := auditRecords(t, data, "--session", "old")
	if len(recs) != 1 || recs[0].Reason != "retention" || recs[0].By != sdk.ByRetention {
		t.Fatalf("audit of old: %+v; want one deletion by retention", recs)
	}

	fail(t, data, "", sdk.CodeConfigInvalid, "gc") // the default profile has no retention block
	bad := writeConfig(t, t.TempDir(), "bad.hcl", "persistence \"jsonl\" {}\nretention {\n  max_age = \"30 days\"\n}\n")
	if r := fail(t, data, "", sdk.CodeConfigInvalid, "gc", "--config", bad); !strings.Contains(r.stderr, "max_age") {
		t.Fatalf("a bad max_age: %s", r.stderr)
	}
}

// serve applies the retention block when it starts (and hourly after),
// and logs what it deleted.
func TestServeAppliesRetentionAtStart(t *testing.T) {
	data := t.TempDir()
	cfg := writeConfig(t, t.TempDir(), "retention.hcl", "persistence \"jsonl\" {}\nretention {\n  max_age = \"30d\"\n}\n")
	finished(t, data, "fresh")
	oldSession(t, data, "fresh", "old", time.Now().Add(-40*24*time.Hour))
	p, err := testserve.Start(logbookBin, cmdTimeout, "--config", cfg, "--data", data, "--log-level", "info")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill9(cmdTimeout) })
	deadline := time.Now().Add(cmdTimeout)
	for !strings.Contains(p.Log(), "retention: run done") {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not run the retention policy:\n%s", p.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if log := p.Log(); !strings.Contains(log, "retention: deleted") || !strings.Contains(log, "session=old") || strings.Contains(log, "session=fresh") {
		t.Fatalf("serve's log does not name the one deletion:\n%s", log)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = p.Wait(cmdTimeout)
	fail(t, data, "", sdk.CodeSessionNotFound, "events", "old")
	ok(t, data, "", "events", "fresh")
	if recs := auditRecords(t, data); len(recs) != 1 || recs[0].Session != "old" || recs[0].By != sdk.ByRetention {
		t.Fatalf("audit: %+v", recs)
	}
}
