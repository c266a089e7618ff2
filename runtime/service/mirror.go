package service

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/sourcewatch"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The mirror's timing (docs/import.md, "The live mirror").
const (
	// mirrorRetry is how often a Mirror tries again the files whose import
	// failed.
	mirrorRetry = 5 * time.Second
	// mirrorFirstChunk is how many files the first pass imports before it
	// releases the sessions they opened, so that importing a directory of
	// thousands of sessions holds at most this many live.
	mirrorFirstChunk = 16
	// mirrorCloseTimeout bounds the flush and release of a Mirror's
	// sessions when it stops.
	mirrorCloseTimeout = time.Minute
)

// MirrorSource is one directory a Mirror watches and the dialect its files
// are read in.
type MirrorSource struct {
	// From is the dialect: "claude-code", "codex", "pi" or "auto", as
	// ImportSourceRequest.From takes it.
	From string
	// Dir is the directory; every directory below it is watched too. It
	// must exist.
	Dir string
}

// MirrorOptions configure a Mirror.
type MirrorOptions struct {
	// Sources are the directories to watch; at least one. A file under
	// two of them is read in the dialect of the deepest.
	Sources []MirrorSource
	// Poll stats the files every 250 ms instead of using file
	// notifications. Default false: notifications, and polling only where
	// they fail.
	Poll bool
	// IdleRelease is how long a mirrored session stays live after the
	// mirror last wrote to it. Default config.DefaultMirrorIdleRelease.
	IdleRelease time.Duration
}

// MirrorPass is what one import pass of a Mirror did.
type MirrorPass struct {
	// First is true for the pass over the files present at the start.
	First bool
	// Summary is what the pass imported (Files counts the files it
	// looked at).
	Summary ImportSummary
	// Err is why the pass (or part of it) failed; its files are tried
	// again at the next pass and at least every 5 s.
	Err error
	// Mode is the watcher's mode after the pass: "fsnotify" or "polling".
	Mode string
	// Why says why the watcher polls when it was not asked to, else nil.
	Why error
}

// Mirror imports session files of other tools as they are written: every
// file present first, then each one that appears or grows (package
// docs/import.md, "The live mirror"). Make one with NewMirror, then Run it
// once.
type Mirror struct {
	w       *sourcewatch.Watcher
	sources []MirrorSource // Dir absolute and clean, deepest first
	idle    time.Duration
	// retryEvery is how often failed files are tried again (mirrorRetry).
	retryEvery time.Duration
	// newImporter makes the importer Run drives: the service's
	// SourceImporter, or a unit test's stand-in.
	newImporter func() importer
}

// importer is what a Mirror needs of a SourceImporter.
type importer interface {
	Import(ctx context.Context, r ImportSourceRequest) (ImportSummary, error)
	ReleaseIdle(ctx context.Context, idle time.Duration) (int, error)
	Close(ctx context.Context) error
}

// NewMirror starts watching o.Sources (so no write made after it returns
// is missed) and returns the Mirror that Run drives. A read-only service
// is SESSION_READ_ONLY; no source, a From that is not a dialect name and a
// directory that does not exist are USAGE or IO_ERROR naming it.
func (s *Service) NewMirror(o MirrorOptions) (*Mirror, error) {
	if s.h.ReadOnly() {
		return nil, sdk.Errorf(sdk.CodeSessionReadOnly, "mirror", "a read-only service cannot mirror sessions")
	}
	return newMirror(o, func() importer { return s.NewSourceImporter() })
}

func newMirror(o MirrorOptions, newImporter func() importer) (*Mirror, error) {
	if len(o.Sources) == 0 {
		return nil, sdk.Errorf(sdk.CodeUsage, "mirror", "no directory to mirror")
	}
	m := &Mirror{idle: o.IdleRelease, retryEvery: mirrorRetry, newImporter: newImporter}
	if m.idle <= 0 {
		m.idle = config.DefaultMirrorIdleRelease
	}
	roots := make([]string, 0, len(o.Sources))
	for _, src := range o.Sources {
		if !slices.Contains(config.SourceTools(), src.From) {
			return nil, sdk.Errorf(sdk.CodeUsage, "mirror", "%q is not a tool to import from (tools: %s)", src.From, strings.Join(config.SourceTools(), ", "))
		}
		dir, err := filepath.Abs(src.Dir)
		if err != nil {
			return nil, &sdk.Error{Code: sdk.CodeIOError, Op: "mirror", Detail: "cannot resolve " + src.Dir, Err: err}
		}
		m.sources = append(m.sources, MirrorSource{From: src.From, Dir: dir})
		roots = append(roots, dir)
	}
	slices.SortStableFunc(m.sources, func(a, b MirrorSource) int { return len(b.Dir) - len(a.Dir) })
	w, err := sourcewatch.New(sourcewatch.Options{Roots: roots, Poll: o.Poll})
	if err != nil {
		return nil, err
	}
	m.w = w
	return m, nil
}

// Mode returns how the Mirror learns of writes now: "fsnotify" or
// "polling", and why it polls when it was not asked to (else nil).
func (m *Mirror) Mode() (string, error) { return string(m.w.Mode()), m.w.Why() }

// Run imports every file present, then each file that appears or grows,
// until ctx ends; then it flushes and releases every session it holds and
// returns nil, or the error of that release. Lines are imported whole (a
// line still being written waits for its line feed). After each pass it
// calls report, from Run's goroutine. A failed pass does not end Run: its
// files are tried again later. Run may be called once; the Mirror is
// closed when it returns.
func (m *Mirror) Run(ctx context.Context, report func(MirrorPass)) error {
	defer m.w.Close()
	im := m.newImporter()
	closed := false
	closeImporter := func() error {
		closed = true
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mirrorCloseTimeout)
		defer cancel()
		return im.Close(cctx)
	}
	defer func() {
		if !closed { // a panic in report: still release what it holds
			closeImporter()
		}
	}()
	retry := make(map[string]struct{})

	// The first pass, in chunks, releasing after each.
	files := m.w.Files()
	first := MirrorPass{First: true}
	for len(files) > 0 && ctx.Err() == nil {
		n := min(len(files), mirrorFirstChunk)
		sum, err := m.importPaths(ctx, im, files[:n], retry)
		addSummary(&first.Summary, sum)
		first.Err = errors.Join(first.Err, err)
		if _, err := im.ReleaseIdle(ctx, 0); err != nil {
			first.Err = errors.Join(first.Err, err)
		}
		files = files[n:]
	}
	m.report(report, first)

	// Then the watcher's reports, a retry tick and idle releases.
	changes := make(chan []string)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.w.Run(wctx, func(paths []string) error { // never fails: it only hands paths on
			select {
			case changes <- paths:
			case <-wctx.Done():
			}
			return nil
		})
	}()
	defer func() { stop(); <-done }()
	tick := time.NewTicker(min(m.retryEvery, m.idle/2))
	defer tick.Stop()
	lastRetry := time.Now()
	for {
		var paths []string
		select {
		case <-ctx.Done():
			stop()
			<-done
			return closeImporter()
		case paths = <-changes:
		case now := <-tick.C:
			if _, err := im.ReleaseIdle(ctx, m.idle); err != nil && ctx.Err() == nil {
				m.report(report, MirrorPass{Err: err})
			}
			if len(retry) == 0 || now.Sub(lastRetry) < m.retryEvery {
				continue
			}
		}
		for p := range retry {
			paths = append(paths, p)
		}
		clear(retry)
		lastRetry = time.Now()
		slices.Sort(paths)
		paths = slices.Compact(paths)
		var pass MirrorPass
		pass.Summary, pass.Err = m.importPaths(ctx, im, paths, retry)
		if ctx.Err() != nil {
			continue // stopping: the next turn closes
		}
		m.report(report, pass)
	}
}

// report completes pass with the watcher's mode and hands it on.
func (m *Mirror) report(report func(MirrorPass), pass MirrorPass) {
	pass.Mode, pass.Why = m.Mode()
	if report != nil {
		report(pass)
	}
}

// importPaths imports paths, one request per dialect; the paths of a
// request that failed go to retry. A request refused for the live-session
// cap is tried once more after every idle session is released.
func (m *Mirror) importPaths(ctx context.Context, im importer, paths []string, retry map[string]struct{}) (ImportSummary, error) {
	byFrom := make(map[string][]string)
	var froms []string
	for _, p := range paths {
		from := m.from(p)
		if _, ok := byFrom[from]; !ok {
			froms = append(froms, from)
		}
		byFrom[from] = append(byFrom[from], p)
	}
	var total ImportSummary
	var errs []error
	for _, from := range froms {
		req := ImportSourceRequest{From: from, Paths: byFrom[from], CompleteLinesOnly: true}
		sum, err := im.Import(ctx, req)
		if errors.Is(err, sdk.CodeTooManyLiveSessions) {
			if _, rerr := im.ReleaseIdle(ctx, 0); rerr == nil {
				sum, err = im.Import(ctx, req)
			}
		}
		addSummary(&total, sum)
		if err != nil {
			errs = append(errs, err)
			for _, p := range req.Paths {
				retry[p] = struct{}{}
			}
		}
	}
	return total, errors.Join(errs...)
}

// from returns the dialect of the deepest source holding path.
func (m *Mirror) from(path string) string {
	for _, src := range m.sources {
		if rel, err := filepath.Rel(src.Dir, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return src.From
		}
	}
	return m.sources[len(m.sources)-1].From // unreachable: the watcher reports files under the roots only
}

// addSummary adds b's counts to a.
func addSummary(a *ImportSummary, b ImportSummary) {
	a.Files += b.Files
	a.Events += b.Events
	for _, id := range b.Sessions {
		if !slices.Contains(a.Sessions, id) {
			a.Sessions = append(a.Sessions, id)
		}
	}
	a.DamagedLines = append(a.DamagedLines, b.DamagedLines...)
}
