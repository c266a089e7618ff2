package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The serve command's own refusals, before it starts anything: an
// unreadable or empty token file is a usage error (exit 2); a non-loopback
// address without any credential (no --token-file, no token in the store,
// no JWT key) is CONFIG_INVALID (exit 1).
func TestServeRefusals(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("fifteen-bytes!!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		exit int
		last string
	}{
		{[]string{"serve", "--token-file", filepath.Join(dir, "missing")}, 2, "logbook: USAGE: cannot read --token-file"},
		{[]string{"serve", "--token-file", empty}, 2, "logbook: USAGE: --token-file " + empty + " is empty"},
		{[]string{"serve", "--token-file", short}, 1, "logbook: CONFIG_INVALID: --token-file " + short + ": the bearer token is 15 bytes; it must be at least 16"},
		{[]string{"serve", "--addr", "0.0.0.0:7420"}, 1, "logbook: CONFIG_INVALID: 0.0.0.0:7420 is not a loopback address: a credential is required"},
		{[]string{"serve", "extra"}, 2, "logbook: USAGE: "},
	} {
		var stdout, stderr bytes.Buffer
		exit := execute(context.Background(), append(tc.args, "--data", dir), strings.NewReader(""), &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if exit != tc.exit || !strings.HasPrefix(lines[len(lines)-1], tc.last) || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit %d and %q", tc.args, exit, stderr.String(), stdout.String(), tc.exit, tc.last)
		}
	}
}

// readToken trims the token, refuses one shorter than 16 bytes and warns
// when the file's group or others may read it.
func TestReadToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("  s3cret-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	if tok, err := readToken(path, &warn); err != nil || tok != "s3cret-0123456789" || warn.Len() != 0 {
		t.Fatalf("readToken: %q (%v), warning %q", tok, err, warn.String())
	}
	for _, mode := range []os.FileMode{0o640, 0o604} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		warn.Reset()
		if tok, err := readToken(path, &warn); err != nil || tok != "s3cret-0123456789" || !strings.Contains(warn.String(), "readable by its group or others") {
			t.Fatalf("mode %o: %q (%v), warning %q", mode, tok, err, warn.String())
		}
	}
	if tok, err := readToken("", &warn); err != nil || tok != "" {
		t.Fatalf("no token file: %q (%v)", tok, err)
	}
}
