package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

var _ sdk.Watcher = (*Backend)(nil)

// watchPoll is how often a Watch reads the session's next_seq. SQLite has
// no notification that reaches another process, so a watch polls; the read
// is one row by primary key.
const watchPoll = 100 * time.Millisecond

// Watch implements sdk.Watcher by polling: every watchPoll it reads
// next_seq from the session's row, which an append advances in the
// transaction that stores its rows, and reports it when it grew. A session
// not stored is SESSION_NOT_FOUND.
func (b *Backend) Watch(ctx context.Context, id string, from sdk.Offset, fn func(length sdk.Offset) error) error {
	if err := handles.Ended(ctx, op, "watch"); err != nil {
		return err
	}
	st, err := b.store()
	if err != nil {
		return err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return err
	}
	tick := time.NewTicker(watchPoll)
	defer tick.Stop()
	reported := from - 1
	for {
		var r sessionRow
		err := st.stmts.session.QueryRowContext(ctx, id).Scan(&r.formatVersion, &r.header, &r.nextSeq, &r.incarnation, &r.revision)
		switch {
		case err == sql.ErrNoRows:
			return handles.NotFound(op, id)
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return st.dbErr(ctx, id, "watch", err)
		}
		if n := sdk.Offset(r.nextSeq); n > reported && n >= from {
			if err := fn(n); err != nil {
				return err
			}
			reported = n
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
