package compaction

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

func TestSafeArtifactName(t *testing.T) {
	cases := map[string]string{
		"":                            "output.txt",
		"report.txt":                  "report.txt",
		"../../etc/passwd":            "....etcpasswd",
		"a b/c\\d:e*f":                "abcdef",
		"日本.log":                      ".log",
		"%%%":                         "output.txt",
		"Build_Log-2.TXT":             "Build_Log-2.TXT",
		strings.Repeat("ab", 50):      strings.Repeat("ab", 32),
		strings.Repeat("é", 40) + "x": "x",
	}
	for in, want := range cases {
		if got := safeArtifactName(in); got != want {
			t.Errorf("safeArtifactName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLocalStoreSave(t *testing.T) {
	root := t.TempDir()
	store, err := NewLocalStore(root)
	if err != nil {
		t.Fatal(err)
	}
	owner, src := ArtifactOwner{SessionID: "sess/ü"}, ArtifactSource{ToolName: "bash", CallID: "c1"}
	a, err := store.Save(context.Background(), owner, src, "out.txt", "payload")
	if err != nil {
		t.Fatal(err)
	}
	b, err := store.Save(context.Background(), owner, src, "out.txt", "payload 2")
	if err != nil {
		t.Fatal(err)
	}
	if a.Locator == b.Locator || filepath.Dir(a.Locator) != filepath.Dir(b.Locator) {
		t.Fatalf("two saves: %s and %s", a.Locator, b.Locator)
	}
	if got, _ := os.ReadFile(a.Locator); string(got) != "payload" || a.Bytes != 7 {
		t.Fatalf("artifact %+v holds %q", a, got)
	}
	c, err := store.Save(context.Background(), ArtifactOwner{SessionID: "other"}, src, "", "x")
	if err != nil || filepath.Dir(c.Locator) == filepath.Dir(a.Locator) || !strings.HasSuffix(c.Locator, "-output.txt") {
		t.Fatalf("another session: %+v, %v", c, err)
	}
	_, err = NewLocalStore("")
	anaRequireCode(t, err, sdk.CodeConfigInvalid)
}

func TestLocalStoreIOError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := NewLocalStore(file)
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Save(context.Background(), ArtifactOwner{SessionID: "s1"}, ArtifactSource{ToolName: "bash", CallID: "c9"}, "x", "data")
	e := anaRequireCode(t, err, sdk.CodeIOError, "bash", "c9", file)
	if e.SessionID != "s1" {
		t.Fatalf("SessionID %q", e.SessionID)
	}
}
