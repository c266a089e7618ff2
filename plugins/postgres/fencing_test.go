package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/plugins/postgres"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// host is one logbook host over a shared schema: a backend instance with
// its own host name, reached in process or as a plugin subprocess.
type host struct {
	name string
	p    sdk.Persistence
}

// hostName is a host name unique to this run, so the ownership connection
// it names in pg_stat_activity is this test's.
func hostName(prefix string) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return prefix + "-" + hex.EncodeToString(r[:])
}

func newHost(t *testing.T, subprocessMode bool, w where, name string) host {
	t.Helper()
	if subprocessMode {
		return host{name, startPlugin(t, configJSON(t, w, map[string]any{"host_name": name}))}
	}
	cfg := postgres.DefaultConfig(w.dsn)
	cfg.Schema, cfg.HostName = w.schema, name
	return host{name, openBackend(t, cfg)}
}

// terminateOwner ends the server process of host's ownership connection
// with pg_terminate_backend, waiting until it has exited.
func terminateOwner(t *testing.T, dsn, hostName string) {
	t.Helper()
	c := pgtest.Conn(t, dsn)
	var n int
	err := c.QueryRow(t.Context(), `SELECT count(*) FROM (SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE application_name = $1) t`,
		"logbook owner "+hostName).Scan(&n)
	if err != nil || n != 1 {
		t.Fatalf("terminating the ownership connection of %s: %d terminated, %v; want 1", hostName, n, err)
	}
}

func appendEvents(t *testing.T, p sdk.Persistence, handle string, first, n int) {
	t.Helper()
	if _, err := p.Append(t.Context(), handle, sdk.Seq(first), persistencetest.Batch(first, n)); err != nil {
		t.Fatalf("Append(%s, %d, %d events): %v", handle, first, n, err)
	}
}

func readAll(t *testing.T, p sdk.Persistence, id string) [][]byte {
	t.Helper()
	o, err := p.Open(t.Context(), id, sdk.AccessRead)
	if err != nil {
		t.Fatalf("Open(%q, read): %v", id, err)
	}
	defer p.Close(t.Context(), o.Handle)
	return persistencetest.ReadAll(t, p, o.Handle)
}

// TestTerminatedOwnershipConnectionFencesTheWriter: after
// pg_terminate_backend of a host's ownership connection, its next append
// is OWNERSHIP_LOST, and so is every one after it, also once another host
// has taken the session over; the other host's Open(write) succeeds and
// the first host's is then ALREADY_OWNED naming it.
func TestTerminatedOwnershipConnectionFencesTheWriter(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, sub := range []bool{false, true} {
		name := "in-process"
		if sub {
			name = "subprocess"
		}
		t.Run(name, func(t *testing.T) {
			w := where{dsn, pgtest.Schema(t, dsn)}
			a := newHost(t, sub, w, hostName("host-a"))
			o, err := a.p.Create(t.Context(), sdk.Header{ID: "s1", CreatedAt: 1})
			if err != nil {
				t.Fatal(err)
			}
			appendEvents(t, a.p, o.Handle, 0, 3)
			terminateOwner(t, dsn, a.name)
			for range 2 {
				_, err = a.p.Append(t.Context(), o.Handle, 3, persistencetest.Batch(3, 1))
				persistencetest.RequireCode(t, err, sdk.CodeOwnershipLost, "s1")
				if sdk.Retryable(err) {
					t.Fatalf("OWNERSHIP_LOST is retryable: %v", err)
				}
			}
			_, err = a.p.Flush(t.Context(), o.Handle)
			persistencetest.RequireCode(t, err, sdk.CodeOwnershipLost, "s1")

			b := newHost(t, sub, w, hostName("host-b"))
			ob, err := b.p.Open(t.Context(), "s1", sdk.AccessWrite)
			if err != nil {
				t.Fatalf("the other host's Open(write) after the first lost its claim: %v", err)
			}
			appendEvents(t, b.p, ob.Handle, 3, 2)
			_, err = a.p.Append(t.Context(), o.Handle, 5, persistencetest.Batch(5, 1))
			persistencetest.RequireCode(t, err, sdk.CodeOwnershipLost, "s1")
			a.p.Close(t.Context(), o.Handle)
			_, err = a.p.Open(t.Context(), "s1", sdk.AccessWrite)
			persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, "s1", b.name)
			if got := readAll(t, a.p, "s1"); len(got) != 5 {
				t.Fatalf("the log holds %d events; want the 3 of the first host and the 2 of the second", len(got))
			}
		})
	}
}

// TestSecondHostIsRefusedNamingTheOwner: while one host holds a session,
// another host's Open(write) is ALREADY_OWNED and its Create
// SESSION_ALREADY_EXISTS, both naming the owner host; a read open works.
func TestSecondHostIsRefusedNamingTheOwner(t *testing.T) {
	dsn := pgtest.DSN(t)
	w := where{dsn, pgtest.Schema(t, dsn)}
	a, b := newHost(t, false, w, hostName("host-a")), newHost(t, true, w, hostName("host-b"))
	o, err := a.p.Create(t.Context(), sdk.Header{ID: "s1", CreatedAt: 1})
	if err != nil {
		t.Fatal(err)
	}
	appendEvents(t, a.p, o.Handle, 0, 1)
	_, err = b.p.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, "s1", a.name)
	_, err = b.p.Create(t.Context(), sdk.Header{ID: "s1", CreatedAt: 1})
	persistencetest.RequireCode(t, err, sdk.CodeSessionAlreadyExists, "s1")
	if got := readAll(t, b.p, "s1"); len(got) != 1 {
		t.Fatalf("the other host reads %d events; want 1", len(got))
	}
}

// TestLateCommitAfterTakeoverIsFenced: an append transaction of a host
// that is still open when the host loses its claim and another host takes
// the session over can no longer commit: OWNERSHIP_LOST, and the log holds
// only what the new owner wrote after the old owner's last commit.
func TestLateCommitAfterTakeoverIsFenced(t *testing.T) {
	dsn := pgtest.DSN(t)
	w := where{dsn, pgtest.Schema(t, dsn)}
	a := newHost(t, false, w, hostName("host-a"))
	o, err := a.p.Create(t.Context(), sdk.Header{ID: "s1", CreatedAt: 1})
	if err != nil {
		t.Fatal(err)
	}
	appendEvents(t, a.p, o.Handle, 0, 2)
	inTx, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	postgres.SetBeforeCAS(a.p.(*postgres.Backend), func() {
		once.Do(func() {
			close(inTx)
			<-release
		})
	})
	done := make(chan error, 1)
	go func() {
		_, err := a.p.Append(context.Background(), o.Handle, 2, persistencetest.Batch(2, 3))
		done <- err
	}()
	<-inTx
	terminateOwner(t, dsn, a.name)
	b := newHost(t, false, w, hostName("host-b"))
	ob, err := b.p.Open(t.Context(), "s1", sdk.AccessWrite)
	if err != nil {
		close(release)
		t.Fatalf("takeover: %v", err)
	}
	close(release)
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the old owner's append did not return")
	}
	persistencetest.RequireCode(t, err, sdk.CodeOwnershipLost, "s1")
	appendEvents(t, b.p, ob.Handle, 2, 1)
	got := readAll(t, b.p, "s1")
	if len(got) != 3 || !strings.Contains(string(got[2]), `"seq":2`) {
		t.Fatalf("the log holds %d events; want 2 of the old owner and 1 of the new", len(got))
	}
}

// TestOwnerEpochFencesAnOlderOwner: a higher owner epoch in the sessions
// row (a takeover) fences the handle even while its advisory lock is held:
// the epoch alone decides.
func TestOwnerEpochFencesAnOlderOwner(t *testing.T) {
	dsn := pgtest.DSN(t)
	w := where{dsn, pgtest.Schema(t, dsn)}
	a := newHost(t, false, w, hostName("host-a"))
	o, err := a.p.Create(t.Context(), sdk.Header{ID: "s1", CreatedAt: 1})
	if err != nil {
		t.Fatal(err)
	}
	appendEvents(t, a.p, o.Handle, 0, 1)
	pgtest.Exec(t, dsn, "UPDATE "+w.schema+".sessions SET owner_epoch = owner_epoch + 1, owner_host = 'elsewhere' WHERE id = 's1'")
	_, err = a.p.Append(t.Context(), o.Handle, 1, persistencetest.Batch(1, 1))
	persistencetest.RequireCode(t, err, sdk.CodeOwnershipLost, "s1", "elsewhere", "owner epoch 2")
	if got := readAll(t, a.p, "s1"); len(got) != 1 {
		t.Fatalf("the log holds %d events after a fenced append; want 1", len(got))
	}
}

// TestThousandLiveSessionsOnOneBackend: one backend with two pooled
// connections holds the write claims of 1,000 sessions at once (all on its
// one ownership connection) and appends to each.
func TestThousandLiveSessionsOnOneBackend(t *testing.T) {
	dsn := pgtest.DSN(t)
	w := where{dsn, pgtest.Schema(t, dsn)}
	name := hostName("host-a")
	cfg := postgres.DefaultConfig(dsn)
	cfg.Schema, cfg.HostName, cfg.MaxConns = w.schema, name, 2
	a := openBackend(t, cfg)
	const n = 1000
	hs := make([]string, n)
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < n; i += 8 {
				ids[i] = fmt.Sprintf("s%04d", i)
				o, err := a.Create(t.Context(), sdk.Header{ID: ids[i], CreatedAt: 1})
				if err == nil {
					hs[i] = o.Handle
					_, err = a.Append(t.Context(), o.Handle, 0, persistencetest.Batch(0, 2))
				}
				errs[i] = err
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	c := pgtest.Conn(t, dsn)
	var locks, conns int
	if err := c.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.locktype = 'advisory' AND a.application_name = $1),
		(SELECT count(*) FROM pg_stat_activity WHERE application_name IN ($1, $2))`, "logbook owner "+name, "logbook "+name).Scan(&locks, &conns); err != nil {
		t.Fatal(err)
	}
	if locks != n {
		t.Fatalf("the ownership connection holds %d advisory locks; want %d", locks, n)
	}
	if conns > cfg.MaxConns+1 {
		t.Fatalf("%d connections for %d live sessions", conns, n)
	}
	b := newHost(t, false, w, hostName("host-b"))
	_, err := b.p.Open(t.Context(), ids[n/2], sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, ids[n/2], name)
	for i, h := range hs {
		if _, err := a.Append(t.Context(), h, 2, persistencetest.Batch(2, 1)); err != nil {
			t.Fatalf("second append to %s: %v", ids[i], err)
		}
	}
}
