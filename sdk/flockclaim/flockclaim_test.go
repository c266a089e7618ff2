package flockclaim

import (
	"errors"
	"syscall"
	"testing"
)

// Take tries again while only shared holders block it, gives up after
// HeldTries tries while an exclusive one does, and returns any other error
// as is.
func TestTake(t *testing.T) {
	other := errors.New("EIO")
	busy := syscall.EWOULDBLOCK
	for _, c := range []struct {
		name       string
		results    []error // try's, in turn
		onlyShared func() bool
		want       error
		tries      int
	}{
		{"free", []error{nil}, nil, nil, 1},
		{"shared holders go", []error{busy, busy, busy, busy, busy, nil}, func() bool { return true }, nil, 6},
		{"held for an instant", []error{busy, busy, nil}, func() bool { return false }, nil, 3},
		{"held", []error{busy, busy, busy, busy, nil}, func() bool { return false }, busy, HeldTries},
		{"a look at a held claim", []error{busy, busy, busy, busy, nil}, nil, busy, HeldTries},
		{"other error", []error{other, nil}, func() bool { return true }, other, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			tries := 0
			err := Take(func() error { tries++; return c.results[tries-1] }, c.onlyShared)
			if !errors.Is(err, c.want) || (err == nil) != (c.want == nil) || tries != c.tries {
				t.Fatalf("Take = %v after %d tries; want %v after %d", err, tries, c.want, c.tries)
			}
		})
	}
}
