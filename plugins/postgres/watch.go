package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

var _ sdk.Watcher = (*Backend)(nil)

// channel is the LISTEN/NOTIFY channel of the schema: every committed
// append batch notifies it with its session's payload (space.payload: the
// id, and the tenant of a named tenant's session).
func (s *store) channel() string { return "logbook:" + s.schema }

// Watch implements sdk.Watcher with LISTEN/NOTIFY: each append transaction
// notifies the schema's channel, which a listening connection of this
// Backend (one for all its watches) turns into a wake-up of the watches
// of that session. A woken watch reads next_seq from the sessions table,
// as it does when it starts and whenever the listening connection
// (re)connects, so a notification that is lost only delays a report. A
// session not stored is SESSION_NOT_FOUND.
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
	lis := b.rootOf().listen()
	wake := lis.subscribe(st.payload(id))
	defer lis.unsubscribe(st.payload(id), wake)
	return sqlstore.Watch(ctx, st, id, from, fn, func(ctx context.Context) (int64, bool, error) {
		var length int64
		err := st.pool.QueryRow(ctx, "SELECT next_seq FROM "+st.q()+".sessions WHERE tenant = $1 AND id = $2", st.tenant, id).Scan(&length)
		if err == pgx.ErrNoRows {
			return 0, false, nil
		}
		return length, err == nil, err
	}, wake)
}

// listen returns b's listener, making it on first use: the configured
// Backend's serves its tenants' views too.
func (b *Backend) listen() *listener {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lis == nil {
		b.lis = &listener{s: b.st, subs: map[string]map[chan struct{}]bool{}}
	}
	return b.lis
}

// listener is the connection that LISTENs on the schema's channel for
// the watches of one Backend, running while any watch is subscribed.
type listener struct {
	s    *store
	mu   sync.Mutex
	subs map[string]map[chan struct{}]bool // session payload (space.payload) → wake-ups of its watches
	n    int
	stop context.CancelFunc // of the running connection loop; nil when none runs
	done chan struct{}      // closed when that loop has ended
}

// subscribe returns a wake-up channel for a watch of the session whose
// payload is id, starting the connection loop for the first watch.
func (l *listener) subscribe(id string) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{}, 1)
	if l.subs[id] == nil {
		l.subs[id] = map[chan struct{}]bool{}
	}
	l.subs[id][ch] = true
	if l.n++; l.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		l.stop, l.done = cancel, make(chan struct{})
		go l.run(ctx, l.done)
	}
	return ch
}

// unsubscribe drops a watch's wake-up; the last one stops the loop.
func (l *listener) unsubscribe(id string, ch chan struct{}) {
	l.mu.Lock()
	delete(l.subs[id], ch)
	if len(l.subs[id]) == 0 {
		delete(l.subs, id)
	}
	var done chan struct{}
	if l.n--; l.n == 0 && l.stop != nil {
		l.stop()
		done, l.stop = l.done, nil
	}
	l.mu.Unlock()
	if done != nil {
		<-done
	}
}

// wake wakes the watches of the session whose payload is id, or of every
// session when all is set.
func (l *listener) wake(id string, all bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for sid, chs := range l.subs {
		if all || sid == id {
			for ch := range chs {
				select {
				case ch <- struct{}{}:
				default: // a wake-up is pending already
				}
			}
		}
	}
}

// run connects, LISTENs, wakes every watch (it may have missed
// notifications before), and then wakes the watches each notification
// names, reconnecting after a failure with a backoff up to 2 s, until ctx
// ends.
func (l *listener) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		err := l.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
		}
	}
}

// session is one connection of run.
func (l *listener) session(ctx context.Context) error {
	cc, err := pgx.ParseConfig(l.s.dsn)
	if err != nil {
		return err
	}
	runtimeParams(cc, appName("logbook watch "+l.s.host))
	c, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "LISTEN "+pgx.Identifier{l.s.channel()}.Sanitize()); err != nil {
		return err
	}
	l.wake("", true)
	for {
		n, err := c.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.wake(n.Payload, false)
	}
}

// close stops the connection loop (Shutdown); watches still running end
// when their contexts do.
func (l *listener) close() {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.stop = nil
	l.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}
