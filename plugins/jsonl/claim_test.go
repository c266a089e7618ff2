package jsonl

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// TestLookAtAClaimIsNoClaim: an Open(write) of an id that has no log
// takes the id's session.lock for an instant to see whether a create holds
// it. A Create or an Open(write) of the id in another instance (another
// process) that meets that instant must not take the look for a holder:
// while one instance keeps looking, the other creates the id every time,
// and its Open(write) of an id nobody holds is SESSION_NOT_FOUND. (Before,
// about one Create in 60 failed with SESSION_ALREADY_EXISTS.)
func TestLookAtAClaimIsNoClaim(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	looker := newTestBackend(t, cfg)
	creator := newTestBackend(t, cfg)
	for i := range 100 {
		id := fmt.Sprintf("s%d", i)
		// An abandoned create leaves the id's directory and lock file, so
		// every look flocks it.
		o, err := creator.Create(t.Context(), testHeader(id))
		if err != nil {
			t.Fatal(err)
		}
		if err := creator.Close(t.Context(), o.Handle); err != nil {
			t.Fatal(err)
		}
		var stop atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			for !stop.Load() {
				if _, err := looker.Open(t.Context(), id, sdk.AccessWrite); sdk.CodeOf(err) != sdk.CodeSessionNotFound && sdk.CodeOf(err) != sdk.CodeAlreadyOwned {
					t.Errorf("the looker's Open(write) of %s: %v", id, err)
					return
				}
			}
		}()
		for j := range 40 {
			if j%2 == 0 {
				o, err := creator.Create(t.Context(), testHeader(id))
				if err != nil {
					stop.Store(true)
					<-done
					t.Fatalf("create %d of %s while another instance looks at its claim: %v", j, id, err)
				}
				if err := creator.Close(t.Context(), o.Handle); err != nil {
					t.Fatal(err)
				}
			} else if _, err := creator.Open(t.Context(), id, sdk.AccessWrite); sdk.CodeOf(err) != sdk.CodeSessionNotFound {
				stop.Store(true)
				<-done
				t.Fatalf("open(write) %d of %s, which nobody holds, while another instance looks at its claim: %v", j, id, err)
			}
		}
		stop.Store(true)
		<-done
	}
}
