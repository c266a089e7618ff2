package corpus

import (
	"bytes"
	"context"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/session"
)

// The corpus is a valid log (the restore pipeline accepts it), canonical
// (re-encoding changes nothing), deterministic, and realistic in size.
func TestSessionIsValidCanonicalAndDeterministic(t *testing.T) {
	envs := Session(7, 3000)
	s, err := session.Restore(context.Background(), session.Options{}, session.RestoreOptions{}, envs)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, e := range s.Events().All() {
		if !bytes.Equal(e.Envelope(), envs[i]) {
			t.Fatalf("event %d is not canonical:\n%s\n%s", i, envs[i], e.Envelope())
		}
		total += len(envs[i])
	}
	if avg := total / len(envs); avg < 300 || avg > 4000 {
		t.Fatalf("average event size %d bytes", avg)
	}
	again := Session(7, 3000)
	for i := range envs {
		if !bytes.Equal(envs[i], again[i]) {
			t.Fatal("not deterministic")
		}
	}
	if bytes.Equal(Session(8, 10)[1], envs[1]) {
		t.Fatal("different seeds give the same session")
	}
}
