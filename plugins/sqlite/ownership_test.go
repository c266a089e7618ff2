package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// TestWriteClaimIsExclusiveAcrossProcesses checks write ownership across OS
// processes: this test process and a `logbook plugin sqlite` child over one
// database file.
func TestWriteClaimIsExclusiveAcrossProcesses(t *testing.T) {
	path := dbPath(t)
	b := openBackend(t, sqlite.DefaultConfig(path))
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	events := persistencetest.Batch(0, 2)
	appendOK(t, b, o.Handle, events)

	p := subprocess(t, path)
	_, err = p.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, `"s1"`, "another process", "flock")
	r, err := p.Open(t.Context(), "s1", sdk.AccessRead)
	must(t, err)
	requireRead(t, "the other process's reader", p, r.Handle, events)
	_, err = p.Create(t.Context(), header("s1"))
	persistencetest.RequireCode(t, err, sdk.CodeSessionAlreadyExists, `"s1"`)

	// A create claims the id in every process before it returns: the
	// other process can neither create s2 nor open it for writing, though
	// nothing is stored yet, and the creator's first append is kept.
	theirs, err := p.Create(t.Context(), header("s2"))
	must(t, err)
	_, err = b.Create(t.Context(), header("s2"))
	persistencetest.RequireCode(t, err, sdk.CodeSessionAlreadyExists, `"s2"`, "another process", "flock")
	_, err = b.Open(t.Context(), "s2", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, `"s2"`, "another process", "flock")
	_, err = b.Open(t.Context(), "s2", sdk.AccessRead)
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, `"s2"`)
	appendOK(t, p, theirs.Handle, persistencetest.Batch(0, 3))
	if n := queryInt(t, path, "SELECT count(*) FROM events WHERE session_id = 's2'"); n != 3 {
		t.Fatalf("s2 holds %d rows after its creator's append; want 3", n)
	}

	// Closing the owner hands the claim to the other process.
	must(t, b.Close(t.Context(), o.Handle))
	w, err := p.Open(t.Context(), "s1", sdk.AccessWrite)
	must(t, err)
	_, err = b.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, `"s1"`)
	appendOK(t, p, w.Handle, persistencetest.Batch(2, 1))
}

// TestKilledOwnerReleasesTheClaim: the kernel drops the flock of a process
// that dies, so kill -9 of the owner frees the session.
func TestKilledOwnerReleasesTheClaim(t *testing.T) {
	path := dbPath(t)
	p, proc := startPlugin(t, configJSON(t, path, nil))
	o, err := p.Create(t.Context(), header("s1"))
	must(t, err)
	appendOK(t, p, o.Handle, persistencetest.Batch(0, 3))
	b := openBackend(t, sqlite.DefaultConfig(path))
	_, err = b.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, `"s1"`)

	must(t, syscall.Kill(proc.Pid, syscall.SIGKILL))
	deadline := time.Now().Add(20 * time.Second)
	for {
		w, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
		if err == nil {
			appendOK(t, b, w.Handle, persistencetest.Batch(3, 1))
			return
		}
		if !errors.Is(err, sdk.CodeAlreadyOwned) || time.Now().After(deadline) {
			t.Fatalf("Open(write) after the owner was killed: %v", err)
		}
		time.Sleep(10 * time.Millisecond) // polling for the kernel to reap the owner
	}
}

func TestRemovedLockFileIsOWNERSHIP_LOST(t *testing.T) {
	path := dbPath(t)
	b := openBackend(t, sqlite.DefaultConfig(path))
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	appendOK(t, b, o.Handle, persistencetest.Batch(0, 2))
	must(t, os.Remove(filepath.Join(path+".locks", "s1.lock")))
	_, err = b.Append(t.Context(), o.Handle, 2, persistencetest.Batch(2, 1))
	persistencetest.RequireCode(t, err, sdk.CodeOwnershipLost, `"s1"`, "lock file is gone")
	_, err = b.Flush(t.Context(), o.Handle)
	persistencetest.RequireCode(t, err, sdk.CodeOwnershipLost, `"s1"`)
	if n := queryInt(t, path, "SELECT count(*) FROM events"); n != 2 {
		t.Fatalf("%d rows after a fenced append; want 2", n)
	}
}

func TestStaleFirstSeqIsSEQ_CONFLICTAndNeverADuplicateRow(t *testing.T) {
	path := dbPath(t)
	b := openBackend(t, sqlite.DefaultConfig(path))
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	appendOK(t, b, o.Handle, persistencetest.Batch(0, 5))
	rows := func(seq int) int64 {
		return queryInt(t, path, "SELECT count(*) FROM events WHERE session_id = 's1' AND seq = ?", seq)
	}

	_, err = b.Append(t.Context(), o.Handle, 3, persistencetest.Batch(3, 2))
	persistencetest.RequireCode(t, err, sdk.CodeSeqConflict, 3, 5)
	if rows(3) != 1 || rows(4) != 1 || queryInt(t, path, "SELECT count(*) FROM events") != 5 {
		t.Fatal("a stale append changed the rows")
	}

	// A writer outside this backend moves next_seq on: the compare-and-set
	// in the transaction sees it.
	rawExec(t, path, `INSERT INTO events(session_id, seq, type, time, data) VALUES ('s1', 5, 'todo/write', 1, '{}')`)
	rawExec(t, path, "UPDATE sessions SET next_seq = 6, revision = revision + 1")
	_, err = b.Append(t.Context(), o.Handle, 5, persistencetest.Batch(5, 1))
	persistencetest.RequireCode(t, err, sdk.CodeSeqConflict, 5, 6)
	if rows(5) != 1 {
		t.Fatalf("seq 5 has %d rows; want 1", rows(5))
	}

	// A row written past next_seq behind the backend's back: the primary
	// key refuses a second row for seq 6, as a SEQ_CONFLICT.
	rawExec(t, path, `INSERT INTO events(session_id, seq, type, time, data) VALUES ('s1', 6, 'todo/write', 1, '{}')`)
	_, err = b.Append(t.Context(), o.Handle, 6, persistencetest.Batch(6, 2))
	persistencetest.RequireCode(t, err, sdk.CodeSeqConflict, 6)
	if rows(6) != 1 || rows(7) != 0 || queryInt(t, path, "SELECT next_seq FROM sessions") != 6 {
		t.Fatal("a conflicting append stored part of its batch")
	}
}

func TestLockHeldPastBusyTimeoutIsBACKEND_BUSY(t *testing.T) {
	path, cfg, b, o := busySession(t)
	appendOK(t, b, o.Handle, persistencetest.Batch(0, 1))

	release := holdWriteLock(t, path)
	start := time.Now()
	_, err := b.Append(t.Context(), o.Handle, 1, persistencetest.Batch(1, 1))
	persistencetest.RequireCode(t, err, sdk.CodeBackendBusy, "busy_timeout 50 ms")
	if !sdk.Retryable(err) || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("BACKEND_BUSY after %v, retryable %t; want a retryable error after ≥ 50 ms", time.Since(start), sdk.Retryable(err))
	}
	release()
	appendOK(t, b, o.Handle, persistencetest.Batch(1, 1)) // nothing was consumed

	// Opening a database waits for the lock too: its schema check runs in
	// BEGIN IMMEDIATE.
	other := newDatabase(t)
	release = holdWriteLock(t, other)
	defer release()
	cfg.Path = other
	_, err = sqlite.Open(t.Context(), cfg)
	persistencetest.RequireCode(t, err, sdk.CodeBackendBusy, other)
}

// busySession opens a backend on a new database with a busy_timeout of
// 50 ms, so that a held write lock fails an operation quickly, and creates
// session s1 there. It returns the database's path, the backend's config
// and the created session.
func busySession(t *testing.T) (path string, cfg sqlite.Config, b *sqlite.Backend, o sdk.Opened) {
	t.Helper()
	path = dbPath(t)
	cfg = sqlite.DefaultConfig(path)
	cfg.BusyTimeout = 50 * time.Millisecond
	b = openBackend(t, cfg)
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	return path, cfg, b, o
}

// holdWriteLock takes the write lock of the database at path on a
// connection of the test's own until release is called.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	conn, err := rawDB(t, path).Conn(t.Context())
	must(t, err)
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return func() {
		conn.ExecContext(t.Context(), "ROLLBACK")
		conn.Close()
	}
}

// TestLookAtAClaimIsNoClaim: an Open(write) of an id with no sessions row
// takes the id's lock for an instant to see whether a create holds it. A
// Create of the id in another process that meets that instant must not take
// the look for a holder: while a plugin process keeps looking, this process
// creates the id every time, and its Open(write) of an id nobody holds is
// SESSION_NOT_FOUND.
func TestLookAtAClaimIsNoClaim(t *testing.T) {
	path := dbPath(t)
	creator := openBackend(t, sqlite.DefaultConfig(path))
	looker := subprocess(t, path)
	for i := range 5 {
		id := "s" + strconv.Itoa(i)
		// An abandoned create leaves the id's lock file, so every look
		// flocks it.
		o, err := creator.Create(t.Context(), header(id))
		must(t, err)
		must(t, creator.Close(t.Context(), o.Handle))
		var stop atomic.Bool
		var looks atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			for !stop.Load() {
				looks.Add(1)
				if _, err := looker.Open(t.Context(), id, sdk.AccessWrite); sdk.CodeOf(err) != sdk.CodeSessionNotFound && sdk.CodeOf(err) != sdk.CodeAlreadyOwned {
					t.Errorf("the looker's Open(write) of %s: %v", id, err)
					return
				}
			}
		}()
		for j := 0; looks.Load() < 100; j++ { // calls while the looker makes 100 looks
			select {
			case <-done:
				return // the looker failed
			default:
			}
			var err error
			if j%2 == 0 {
				var o sdk.Opened
				if o, err = creator.Create(t.Context(), header(id)); err == nil {
					must(t, creator.Close(t.Context(), o.Handle))
				}
			} else if _, err = creator.Open(t.Context(), id, sdk.AccessWrite); sdk.CodeOf(err) == sdk.CodeSessionNotFound {
				err = nil
			}
			if err != nil {
				stop.Store(true)
				<-done
				t.Fatalf("call %d on %s, which nobody holds, while another process looks at its claim: %v", j, id, err)
			}
		}
		stop.Store(true)
		<-done
	}
}
