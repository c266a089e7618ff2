package host

import (
	"strconv"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/store"
)

// The host remembers at most maxIdled idle-released sessions, forgetting
// the one released longest ago first; a session remembered again counts
// from its latest release, and the release order never grows past twice
// the cap however often sessions are forgotten and remembered.
func TestIdledSetIsBounded(t *testing.T) {
	h := &Host{}
	for i := range maxIdled {
		h.rememberLocked(strconv.Itoa(i), store.FlushResult{})
	}
	h.rememberLocked("0", store.FlushResult{}) // released again: now the newest
	h.rememberLocked("new", store.FlushResult{})
	if _, ok := h.idled.byID["1"]; ok || len(h.idled.byID) != maxIdled {
		t.Fatalf("past the cap: %d remembered, the oldest (1) kept %v", len(h.idled.byID), ok)
	}
	for _, id := range []string{"0", "2", "new"} {
		if _, ok := h.idled.byID[id]; !ok {
			t.Fatalf("%s forgotten", id)
		}
	}
	for range 3 * maxIdled {
		h.forgetLocked("x")
		h.rememberLocked("x", store.FlushResult{})
	}
	if n := len(h.idled.order); n > 2*maxIdled {
		t.Fatalf("release order holds %d keys for %d sessions", n, len(h.idled.byID))
	}
}
