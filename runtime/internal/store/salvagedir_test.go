package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
)

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// artifactsIn lists the artifacts of dir: every name but the salvage lock.
func artifactsIn(t *testing.T, dir string) []string {
	t.Helper()
	return slices.DeleteFunc(dirNames(t, dir), func(n string) bool { return n == salvageLockName })
}

// A child id of 80 bytes, each escaped in the artifact's name, gives a name
// that is shortened to fit; Delete finds it again, and only for that child.
func TestSalvageArtifactNamesOfLongIDsFit(t *testing.T) {
	p := memory.New()
	crashedLog(t, p, "src")
	if err := memory.HooksOf(p).Damage("src", 3, "bad"); err != nil {
		t.Fatal(err)
	}
	st, dir := salvageStore(t, p)
	long, other := strings.Repeat("é", 40), strings.Repeat("é", 39)+"e"
	for _, id := range []string{long, other} {
		child, rep, err := st.Salvage(ctx, SalvageRequest{SourceID: "src", ChildID: id})
		if err != nil {
			t.Fatalf("Salvage as a %d-byte id: %v", len(id), err)
		}
		if name := filepath.Base(rep.Artifact); len(name) > sdk.MaxFileNameBytes || !strings.HasSuffix(name, ".salvaged.bin") {
			t.Fatalf("artifact name of %d bytes: %s", len(name), name)
		}
		if err := st.Release(ctx, child); err != nil {
			t.Fatal(err)
		}
	}
	if got := artifactsIn(t, dir); len(got) != 2 {
		t.Fatalf("salvage directory holds %q; want two artifacts", got)
	}
	if _, err := st.Delete(ctx, long, byTest); err != nil {
		t.Fatal(err)
	}
	got := artifactsIn(t, dir)
	if len(got) != 1 || !isSalvageArtifactOf(got[0], other) {
		t.Fatalf("after deleting one child the salvage directory holds %q; want the other child's artifact", got)
	}
}

// What a killed salvage leaves — its intent, its pending bytes, a
// temporary file of a durable write — the next salvage finishes when the
// intent's child is stored and removes when it is not.
func TestASalvageFinishesOrAnnulsTheOneAKillInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name        string
		childStored bool
		pending     bool
	}{
		{"child stored, bytes pending", true, true},
		{"child stored, bytes already linked", true, false},
		{"child not stored", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := memory.New()
			crashedLog(t, p, "src")
			if err := memory.HooksOf(p).Damage("src", 3, "bad"); err != nil {
				t.Fatal(err)
			}
			if tc.childStored {
				crashedLog(t, p, "killed")
			}
			st, dir := salvageStore(t, p)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			name := salvageArtifactName("killed", 1796000000000)
			write := func(n, data string) {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write(salvageIntentName, `{"child":"killed","artifact":"`+name+`"}`)
			if tc.pending {
				write(salvagePendingName, "damaged bytes")
			} else {
				write(name, "damaged bytes")
			}
			write(".x.salvaged.bin.0123456789ab.tmp", "half")

			child, rep, err := st.Salvage(ctx, SalvageRequest{SourceID: "src", ChildID: "next"})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Release(ctx, child); err != nil {
				t.Fatal(err)
			}
			want := []string{filepath.Base(rep.Artifact)}
			if tc.childStored {
				want = append(want, name)
				if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(b, []byte("damaged bytes")) {
					t.Fatalf("the interrupted salvage's artifact = %q, %v", b, err)
				}
			}
			slices.Sort(want)
			if got := artifactsIn(t, dir); !slices.Equal(got, want) {
				t.Fatalf("salvage directory holds %q; want %q", got, want)
			}
			if _, err := p.Stat(ctx, "killed"); tc.childStored == errors.Is(err, sdk.CodeSessionNotFound) {
				t.Fatalf("the interrupted salvage's child: %v", err)
			}
		})
	}
}
