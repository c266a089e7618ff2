// Package pgtest gives tests a real PostgreSQL database to work in: the
// DSN of the test database (LOGBOOK_TEST_PG_DSN, or the local socket's
// database test), a schema of their own that is dropped when the test
// ends, and a connection of their own to change things behind a
// backend's back.
//
// With CI=true an unreachable database fails the test; otherwise the test
// skips, saying how to point it at a database.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultDSN is the test database when LOGBOOK_TEST_PG_DSN is unset: the
// local socket's database test.
const DefaultDSN = "host=/var/run/postgresql dbname=test"

// DSN returns the test database's DSN once it has answered a ping. An
// unreachable database fails t under CI=true and skips it otherwise.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("LOGBOOK_TEST_PG_DSN")
	if dsn == "" {
		dsn = DefaultDSN
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err == nil {
		err = c.Ping(ctx)
		c.Close(ctx)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pgtest: the test database is unreachable (LOGBOOK_TEST_PG_DSN, default %q): %v", DefaultDSN, err)
		}
		t.Skipf("pgtest: no test database (set LOGBOOK_TEST_PG_DSN, default %q; under CI=true this fails): %v", DefaultDSN, err)
	}
	return dsn
}

// Schema returns a fresh schema name (not created: the code under test
// creates it) and drops the schema, with everything in it, when t ends.
func Schema(t testing.TB, dsn string) string {
	t.Helper()
	var r [6]byte
	_, _ = rand.Read(r[:])
	name := "logbook_test_" + hex.EncodeToString(r[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("pgtest: dropping schema %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("pgtest: dropping schema %s: %v", name, err)
		}
	})
	return name
}

// Conn is a connection of the test's own to dsn, closed when t ends.
func Conn(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("pgtest: connecting: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// Exec runs sql with args on a connection of the test's own.
func Exec(t testing.TB, dsn, sql string, args ...any) {
	t.Helper()
	c := Conn(t, dsn)
	if _, err := c.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
	c.Close(context.Background())
}
