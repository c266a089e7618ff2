package sqlite

import (
	"context"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
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
	tick := time.NewTicker(watchPoll)
	defer tick.Stop()
	return sqlstore.Watch(ctx, st, id, from, fn, func(ctx context.Context) (int64, bool, error) {
		r, found, err := st.session(ctx, st.stmts.session, id)
		return r.nextSeq, found, err
	}, tick.C)
}
