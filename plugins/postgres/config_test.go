package postgres_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/plugins/postgres"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

func TestParseConfigDefaultsAndKeys(t *testing.T) {
	c, err := postgres.ParseConfig([]byte(`{"dsn":"host=/tmp dbname=x","schema":"s_1","max_conns":3,"host_name":"web-1","compress_data":false,"compress_min_bytes":64}`))
	if err != nil {
		t.Fatal(err)
	}
	want := postgres.Config{DSN: "host=/tmp dbname=x", Schema: "s_1", MaxConns: 3, HostName: "web-1", CompressData: false, CompressMinBytes: 64}
	if c != want {
		t.Fatalf("ParseConfig = %+v; want %+v", c, want)
	}
	d, err := postgres.ParseConfig([]byte(`{"dsn":"host=/tmp","schema":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.Schema != postgres.DefaultSchema || d.MaxConns != postgres.DefaultMaxConns || !d.CompressData || d.CompressMinBytes != postgres.DefaultCompressMinBytes || !strings.Contains(d.HostName, ":") {
		t.Fatalf("defaults: %+v", d)
	}
}

func TestParseConfigRefusesBadValuesNamingTheKey(t *testing.T) {
	for _, c := range []struct{ config, key string }{
		{`{}`, "dsn"},
		{`{"dsn":""}`, "dsn"},
		{`{"dsn":7}`, "dsn"},
		{`{"dsn":"host=/tmp","sheme":"x"}`, "sheme"},
		{`{"dsn":"host=/tmp","schema":"Logbook"}`, "schema"},
		{`{"dsn":"host=/tmp","schema":"pg_x"}`, "schema"},
		{`{"dsn":"host=/tmp","schema":"a;drop"}`, "schema"},
		{`{"dsn":"host=/tmp","max_conns":0}`, "max_conns"},
		{`{"dsn":"host=/tmp","max_conns":1001}`, "max_conns"},
		{`{"dsn":"host=/tmp","max_conns":2.5}`, "max_conns"},
		{`{"dsn":"host=/tmp","host_name":""}`, "host_name"},
		{`{"dsn":"host=/tmp","host_name":"a\nb"}`, "host_name"},
		{`{"dsn":"host=/tmp","compress_data":"yes"}`, "compress_data"},
		{`{"dsn":"host=/tmp","compress_min_bytes":63}`, "compress_min_bytes"},
		{`[1]`, "dsn"},
	} {
		_, err := postgres.ParseConfig([]byte(c.config))
		persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, c.key)
	}
}

// TestDSNPasswordNeverShows: a DSN's password appears in no error, neither
// of a DSN that does not parse nor of a database that cannot be reached,
// in process or from a plugin subprocess's Configure.
func TestDSNPasswordNeverShows(t *testing.T) {
	const pw = "Pw-secret-4711"
	dsns := []string{
		"host=127.0.0.1 port=1 dbname=test user=nobody password=" + pw + " connect_timeout=5",
		"postgres://nobody:" + pw + "@127.0.0.1:1/test?connect_timeout=5",
		"postgres://nobody:" + pw + "@127.0.0.1:notaport/test",
	}
	for _, dsn := range dsns {
		cfg := postgres.DefaultConfig(dsn)
		_, err := postgres.Open(t.Context(), cfg)
		if err == nil {
			t.Fatalf("Open of an unreachable database succeeded")
		}
		if c := sdk.CodeOf(err); c != sdk.CodeIOError && c != sdk.CodeConfigInvalid {
			t.Fatalf("Open: %v; want IO_ERROR or CONFIG_INVALID", err)
		}
		for _, text := range []string{err.Error(), errors.Unwrap(err).Error()} {
			if strings.Contains(text, pw) {
				t.Fatalf("the error shows the password: %s", text)
			}
		}
		_, err = plugintest.Launch(t, exec.Command(logbookBin, "plugin", postgres.Name), configJSON(t, where{dsn: dsn, schema: "logbook"}, nil))
		if err == nil || strings.Contains(err.Error(), pw) {
			t.Fatalf("starting the plugin: %v; want an error without the password", err)
		}
	}
}

// TestNewerSchemaVersionIsRefused: a schema whose schema_version is newer
// than this build's is SCHEMA_MISMATCH naming both versions, and is left
// alone; so is a schema with tables that are not logbook's.
func TestNewerSchemaVersionIsRefused(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	cfg := postgres.DefaultConfig(dsn)
	cfg.Schema = schema
	openBackend(t, cfg)
	pgtest.Exec(t, dsn, "UPDATE "+schema+".schema_version SET version = 99")
	_, err := postgres.Open(t.Context(), cfg)
	persistencetest.RequireCode(t, err, sdk.CodeSchemaMismatch, schema, 99, postgres.SchemaVersion)
	var v int
	if err := pgtest.Conn(t, dsn).QueryRow(t.Context(), "SELECT version FROM "+schema+".schema_version").Scan(&v); err != nil || v != 99 {
		t.Fatalf("schema_version after the refusal: %d, %v; want 99 unchanged", v, err)
	}

	other := pgtest.Schema(t, dsn)
	pgtest.Exec(t, dsn, "CREATE SCHEMA "+other+"; CREATE TABLE "+other+".mine(x int)")
	cfg.Schema = other
	_, err = postgres.Open(t.Context(), cfg)
	persistencetest.RequireCode(t, err, sdk.CodeSchemaMismatch, other, "not a logbook schema")
}

// TestExampleConfigIsAccepted: the block of config/examples/postgres.hcl,
// as the config package hands it to the plugin, parses.
func TestExampleConfigIsAccepted(t *testing.T) {
	t.Setenv("LOGBOOK_PG_DSN", "host=/var/run/postgresql dbname=logbook")
	t.Setenv("HOSTNAME", "web-1")
	c, err := config.Load(filepath.Join("..", "..", "config", "examples", "postgres.hcl"), config.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := postgres.ParseConfig(c.Persistence[0].Config)
	if err != nil {
		t.Fatal(err)
	}
	if got.DSN != "host=/var/run/postgresql dbname=logbook" || got.HostName != "web-1" || got.Schema != "logbook" {
		t.Fatalf("ParseConfig of the example = %+v", got)
	}
}
