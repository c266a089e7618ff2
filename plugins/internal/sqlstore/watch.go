package sqlstore

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Watch is the loop of sdk.Watcher.Watch for session id: it reads the
// session's length with length (found false: SESSION_NOT_FOUND), calls
// fn with it when it is at least from and greater than what fn last got,
// then waits for a wake-up on wake, and again, until ctx ends (ctx's
// error) or fn fails (its error). The backend decides what wakes a watch:
// a timer when it polls, a notification when its database sends one. An
// error of length is mapped with DBErr.
func Watch[T any](ctx context.Context, d Dialect, id string, from sdk.Offset, fn func(length sdk.Offset) error, length func(ctx context.Context) (int64, bool, error), wake <-chan T) error {
	if err := sdk.ValidateSessionID(id); err != nil {
		return err
	}
	reported := from - 1
	for {
		n, found, err := length(ctx)
		switch {
		case err == nil && !found:
			return handles.NotFound(d.Op(), id)
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return DBErr(ctx, d, id, "watch", err)
		}
		if n := sdk.Offset(n); n > reported && n >= from {
			if err := fn(n); err != nil {
				return err
			}
			reported = n
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		}
	}
}
