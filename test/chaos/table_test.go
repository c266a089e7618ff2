package chaos

import (
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"
)

// cell is one fault kind on one backend.
type cell struct {
	runs, acked, lost, dup, half int
	replayed                     int    // retries after a failed attempt answered as replays
	skipped                      string // why the kind did not run
	na                           string // why the kind does not apply to the backend
}

// table is the run's summary: fault kind × backend.
type table struct {
	mu    sync.Mutex
	cells map[[2]string]*cell
}

func newTable() *table { return &table{cells: map[[2]string]*cell{}} }

func (t *table) cell(kind, backend string) *cell {
	k := [2]string{kind, backend}
	c := t.cells[k]
	if c == nil {
		c = &cell{}
		t.cells[k] = c
	}
	return c
}

// add counts one run of kind on backend.
func (t *table) add(kind, backend string, acked, replayed, lost, dup, half int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.cell(kind, backend)
	c.runs++
	c.acked += acked
	c.replayed += replayed
	c.lost += lost
	c.dup += dup
	c.half += half
}

// runs returns how often kind ran on backend.
func (t *table) runs(kind, backend string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.cells[[2]string{kind, backend}]; c != nil {
		return c.runs
	}
	return 0
}

// notApplicable notes that kind means nothing on backend, and why.
func (t *table) notApplicable(kind, backend, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cell(kind, backend).na = why
}

// skip notes that kind cannot run on backend, and why.
func (t *table) skip(kind, backend, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cell(kind, backend).skipped = why
}

// totals returns the lost and duplicated events and the half-made
// sessions of the whole run.
func (t *table) totals() (lost, dup, half int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.cells {
		lost += c.lost
		dup += c.dup
		half += c.half
	}
	return lost, dup, half
}

// render prints the table: kinds in order, then the shutdown check, per
// backend, and a total row per backend.
func (t *table) render(kinds, backendNames []string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "fault kind\tbackend\truns\tacknowledged\treplayed\tlost\tduplicated\thalf-made\t")
	var na []string
	for _, be := range backendNames {
		var sum cell
		var none []string
		for _, k := range kinds {
			c := t.cells[[2]string{k, be}]
			switch {
			case c == nil:
				continue
			case c.na != "":
				none = append(none, k)
				continue
			case c.skipped != "":
				fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\tSKIPPED: %s\n", k, be, c.skipped)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", k, be, c.runs, c.acked, c.replayed, c.lost, c.dup, c.half)
			sum.runs, sum.acked, sum.replayed = sum.runs+c.runs, sum.acked+c.acked, sum.replayed+c.replayed
			sum.lost, sum.dup, sum.half = sum.lost+c.lost, sum.dup+c.dup, sum.half+c.half
		}
		fmt.Fprintf(tw, "all\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", be, sum.runs, sum.acked, sum.replayed, sum.lost, sum.dup, sum.half)
		if len(none) > 0 {
			na = append(na, fmt.Sprintf("not applicable on %s: %s", be, strings.Join(none, ", ")))
		}
	}
	tw.Flush()
	for _, l := range na {
		b.WriteString(l + "\n")
	}
	return b.String()
}
