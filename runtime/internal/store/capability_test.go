package store

import (
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// declaredWatcher is a backend that reports its watch capability through
// an accessor, as a plugin's proxy does, instead of implementing it.
type declaredWatcher struct {
	sdk.Persistence
	declared bool
}

func (d declaredWatcher) Watcher() (sdk.Watcher, bool) {
	w, _ := d.Persistence.(sdk.Watcher)
	return w, d.declared
}

// A backend with a capability accessor has the capability when the
// accessor says so, whatever its type implements; one without an accessor
// has it when its type implements it.
func TestCapabilityIsTheAccessorsWhenABackendHasOne(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    sdk.Persistence
		want bool
	}{
		{"accessor reports it", declaredWatcher{mem(), true}, true},
		{"accessor denies it", declaredWatcher{mem(), false}, false},
		{"type implements it", mem(), true},
		{"neither", struct{ sdk.Persistence }{mem()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newTestStore(t, nil, Backend{Name: "b", Persistence: tc.p})
			if got := st.CanFollowStored(); got != tc.want {
				t.Fatalf("CanFollowStored = %v, want %v", got, tc.want)
			}
		})
	}
}
