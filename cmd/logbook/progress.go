package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressInterval spaces the plain progress lines written when stderr is
// not a terminal.
const progressInterval = 2 * time.Second

// progress reports how far long work (migrate, import, verify, a large
// export) has got, always on stderr: a progress bar when stderr is a
// terminal, else a plain line at most every progressInterval and one when
// the work is done. A nil *progress reports nothing.
type progress struct {
	bar   *progressbar.ProgressBar // nil when stderr is not a terminal
	w     io.Writer
	what  string // the command, e.g. "migrate"
	unit  string // what is counted, e.g. "sessions"
	total int64
	done  int64
	last  time.Time
}

// newProgress starts reporting work of total units.
func (a *app) newProgress(what, unit string, total int64) *progress {
	p := &progress{w: a.stderr, what: what, unit: unit, total: total, last: time.Now()}
	if f, ok := a.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(f),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(),
			progressbar.OptionSetItsString(unit),
			progressbar.OptionShowIts(),
			progressbar.OptionThrottle(100 * time.Millisecond),
			progressbar.OptionClearOnFinish(),
		}
		if unit == "bytes" {
			opts = append(opts, progressbar.OptionShowBytes(true))
		}
		p.bar = progressbar.NewOptions64(total, opts...)
	}
	return p
}

// add records n more units done.
func (p *progress) add(n int64) {
	if p == nil {
		return
	}
	p.done += n
	if p.bar != nil {
		_ = p.bar.Add64(n)
		return
	}
	if time.Since(p.last) >= progressInterval {
		p.last = time.Now()
		fmt.Fprintf(p.w, "logbook %s: %d/%d %s\n", p.what, p.done, p.total, p.unit)
	}
}

// finish ends the report: the bar is cleared, or a last plain line says how
// much was done.
func (p *progress) finish() {
	if p == nil {
		return
	}
	if p.bar != nil {
		_ = p.bar.Finish()
		return
	}
	fmt.Fprintf(p.w, "logbook %s: %d/%d %s done\n", p.what, p.done, p.total, p.unit)
}
