package persistencetest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// deleter returns p as an sdk.Deleter; the Delete group runs only for a
// backend that declares and implements it.
func deleter(t *testing.T, p sdk.Persistence) sdk.Deleter {
	t.Helper()
	return implementation[sdk.Deleter](t, p)
}

// byTest is the request every Delete rule sends.
var byTest = sdk.AuditRequest{Reason: "conformance test", By: sdk.ByCLI}

// digestPattern is what every record's Digest must look like.
var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// audit returns every record of p's audit log.
func audit(t *testing.T, p sdk.Persistence) []sdk.AuditRecord {
	t.Helper()
	var out []sdk.AuditRecord
	if err := deleter(t, p).Audit(t.Context(), func(r sdk.AuditRecord) error { out = append(out, r); return nil }); err != nil {
		t.Fatalf("Audit: %v", err)
	}
	return out
}

// requireRecord fails unless r records op on id with events stored events
// and the test's reason and actor.
func requireRecord(t *testing.T, r sdk.AuditRecord, op sdk.AuditOp, id string, events int) {
	t.Helper()
	if r.Op != op || r.Session != id || r.Events != sdk.Offset(events) || !digestPattern.MatchString(r.Digest) ||
		r.Reason != byTest.Reason || r.By != byTest.By || r.Time.IsZero() {
		t.Fatalf("audit record %+v; want op %s, session %q, %d events, a sha256 digest, reason %q, by %q and a time", r, op, id, events, byTest.Reason, byTest.By)
	}
}

// requireAudit fails unless p's audit log holds exactly want (times aside).
func requireAudit(t *testing.T, p sdk.Persistence, want ...sdk.AuditRecord) {
	t.Helper()
	got := audit(t, p)
	if len(got) != len(want) {
		t.Fatalf("the audit log holds %d records %+v; want %d", len(got), got, len(want))
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) {
			t.Fatalf("audit record %d has time %v; the operation returned %v", i, got[i].Time, want[i].Time)
		}
		g, w := got[i], want[i]
		g.Time = w.Time
		if g != w {
			t.Fatalf("audit record %d is %+v; the operation returned %+v", i, got[i], want[i])
		}
	}
}

// deleteOK deletes id and checks the record it returns.
func deleteOK(t *testing.T, p sdk.Persistence, id string, events int) sdk.AuditRecord {
	t.Helper()
	r, err := deleter(t, p).Delete(t.Context(), id, byTest)
	if err != nil {
		t.Fatalf("Delete(%q): %v", id, err)
	}
	requireRecord(t, r, sdk.AuditDelete, id, events)
	return r
}

// requireGone fails unless id is not stored: Stat, Open and Held are
// SESSION_NOT_FOUND and List leaves it out.
func requireGone(t *testing.T, p sdk.Persistence, id string) {
	t.Helper()
	requireNoSession(t, p, id)
	for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		_, err := p.Open(t.Context(), id, a)
		RequireCode(t, err, sdk.CodeSessionNotFound, id)
	}
	_, err := deleter(t, p).Held(t.Context(), id)
	RequireCode(t, err, sdk.CodeSessionNotFound, id)
	if _, ok := list(t, p)[id]; ok {
		t.Fatalf("List still yields the deleted session %q", id)
	}
}

var deleteRules = []rule{
	{name: "delete-removes-the-session-and-records-it-first", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		storeClosed(t, p, "s1", [][][]byte{Batch(0, 3), Batch(3, 2)})
		keep := storeClosed(t, p, "s2", [][][]byte{Batch(0, 2)})
		r := deleteOK(t, p, "s1", 5)
		requireGone(t, p, "s1")
		requireAudit(t, p, r)
		requireEvents(t, "the other session", ReadAll(t, p, openSession(t, p, "s2", sdk.AccessRead).Handle), keep)
		if s.h.Reopen != nil {
			q := s.reopen(t, p)
			requireGone(t, q, "s1")
			requireAudit(t, q, r)
		}
	}},
	{name: "empty-stored-session-is-deleted-with-no-events", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, _ := stored(t, p, "s1")
		closeHandle(t, p, h)
		deleteOK(t, p, "s1", 0)
		requireGone(t, p, "s1")
	}},
	{name: "deleted-id-can-be-created-again", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		storeClosed(t, p, "s1", [][][]byte{Batch(0, 4)})
		deleteOK(t, p, "s1", 4)
		h, events := stored(t, p, "s1", [][]byte{Envelope(0, "todo/new", `{"again":true}`)})
		closeHandle(t, p, h)
		o := openSession(t, p, "s1", sdk.AccessRead)
		if o.Torn != (sdk.Torn{}) {
			t.Fatalf("the re-created session opens with torn %+v; want none", o.Torn)
		}
		requireEvents(t, "the re-created session", ReadAll(t, p, o.Handle), events)
		s.requireCount(t, stat(t, p, "s1"), 1)
	}},
	{name: "writer-claimed-is-ALREADY_OWNED-and-nothing-changes", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, _ := stored(t, p, "s1", Batch(0, 3))
		before := snap(t, p, "s1")
		_, err := deleter(t, p).Delete(t.Context(), "s1", byTest)
		RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
		requireUnchanged(t, p, "s1", before)
		requireAudit(t, p)
		// The writer goes on.
		appendOK(t, p, h, Batch(3, 1))
		closeHandle(t, p, h)
		deleteOK(t, p, "s1", 4)
	}},
	{name: "pending-create-is-ALREADY_OWNED", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		o := create(t, p, "s1")
		_, err := deleter(t, p).Delete(t.Context(), "s1", byTest)
		RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
		appendOK(t, p, o.Handle, Batch(0, 2))
		closeHandle(t, p, o.Handle)
		requireAudit(t, p)
	}},
	{name: "writer-of-another-instance-is-ALREADY_OWNED", needs: []string{hookReopen}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, _ := stored(t, p, "s1", Batch(0, 3))
		q := s.reopen(t, p)
		before := snap(t, q, "s1")
		_, err := deleter(t, q).Delete(t.Context(), "s1", byTest)
		RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
		requireUnchanged(t, q, "s1", before)
		requireAudit(t, q)
		closeHandle(t, p, h)
		r := deleteOK(t, q, "s1", 3)
		requireGone(t, p, "s1")
		requireAudit(t, p, r)
	}},
	{name: "missing-is-SESSION_NOT_FOUND", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		d := deleter(t, p)
		_, err := d.Delete(t.Context(), "nope", byTest)
		RequireCode(t, err, sdk.CodeSessionNotFound, "nope")
		_, _, err = d.SetHold(t.Context(), "nope", true, byTest)
		RequireCode(t, err, sdk.CodeSessionNotFound, "nope")
		_, err = d.Delete(t.Context(), "", byTest)
		RequireCode(t, err, sdk.CodeInvalidSessionID)
		requireAudit(t, p)
	}},
	{name: "bad-request-is-USAGE-and-nothing-changes", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		storeClosed(t, p, "s1", [][][]byte{Batch(0, 1)})
		before := snap(t, p, "s1")
		_, err := deleter(t, p).Delete(t.Context(), "s1", sdk.AuditRequest{Reason: "x"})
		RequireCode(t, err, sdk.CodeUsage, "by")
		_, err = deleter(t, p).Delete(t.Context(), "s1", sdk.AuditRequest{Reason: "a\nb", By: sdk.ByCLI})
		RequireCode(t, err, sdk.CodeUsage, "reason")
		requireUnchanged(t, p, "s1", before)
		requireAudit(t, p)
	}},
	{name: "held-is-SESSION_HELD-until-released-and-both-are-audited", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		d := deleter(t, p)
		h, _ := stored(t, p, "s1", Batch(0, 2))
		// A hold works beside the writer.
		hold, changed, err := d.SetHold(t.Context(), "s1", true, byTest)
		if err != nil || !changed {
			t.Fatalf("SetHold(s1, true) = changed %t, %v; want a change", changed, err)
		}
		requireRecord(t, hold, sdk.AuditHold, "s1", 2)
		if _, changed, err := d.SetHold(t.Context(), "s1", true, byTest); err != nil || changed {
			t.Fatalf("SetHold(s1, true) again = changed %t, %v; want no change and no error", changed, err)
		}
		closeHandle(t, p, h)
		if held, err := d.Held(t.Context(), "s1"); err != nil || !held {
			t.Fatalf("Held(s1) = %t, %v; want true", held, err)
		}
		before := snap(t, p, "s1")
		_, err = d.Delete(t.Context(), "s1", byTest)
		RequireCode(t, err, sdk.CodeSessionHeld, "s1")
		requireUnchanged(t, p, "s1", before)
		requireAudit(t, p, hold)
		if s.h.Reopen != nil {
			q := s.reopen(t, p)
			_, err = deleter(t, q).Delete(t.Context(), "s1", byTest)
			RequireCode(t, err, sdk.CodeSessionHeld, "s1")
		}
		release, changed, err := d.SetHold(t.Context(), "s1", false, byTest)
		if err != nil || !changed {
			t.Fatalf("SetHold(s1, false) = changed %t, %v; want a change", changed, err)
		}
		requireRecord(t, release, sdk.AuditReleaseHold, "s1", 2)
		if release.Digest != hold.Digest {
			t.Fatalf("the digest changed from %s to %s though nothing was stored", hold.Digest, release.Digest)
		}
		if _, changed, err := d.SetHold(t.Context(), "s1", false, byTest); err != nil || changed {
			t.Fatalf("SetHold(s1, false) again = changed %t, %v; want no change and no error", changed, err)
		}
		if held, err := d.Held(t.Context(), "s1"); err != nil || held {
			t.Fatalf("Held(s1) after the release = %t, %v; want false", held, err)
		}
		del := deleteOK(t, p, "s1", 2)
		requireAudit(t, p, hold, release, del)
		// A session created again under the id is not held.
		closeHandle(t, p, create(t, p, "s1").Handle)
		h, _ = stored(t, p, "s2")
		closeHandle(t, p, h)
		if held, err := d.Held(t.Context(), "s2"); err != nil || held {
			t.Fatalf("Held(s2) = %t, %v; want false", held, err)
		}
	}},
	{name: "digest-covers-the-stored-bytes", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		d := deleter(t, p)
		h, _ := stored(t, p, "s1", Batch(0, 2))
		a, _, err := d.SetHold(t.Context(), "s1", true, byTest)
		if err != nil {
			t.Fatal(err)
		}
		appendOK(t, p, h, Batch(2, 1))
		closeHandle(t, p, h)
		b, _, err := d.SetHold(t.Context(), "s1", false, byTest)
		if err != nil {
			t.Fatal(err)
		}
		if a.Digest == b.Digest || b.Events != 3 {
			t.Fatalf("digest %s with 2 events and %s with %d; want different digests and 3 events", a.Digest, b.Digest, b.Events)
		}
		if r := deleteOK(t, p, "s1", 3); r.Digest != b.Digest {
			t.Fatalf("Delete's digest %s differs from the release's %s though nothing was stored between", r.Digest, b.Digest)
		}
	}},
	{name: "fork-child-still-loads-after-its-parent-is-deleted", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		events := storeClosed(t, p, "src", [][][]byte{Batch(0, 3), Batch(3, 3)})
		h, child := stored(t, p, "child", events[:4])
		closeHandle(t, p, h)
		if s.declares(sdk.CapabilityCopyPrefix) {
			o, err := copier(t, p).CopyPrefix(t.Context(), "src", 2, header("copied"))
			if err != nil {
				t.Fatalf("CopyPrefix: %v", err)
			}
			closeHandle(t, p, o.Handle)
		}
		deleteOK(t, p, "src", 6)
		requireGone(t, p, "src")
		requireEvents(t, "the child", ReadAll(t, p, openSession(t, p, "child", sdk.AccessRead).Handle), child)
		if s.declares(sdk.CapabilityCopyPrefix) {
			requireEvents(t, "the CopyPrefix child", ReadAll(t, p, openSession(t, p, "copied", sdk.AccessRead).Handle), events[:3])
		}
	}},
	{name: "torn-tail-and-its-artifact-go-with-the-session", needs: []string{hookTear}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		events := storeClosed(t, p, "s1", tornLog())
		s.h.Tear(t, p, "s1", 1)
		w := s.requireTorn(t, p, "s1", sdk.AccessWrite, 9, events)
		appendOK(t, p, w.Handle, Batch(9, 1))
		closeHandle(t, p, w.Handle)
		artifact := w.Torn.Artifact
		_, statErr := os.Stat(artifact)
		s.h.Tear(t, p, "s1", 1) // a second torn tail, from seq 9, left in place
		deleteOK(t, p, "s1", 9)
		requireGone(t, p, "s1")
		if filepath.IsAbs(artifact) && statErr == nil {
			if _, err := os.Stat(artifact); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the torn-tail artifact %s is still there after Delete (stat: %v)", artifact, err)
			}
		}
		h, again := stored(t, p, "s1", Batch(0, 1))
		closeHandle(t, p, h)
		if o := open(t, p, "s1", sdk.AccessWrite); o.Torn != (sdk.Torn{}) {
			t.Fatalf("the re-created session opens with torn %+v; want none", o.Torn)
		} else {
			requireEvents(t, "the re-created session", ReadAll(t, p, o.Handle), again)
			closeHandle(t, p, o.Handle)
		}
	}},
	{name: "corrupt-log-can-be-deleted", needs: []string{hookCorrupt}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		storeClosed(t, p, "s1", closedTurnLog())
		s.h.Corrupt(t, p, "s1", 4)
		r, err := deleter(t, p).Delete(t.Context(), "s1", byTest)
		if err != nil {
			t.Fatalf("Delete of a CORRUPT_LOG session: %v", err)
		}
		if r.Events > 10 || !digestPattern.MatchString(r.Digest) {
			t.Fatalf("record %+v: want at most 10 events and a sha256 digest", r)
		}
		requireGone(t, p, "s1")
	}},
}
