package jsonl

import (
	"context"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

var _ sdk.Watcher = (*Backend)(nil)

// watchPoll is how often a Watch looks at the log without a file-system
// notification: the fallback when notifications are lost (an inotify queue
// overflow), unsupported (network file systems) or unavailable (no
// inotify instance left, or a file system that is not the OS's).
const watchPoll = 2 * time.Second

// Watch implements sdk.Watcher with fsnotify on the session's directory:
// every write to the log, and its creation or replacement, wakes the watch,
// which then brings a read handle of its own up to the log's size (the
// incremental scan of Read) and reports the committed length, so a torn
// batch still being written is not reported until it is whole. Without a
// notification it looks every watchPoll all the same. A session not stored
// is SESSION_NOT_FOUND; a log replaced by a shorter one (LOG_SHRANK) ends
// the watch.
func (b *Backend) Watch(ctx context.Context, id string, from sdk.Offset, fn func(length sdk.Offset) error) error {
	if err := handles.Ended(ctx, op, "watch"); err != nil {
		return err
	}
	o, err := b.Open(ctx, id, sdk.AccessRead)
	if err != nil {
		return err
	}
	defer b.Close(context.Background(), o.Handle)
	hd, err := b.handles.Get(o.Handle)
	if err != nil {
		return err
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		if w.Add(hd.dir) == nil {
			events, errs = w.Events, w.Errors
		}
	}
	poll := time.NewTicker(watchPoll)
	defer poll.Stop()
	reported := from - 1
	for {
		length, err := b.committedLength(hd)
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
		case <-events:
		case <-errs: // an overflow: look now, as after a notification
		case <-poll.C:
		}
	}
}

// committedLength brings the read handle hd up to the log's current size
// and returns the number of events it holds.
func (b *Backend) committedLength(hd *handle) (sdk.Offset, error) {
	hd.mu.Lock()
	defer hd.mu.Unlock()
	if err := hd.usable(); err != nil {
		return 0, err
	}
	hd.opened = nil // a watch reads no events, so it keeps none of the log's bytes
	if err := b.refresh(hd); err != nil {
		return 0, err
	}
	if hd.ix.next < hd.floor {
		e := sdk.Errorf(sdk.CodeLogShrank, op, "the watch saw %d events; %s now holds %d", hd.floor, hd.path, hd.ix.next)
		e.SessionID = hd.id
		return 0, e
	}
	hd.floor = hd.ix.next
	return sdk.Offset(hd.ix.next), nil
}
