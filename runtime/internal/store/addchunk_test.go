package store

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The pipelined restore (chunks parsed on several goroutines while earlier
// ones fold) restores the same session as the one-by-one pipeline, and a
// bad envelope anywhere is reported exactly as the one-by-one pipeline
// reports it.
func TestRestoreReadMatchesOneByOneRestore(t *testing.T) {
	ctx := context.Background()
	opts := session.Options{Header: sdk.Header{ID: "s", FormatVersion: sdk.FormatVersion}}
	envs := corpus.Session(7, 8*parallelParseMin)
	restore := func(envs [][]byte) (*session.Session, error) {
		r, err := session.NewRestorer(ctx, opts, session.RestoreOptions{Source: session.FromStorage})
		if err != nil {
			t.Fatal(err)
		}
		// Chunks of uneven sizes: small ones parse on one goroutine, large
		// ones on several, and several are in flight at once.
		return restoreRead(ctx, r, 0, 0, func(fn func([][]byte) error) error {
			for i, size := 0, 50; i < len(envs); i, size = i+size, size*2+parallelParseMin/2 {
				if err := fn(envs[i:min(i+size, len(envs))]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	got, err := restore(envs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := session.Restore(ctx, opts, session.RestoreOptions{Source: session.FromStorage}, envs)
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != want.Len() {
		t.Fatalf("len %d, want %d", got.Len(), want.Len())
	}
	for i := range want.Events().Len() {
		if !bytes.Equal(got.Events().At(i).Envelope(), want.Events().At(i).Envelope()) {
			t.Fatalf("event %d differs", i)
		}
	}
	// Damage of every kind the parallel parse meets: JSON that does not
	// parse, a payload that breaks its shape (found by the StoredParser's
	// precheck), and both a wrong seq and a bad payload (the seq rule comes
	// first in a restore).
	damages := []func(i int) []byte{
		func(i int) []byte {
			return []byte(`{"seq":` + strconv.Itoa(i) + `,"time":1,"type":"turn/start","data":{"turn":1}`)
		},
		func(i int) []byte {
			return []byte(`{"seq":` + strconv.Itoa(i) + `,"time":1,"type":"turn/start","data":{"turn":"one"}}`)
		},
		func(i int) []byte {
			return []byte(`{"seq":` + strconv.Itoa(i+7) + `,"time":1,"type":"turn/start","data":{"turn":"one"}}`)
		},
	}
	for k, bad := range []int{0, parallelParseMin + 3, len(envs) - 1, 5, parallelParseMin + 9, 2*parallelParseMin + 1} {
		damaged := append([][]byte(nil), envs...)
		damaged[bad] = damages[k%len(damages)](bad)
		_, gotErr := restore(damaged)
		_, wantErr := session.Restore(ctx, opts, session.RestoreOptions{Source: session.FromStorage}, damaged)
		if gotErr == nil || wantErr == nil || gotErr.Error() != wantErr.Error() {
			t.Errorf("damage at %d: got %v, want %v", bad, gotErr, wantErr)
		}
		if !errors.Is(gotErr, sdk.CodeCorruptLog) {
			t.Errorf("damage at %d: %v is not CORRUPT_LOG", bad, gotErr)
		}
	}
}
