package durable_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
)

func TestFitNameKeepsANameThatFits(t *testing.T) {
	for _, stem := range []string{"s", strings.Repeat("~C3~A9", 40), strings.Repeat("a", sdk.MaxFileNameBytes-len(".lock"))} {
		if got := durable.FitName(stem, ".lock"); got != stem+".lock" {
			t.Fatalf("FitName(%d-byte stem) = %q; want it unchanged", len(stem), got)
		}
	}
}

func TestFitNameShortensALongNameWithAHash(t *testing.T) {
	seen := map[string]string{}
	for _, base := range []string{"a", "é", "~C3~A9", "日本"} {
		for n := sdk.MaxFileNameBytes - 30; n < 2*sdk.MaxFileNameBytes; n += 7 {
			stem := strings.Repeat(base, n/len(base)+1)[:n]
			for _, suffix := range []string{".lock", ".1796000000000.jsonl", "-1796000000000.salvaged.bin"} {
				got := durable.FitName(stem, suffix)
				if len(got) > sdk.MaxFileNameBytes || !strings.HasSuffix(got, suffix) {
					t.Fatalf("FitName(%d-byte stem, %q) = %d bytes: %q", len(stem), suffix, len(got), got)
				}
				if utf8.ValidString(stem) && !utf8.ValidString(got) {
					t.Fatalf("FitName(%q…) cut a UTF-8 sequence: %q", stem[:8], got)
				}
				if again := durable.FitName(stem, suffix); again != got {
					t.Fatalf("FitName is not deterministic: %q, then %q", got, again)
				}
				if len(stem)+len(suffix) > sdk.MaxFileNameBytes && !strings.Contains(got, "~h") {
					t.Fatalf("FitName(%d-byte stem, %q) = %q, without its hash", len(stem), suffix, got)
				}
				if prev, dup := seen[got]; dup && prev != stem {
					t.Fatalf("two stems give the name %q", got)
				}
				seen[got] = stem
			}
		}
	}
}

// A name of sdk.MaxFileNameBytes is written: its temporary name is cut to
// fit too, and still counts as temporary.
func TestWriteFileOfTheLongestName(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("é", (sdk.MaxFileNameBytes-4)/2) + ".bin"
	if err := durable.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
		t.Fatalf("WriteFile of a %d-byte name: %v", len(name), err)
	}
	requireOnly(t, dir, name)
	if err := durable.ReplaceFile(filepath.Join(dir, name), []byte("y"), 0o600); err != nil {
		t.Fatalf("ReplaceFile of a %d-byte name: %v", len(name), err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != "y" {
		t.Fatalf("file = %q", b)
	}
}

func ExampleFitName() {
	fmt.Println(durable.FitName("s1", ".lock"))
	long := durable.FitName(strings.Repeat("~C3~A9", 40), ".1796000000000.jsonl")
	fmt.Println(len(long), long[len(long)-38:])
	// Output:
	// s1.lock
	// 255 ~h64ea58ba538e330e.1796000000000.jsonl
}
