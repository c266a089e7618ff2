package sourcewatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Mode is how a Watcher learns of changes.
type Mode string

const (
	// ModeNotify: the operating system's file notifications (fsnotify).
	ModeNotify Mode = "fsnotify"
	// ModePoll: a stat of every file each PollInterval.
	ModePoll Mode = "polling"
)

// The defaults of Options.
const (
	// DefaultDebounce is how long a Watcher waits after a notification for
	// another one before it reports: 10 ms.
	DefaultDebounce = 10 * time.Millisecond
	// DefaultMaxDelay bounds how long a change waits while notifications
	// keep coming: 200 ms.
	DefaultMaxDelay = 200 * time.Millisecond
	// DefaultPollInterval is how often ModePoll stats the files: 250 ms.
	DefaultPollInterval = 250 * time.Millisecond
)

// Options configure a Watcher. Every zero duration takes its default.
type Options struct {
	// Roots are the directories to watch, each with everything below it.
	// At least one; each must exist.
	Roots []string
	// Poll runs the Watcher in ModePoll from the start.
	Poll bool
	// Debounce is how long a quiet period must last before notified
	// changes are reported. Default DefaultDebounce.
	Debounce time.Duration
	// MaxDelay bounds how long a notified change waits for a quiet period.
	// Default DefaultMaxDelay.
	MaxDelay time.Duration
	// PollInterval is how often ModePoll looks. Default DefaultPollInterval.
	PollInterval time.Duration
}

// Watcher watches directory trees for session files that appear or change
// (package doc). Make one with New; Run it once; Close it.
type Watcher struct {
	roots                       []string
	debounce, maxDelay, pollInt time.Duration

	// seen holds the stamp of every matching file last reported (or found
	// by New); only New and Run's goroutine touch it.
	seen map[string]stamp

	// addWatch adds a directory to the notifier; tests replace it to fail
	// as a full watch table does.
	addWatch func(fsw *fsnotify.Watcher, dir string) error

	mu sync.Mutex
	// mode is the current mode; it changes from ModeNotify to ModePoll at
	// most once.
	mode Mode
	// why is why the Watcher polls when it was not asked to; nil otherwise.
	why error
	// fsw is the notifier in ModeNotify, nil in ModePoll.
	fsw *fsnotify.Watcher
	// dirty holds the paths notified since the last report.
	dirty map[string]struct{}
	// rescan asks for a look at every file (a lost notification).
	rescan bool
	// first and last are when the oldest and the newest pending
	// notification arrived; zero when none is pending.
	first, last time.Time
	// closed is set by Close.
	closed bool
}

// stamp is what tells a file's change: its size and modification time.
type stamp struct {
	size int64
	mod  time.Time
}

// Match reports whether name is a session file the Watcher reports: it ends
// in .jsonl or .jsonl.zst.
func Match(name string) bool {
	return strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".jsonl.zst")
}

// New starts watching o.Roots: in ModeNotify unless o.Poll or the
// notifications cannot be set up (then in ModePoll, and Why says why). The
// files present when New returns are the starting state, not reported until
// they change. A root that does not exist or is not a directory is
// IO_ERROR naming it.
func New(o Options) (*Watcher, error) {
	return newWatcher(o, (*fsnotify.Watcher).Add)
}

func newWatcher(o Options, add func(*fsnotify.Watcher, string) error) (*Watcher, error) {
	if len(o.Roots) == 0 {
		return nil, sdk.Errorf(sdk.CodeUsage, "watch", "no directory to watch")
	}
	w := &Watcher{
		debounce: cmpOr(o.Debounce, DefaultDebounce),
		maxDelay: cmpOr(o.MaxDelay, DefaultMaxDelay),
		pollInt:  cmpOr(o.PollInterval, DefaultPollInterval),
		seen:     make(map[string]stamp),
		addWatch: add,
		mode:     ModePoll,
		dirty:    make(map[string]struct{}),
	}
	for _, r := range o.Roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, &sdk.Error{Code: sdk.CodeIOError, Op: "watch", Detail: fmt.Sprintf("cannot resolve %s", r), Err: err}
		}
		st, err := os.Stat(abs)
		if err != nil {
			return nil, &sdk.Error{Code: sdk.CodeIOError, Op: "watch", Detail: fmt.Sprintf("cannot watch %s", abs), Err: err}
		}
		if !st.IsDir() {
			return nil, sdk.Errorf(sdk.CodeIOError, "watch", "cannot watch %s: not a directory", abs)
		}
		if !slices.Contains(w.roots, abs) {
			w.roots = append(w.roots, abs)
		}
	}
	if !o.Poll {
		fsw, err := fsnotify.NewWatcher()
		if err == nil {
			w.fsw, w.mode = fsw, ModeNotify
			if _, err = w.watchTree(fsw, w.roots...); err != nil {
				w.fsw, w.mode = nil, ModePoll
				fsw.Close()
			}
		}
		if err != nil {
			w.why = fmt.Errorf("file notifications are unavailable: %w", err)
		}
	}
	for _, p := range w.walk() {
		if st, ok := statFile(p); ok {
			w.seen[p] = st
		}
	}
	return w, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Files returns the matching files New found (its starting state), sorted:
// what a caller imports before it runs the Watcher. Call it before Run.
func (w *Watcher) Files() []string {
	files := make([]string, 0, len(w.seen))
	for p := range w.seen {
		files = append(files, p)
	}
	slices.Sort(files)
	return files
}

// Mode returns the mode the Watcher runs in now.
func (w *Watcher) Mode() Mode {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mode
}

// Why returns why the Watcher polls although it was not asked to (the
// notifier's error), or nil.
func (w *Watcher) Why() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.why
}

// Close releases the notifier. It is safe to call more than once, and
// after Run returned; Run must not be called after it.
func (w *Watcher) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.fsw == nil {
		return nil
	}
	err := w.fsw.Close()
	w.fsw = nil
	return err
}

// Run reports changes until ctx ends (then it returns nil) or fn returns an
// error (then it returns that error). It calls fn from its own goroutine,
// one call at a time, with the absolute paths of the matching files that
// appeared or changed since they were last reported, sorted; notifications
// that arrive while fn runs are reported in the next call. Run may be
// called once.
func (w *Watcher) Run(ctx context.Context, fn func(paths []string) error) error {
	w.mu.Lock()
	fsw, closed := w.fsw, w.closed
	w.mu.Unlock()
	if closed {
		return sdk.Errorf(sdk.CodeUsage, "watch", "the watcher is closed")
	}
	wake := make(chan struct{}, 1)
	if fsw != nil {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.collect(fsw, stop, wake)
		}()
		defer func() { close(stop); wg.Wait() }()
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		due, wait := w.due(time.Now())
		if due {
			if err := w.report(fn); err != nil {
				return err
			}
			continue
		}
		var tick <-chan time.Time
		if wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			tick = timer.C
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-tick:
		}
		if timer != nil && !timer.Stop() {
			select { // drain a fire that raced with wake
			case <-timer.C:
			default:
			}
		}
	}
}

// due says whether a report is due at now, and else how long until one may
// be (0: none is pending, wait for a notification).
func (w *Watcher) due(now time.Time) (bool, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mode == ModePoll {
		if w.rescan {
			return true, 0 // just fell back: notifications may have been lost
		}
		if w.last.IsZero() {
			w.first, w.last = now, now // the first poll is a full period after Run starts
		}
		if next := w.last.Add(w.pollInt); now.Before(next) {
			return false, next.Sub(now)
		}
		return true, 0
	}
	if w.first.IsZero() {
		return false, 0
	}
	next := w.last.Add(w.debounce)
	if capped := w.first.Add(w.maxDelay); capped.Before(next) {
		next = capped
	}
	if now.Before(next) {
		return false, next.Sub(now)
	}
	return true, 0
}

// report looks at the pending paths (every file when polling or after a
// lost notification), updates seen, and calls fn with those that changed.
func (w *Watcher) report(fn func([]string) error) error {
	w.mu.Lock()
	all := w.mode == ModePoll || w.rescan
	pending := w.dirty
	w.dirty, w.rescan = make(map[string]struct{}), false
	w.first, w.last = time.Time{}, time.Time{}
	if w.mode == ModePoll {
		w.first, w.last = time.Now(), time.Now()
	}
	w.mu.Unlock()

	var paths []string
	if all {
		paths = w.walk()
		for p := range w.seen {
			paths = append(paths, p) // removed files are looked at too, to forget them
		}
	} else {
		for p := range pending {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	var changed []string
	for _, p := range paths {
		st, ok := statFile(p)
		old, had := w.seen[p]
		switch {
		case !ok:
			delete(w.seen, p)
		case !had || old != st:
			w.seen[p] = st
			changed = append(changed, p)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	return fn(changed)
}

// collect turns the notifier's events into pending paths until stop
// closes, or until the notifier fails: then the Watcher polls from then on.
func (w *Watcher) collect(fsw *fsnotify.Watcher, stop <-chan struct{}, wake chan<- struct{}) {
	for {
		var paths []string
		rescan := false
		select {
		case <-stop:
			return
		case ev, ok := <-fsw.Events:
			if !ok {
				w.fallBack(fsw, errors.New("the notifier stopped"), wake)
				return
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Lstat(ev.Name); err == nil && st.IsDir() {
					files, err := w.watchTree(fsw, ev.Name)
					if err != nil {
						w.fallBack(fsw, err, wake)
						return
					}
					paths = files
					break
				}
			}
			if ev.Op != fsnotify.Chmod && Match(ev.Name) {
				paths = []string{ev.Name}
			}
		case err, ok := <-fsw.Errors:
			if !ok {
				w.fallBack(fsw, errors.New("the notifier stopped"), wake)
				return
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				w.fallBack(fsw, err, wake)
				return
			}
			// Notifications were lost: watch every directory again (those
			// made meanwhile) and look at every file.
			if _, err := w.watchTree(fsw, w.roots...); err != nil {
				w.fallBack(fsw, err, wake)
				return
			}
			rescan = true
		}
		if len(paths) == 0 && !rescan {
			continue
		}
		now := time.Now()
		w.mu.Lock()
		for _, p := range paths {
			w.dirty[p] = struct{}{}
		}
		w.rescan = w.rescan || rescan
		if w.first.IsZero() {
			w.first = now
		}
		w.last = now
		w.mu.Unlock()
		poke(wake)
	}
}

// fallBack switches the Watcher to ModePoll for good because of err.
func (w *Watcher) fallBack(fsw *fsnotify.Watcher, err error, wake chan<- struct{}) {
	w.mu.Lock()
	w.mode = ModePoll
	w.why = fmt.Errorf("file notifications failed, polling instead: %w", err)
	w.rescan = true
	if w.fsw == fsw {
		w.fsw = nil
	}
	w.mu.Unlock()
	fsw.Close()
	poke(wake)
}

func poke(wake chan<- struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}

// watchTree adds a watch on every directory under each of dirs and returns
// the matching files it found there.
func (w *Watcher) watchTree(fsw *fsnotify.Watcher, dirs ...string) ([]string, error) {
	var files []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				if p == dir && errors.Is(err, fs.ErrNotExist) {
					return nil // gone before it could be watched
				}
				if d != nil && d.IsDir() && p != dir {
					return fs.SkipDir // unreadable below the root: skip it, as walk does
				}
				return err
			case d.IsDir():
				if err := w.addWatch(fsw, p); err != nil {
					if errors.Is(err, fs.ErrNotExist) {
						return fs.SkipDir
					}
					return fmt.Errorf("cannot watch %s: %w", p, err)
				}
			case Match(d.Name()):
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// walk returns every matching file under the roots; directories it cannot
// read are skipped.
func (w *Watcher) walk() []string {
	var files []string
	for _, root := range w.roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if !d.IsDir() && Match(d.Name()) {
				files = append(files, p)
			}
			return nil
		})
	}
	return files
}

// statFile returns p's stamp, and false when p is not a regular file (or
// is gone).
func statFile(p string) (stamp, bool) {
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return stamp{}, false
	}
	return stamp{size: st.Size(), mod: st.ModTime()}, true
}
