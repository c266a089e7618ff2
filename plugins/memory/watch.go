package memory

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
)

// signalGrowth wakes every Watch of the store; st.mu is held.
func (st *store) signalGrowth() {
	close(st.grown)
	st.grown = make(chan struct{})
}

// Watch implements sdk.Watcher: every instance of the store sees the
// appends of every other instance, as hosts sharing one database would.
func (b *Backend) Watch(ctx context.Context, id string, from sdk.Offset, fn func(length sdk.Offset) error) error {
	if err := sdk.ValidateSessionID(id); err != nil {
		return err
	}
	reported := from - 1
	for {
		b.st.mu.Lock()
		s, err := b.st.stored(id)
		var length sdk.Offset
		if s != nil {
			length = sdk.Offset(len(s.events))
		}
		grown := b.st.grown
		b.st.mu.Unlock()
		if err != nil {
			return err
		}
		if length > reported && length >= from {
			if err := fn(length); err != nil {
				return err
			}
			reported = length
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-grown:
		}
	}
}

var _ sdk.Watcher = (*Backend)(nil)
