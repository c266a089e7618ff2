package jsonl

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/faultfs"
	"github.com/seed-e5e476df/logbook/sdk"
)

// writeFile writes data to path.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// auditOps returns the ops Audit reports for session id.
func auditOps(t *testing.T, b *Backend, id string) []sdk.AuditOp {
	t.Helper()
	var ops []sdk.AuditOp
	err := b.Audit(t.Context(), func(r sdk.AuditRecord) error {
		if r.Session == id {
			ops = append(ops, r.Op)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Audit: %v", err)
	}
	return ops
}

// Audit reports format 1 records and intents closed as done, leaves out
// annulled ones, reads a last intent without an outcome by the state, and
// refuses an outcome that closes no intent.
func TestAuditReportsOnlyChangesMade(t *testing.T) {
	const (
		v1       = `{"time":"2026-01-01T00:00:00Z","op":"hold","session":"s","events":1,"digest":"sha256:x","reason":"","by":"cli"}`
		intent   = `{"time":"2026-01-01T00:00:01Z","op":"release-hold","session":"s","events":1,"digest":"sha256:x","reason":"","by":"cli","phase":"intent"}`
		annulled = `{"time":"2026-01-01T00:00:02Z","op":"release-hold","session":"s","phase":"annulled"}`
		done     = `{"time":"2026-01-01T00:00:03Z","op":"release-hold","session":"s","phase":"done"}`
		hold     = `{"time":"2026-01-01T00:00:04Z","op":"hold","session":"s","events":1,"digest":"sha256:x","reason":"","by":"cli","phase":"intent"}`
	)
	for _, c := range []struct {
		name  string
		lines []string
		held  bool // a hold file exists
		want  []sdk.AuditOp
		torn  bool // the last line has no newline
	}{
		{"a format 1 record counts as done", []string{v1}, true, []sdk.AuditOp{sdk.AuditHold}, false},
		{"an annulled intent is left out", []string{v1, intent, annulled}, true, []sdk.AuditOp{sdk.AuditHold}, false},
		{"an intent closed as done is reported", []string{v1, intent, done}, false, []sdk.AuditOp{sdk.AuditHold, sdk.AuditReleaseHold}, false},
		{"a last intent whose change is made is reported", []string{v1, intent, done, hold}, true, []sdk.AuditOp{sdk.AuditHold, sdk.AuditReleaseHold, sdk.AuditHold}, false},
		{"a last intent whose change is not made is left out", []string{v1, intent, done, hold}, false, []sdk.AuditOp{sdk.AuditHold, sdk.AuditReleaseHold}, false},
		{"a torn last line is left out", []string{v1, intent, done, `{"time":"2026`}, false, []sdk.AuditOp{sdk.AuditHold, sdk.AuditReleaseHold}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Root: t.TempDir(), Compression: CompressionNone}
			b := newTestBackend(t, cfg)
			storeEvents(t, b, "s", [][]byte{[]byte(`{"seq":0,"time":1,"type":"app/note","data":{}}`)})
			if c.held {
				writeFile(t, filepath.Join(cfg.Root, "s", holdName), "{}\n")
			}
			data := strings.Join(c.lines, "\n")
			if !c.torn {
				data += "\n"
			}
			writeFile(t, filepath.Join(cfg.Root, auditName), data)
			if got := auditOps(t, b, "s"); !slices.Equal(got, c.want) {
				t.Fatalf("Audit reported %v; want %v", got, c.want)
			}
		})
	}
	t.Run("an outcome without its intent is CORRUPT_LOG", func(t *testing.T) {
		cfg := Config{Root: t.TempDir(), Compression: CompressionNone}
		b := newTestBackend(t, cfg)
		writeFile(t, filepath.Join(cfg.Root, auditName), v1+"\n"+done+"\n")
		err := b.Audit(t.Context(), func(sdk.AuditRecord) error { return nil })
		if !errors.Is(err, sdk.CodeCorruptLog) || !strings.Contains(err.Error(), "line 2") {
			t.Fatalf("Audit: %v; want CORRUPT_LOG naming line 2", err)
		}
	})
}

// A power cut at the first call of each file system operation that hold,
// release-hold and delete make (per file name) leaves the audit log and the
// state agreeing after the restart; the operation run again makes its
// change, recorded once.
func TestAuditAgreesWithStateAfterAPowerCut(t *testing.T) {
	ops := []faultfs.Op{faultfs.OpOpen, faultfs.OpWrite, faultfs.OpSync, faultfs.OpTruncate, faultfs.OpLock, faultfs.OpMkdir,
		faultfs.OpRename, faultfs.OpRemove, faultfs.OpSyncDir}
	names := []string{"", auditName, holdName, "*.tmp", ".deleting", "s", filepath.Base(faultRoot)}
	type change struct {
		op    sdk.AuditOp
		setup []sdk.AuditOp // done before the cut
		run   func(b *Backend) error
		made  func(t *testing.T, b *Backend) bool
	}
	held := func(t *testing.T, b *Backend) bool {
		h, err := b.Held(t.Context(), "s")
		if err != nil {
			t.Fatalf("Held: %v", err)
		}
		return h
	}
	setHold := func(on bool) func(b *Backend) error {
		return func(b *Backend) error {
			_, _, err := b.SetHold(t.Context(), "s", on, sdk.AuditRequest{By: sdk.ByCLI})
			return err
		}
	}
	changes := []change{
		{sdk.AuditHold, nil, setHold(true), held},
		{sdk.AuditReleaseHold, []sdk.AuditOp{sdk.AuditHold}, setHold(false), func(t *testing.T, b *Backend) bool { return !held(t, b) }},
		{sdk.AuditDelete, nil, func(b *Backend) error {
			_, err := b.Delete(t.Context(), "s", sdk.AuditRequest{By: sdk.ByCLI})
			return err
		}, func(t *testing.T, b *Backend) bool {
			_, err := b.Stat(t.Context(), "s")
			if err != nil && !errors.Is(err, sdk.CodeSessionNotFound) {
				t.Fatalf("Stat: %v", err)
			}
			return err != nil
		}},
	}
	for _, c := range changes {
		for _, fop := range ops {
			for _, name := range names {
				t.Run(string(c.op)+"/"+string(fop)+"/"+name, func(t *testing.T) {
					b, ffs, cfg := faultBackend(t, CompressionNone)
					storeEvents(t, b, "s", [][]byte{[]byte(`{"seq":0,"time":1,"type":"app/note","data":{}}`)})
					for range c.setup {
						if err := setHold(true)(b); err != nil {
							t.Fatal(err)
						}
					}
					ffs.Inject(faultfs.Fault{Op: fop, Name: name, Crash: true, Times: 1})
					err := c.run(b)
					ffs.ClearFaults()
					b = newTestBackend(t, cfg, WithFS(ffs)) // the restart
					got := auditOps(t, b, "s")
					want := c.setup
					if c.made(t, b) {
						want = append(slices.Clone(c.setup), c.op)
					} else if err == nil {
						t.Fatalf("%s succeeded but is not made after the cut", c.op)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("after the cut (%v) the audit reports %v; the state says %v", err, got, want)
					}
					if err := c.run(b); err != nil && !errors.Is(err, sdk.CodeSessionNotFound) {
						t.Fatalf("%s again: %v", c.op, err)
					}
					if got, want := auditOps(t, b, "s"), append(slices.Clone(c.setup), c.op); !slices.Equal(got, want) || !c.made(t, b) {
						t.Fatalf("after %s again the audit reports %v (made %v); want %v", c.op, got, c.made(t, b), want)
					}
				})
			}
		}
	}
}
