package errorsdoc_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/internal/errorsdoc"
)

// TestErrorsDocUpToDate regenerates docs/errors.md in memory and fails when
// the committed file differs.
func TestErrorsDocUpToDate(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "codes.go"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := errorsdoc.Generate("codes.go", src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "errors.md"))
	if err != nil {
		t.Fatalf("docs/errors.md is stale: run go generate ./sdk (%v)", err)
	}
	if !bytes.Equal(bytes.TrimRight(got, "\n"), want) {
		t.Fatal("docs/errors.md is stale: run go generate ./sdk")
	}
}

// TestEveryCodeDocumented checks that each code of sdk.AllCodes has a
// section and that the retry column follows sdk.Retryable.
func TestEveryCodeDocumented(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "codes.go"))
	if err != nil {
		t.Fatal(err)
	}
	md, err := errorsdoc.Generate("codes.go", src)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sdk.AllCodes() {
		if !bytes.Contains(md, []byte("\n### "+string(c)+"\n")) {
			t.Errorf("no section for %s", c)
		}
	}
	if !bytes.Contains(md, []byte("Retry: yes.")) || !bytes.Contains(md, []byte("Retry: no.")) {
		t.Error("retry column does not show both answers")
	}
}

// TestMissingDocFails checks that a code without a doc comment is refused.
func TestMissingDocFails(t *testing.T) {
	src := []byte("package sdk\n\n// Area: things.\nconst (\n\tCodeX Code = \"X\"\n)\n")
	_, err := errorsdoc.Parse("codes.go", src)
	if err == nil || !strings.Contains(err.Error(), "CodeX has no doc comment") {
		t.Fatalf("err = %v, want a missing doc comment for CodeX", err)
	}
}
