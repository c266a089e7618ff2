package multihost

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/internal/testserve"
)

const (
	startTimeout = 60 * time.Second
	exitTimeout  = 30 * time.Second
)

// cluster is a set of serve hosts over one PostgreSQL schema.
type cluster struct {
	t      *testing.T
	dsn    string
	schema string
	dir    string
	hosts  []*host // every host started, in order
}

// host is one `logbook serve` process of a cluster and a client of it.
type host struct {
	name string
	p    *testserve.Process
	c    *client.Client
	dead bool
}

// newCluster makes a cluster over a fresh schema of the test database; the
// test's end stops every host and drops the schema.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	dsn := pgtest.DSN(t)
	cl := &cluster{t: t, dsn: dsn, schema: pgtest.Schema(t, dsn), dir: t.TempDir()}
	t.Cleanup(func() {
		for _, h := range cl.hosts {
			h.stop()
		}
	})
	return cl
}

// start starts a host named name (the owner name the database records,
// made unique per test) and waits until it listens.
func (cl *cluster) start(name string) *host {
	cl.t.Helper()
	name = name + "-" + cl.schema[len(cl.schema)-6:]
	cfg := filepath.Join(cl.dir, name+".hcl")
	body := fmt.Sprintf("persistence \"postgres\" {\n  dsn       = %s\n  schema    = %s\n  host_name = %s\n}\n",
		strconv.Quote(cl.dsn), strconv.Quote(cl.schema), strconv.Quote(name))
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		cl.t.Fatal(err)
	}
	data := filepath.Join(cl.dir, name)
	p, err := testserve.Start(logbookBin, startTimeout, "--config", cfg, "--data", data, "--log-level", "warn")
	if err != nil {
		cl.t.Fatalf("starting host %s: %v", name, err)
	}
	h := &host{name: name, p: p, c: client.New(p.Addr(), client.Options{})}
	cl.hosts = append(cl.hosts, h)
	return h
}

// kill kills the host and its plugins with SIGKILL.
func (h *host) kill(t *testing.T) {
	t.Helper()
	h.dead = true
	h.c.Close()
	if err := h.p.Kill9(exitTimeout); err != nil {
		t.Fatalf("killing host %s: %v", h.name, err)
	}
}

// stop ends a host that is still running.
func (h *host) stop() {
	if h.dead {
		return
	}
	h.dead = true
	h.c.Close()
	_ = h.p.Kill9(exitTimeout)
}
