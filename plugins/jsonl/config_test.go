package jsonl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

func TestParseConfig(t *testing.T) {
	cwd, _ := os.Getwd()
	ok := []struct {
		in   string
		want Config
	}{
		{`{"root":"/srv/s"}`, Config{Root: "/srv/s", Compression: "zstd", ZstdLevel: "default"}},
		{`{"compression":"zstd","root":"logbook-data","zstd_level":"default"}`, Config{Root: filepath.Join(cwd, "logbook-data"), Compression: "zstd", ZstdLevel: "default"}},
		{`{"compression":"none","root":"/srv/s"}`, Config{Root: "/srv/s", Compression: "none"}},
		{` {"root":"/srv/s","zstd_level":"best"} `, Config{Root: "/srv/s", Compression: "zstd", ZstdLevel: "best"}},
	}
	for _, c := range ok {
		got, err := ParseConfig([]byte(c.in))
		if err != nil || got != c.want {
			t.Errorf("ParseConfig(%s) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, names string }{
		{`{}`, "root"},
		{`{"root":""}`, "root"},
		{`{"root":"/x","compresion":"zstd"}`, "compresion"},
		{`{"root":"/x","compression":"gzip"}`, `"gzip"`},
		{`{"root":"/x","zstd_level":"max"}`, `"max"`},
		{`{"root":"/x","compression":"none","zstd_level":"best"}`, "zstd_level"},
		{`[]`, "object"},
		{``, "object"},
		{`{"root":"/x"} {}`, "after"},
		{`{"root":7}`, "root"},
	}
	for _, c := range bad {
		_, err := ParseConfig([]byte(c.in))
		persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, c.names)
	}
}

func TestNewRequiresAReadableDirectoryRoot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(Config{Root: file})
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, file, "not a directory")
	// A missing root is fine: it is created, 0700, at the first
	// materialization, with its missing parents.
	root := filepath.Join(dir, "a", "b", "root")
	b, err := New(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	storeEvents(t, b, "s1", persistencetest.Batch(0, 1))
	for _, p := range []string{root, filepath.Join(root, "s1")} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: mode %v, %v; want a 0700 directory", p, fi.Mode(), err)
		}
	}
	for _, n := range []string{logName(sdk.FormatVersion, true), lockName} {
		fi, err := os.Stat(filepath.Join(root, "s1", n))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v, %v; want a 0600 file", n, fi.Mode(), err)
		}
	}
}

// TestUnconfiguredBackend: the plugin's backend refuses every call but
// Describe and Close with CONFIG_INVALID until Configure, and Configure
// refuses a bad config without changing anything.
func TestUnconfiguredBackend(t *testing.T) {
	b := ServeConfig("test").Persistence.(*Backend)
	ctx := t.Context()
	if d, err := b.Describe(ctx); err != nil || d.Name != Name {
		t.Fatalf("Describe = %+v, %v", d, err)
	}
	_, err := b.Create(ctx, testHeader("s1"))
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, "root")
	_, err = b.Open(ctx, "s1", sdk.AccessRead)
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid)
	_, err = b.Stat(ctx, "s1")
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid)
	err = b.List(ctx, func(sdk.ListEntry) error { return nil })
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid)
	persistencetest.RequireCode(t, b.Configure(ctx, []byte(`{"root":""}`)), sdk.CodeConfigInvalid)
	if err := b.Close(ctx, "nothing"); err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	if err := b.Configure(ctx, []byte(`{"root":"`+root+`","compression":"none"}`)); err != nil {
		t.Fatal(err)
	}
	if d, _ := b.Describe(ctx); d.Compression != CompressionNone {
		t.Fatalf("Describe compression %q; want none", d.Compression)
	}
	o, err := b.Create(ctx, testHeader("s1"))
	if err != nil {
		t.Fatal(err)
	}
	persistencetest.RequireCode(t, b.Configure(ctx, []byte(`{"root":"`+root+`"}`)), sdk.CodeConfigInvalid, "open handles")
	b.Close(ctx, o.Handle)
	if err := b.Configure(ctx, []byte(`{"root":"`+root+`"}`)); err != nil {
		t.Fatalf("Configure with no handle open: %v", err)
	}
}
