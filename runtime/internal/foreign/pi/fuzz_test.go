package pi_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/foreigntest"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/pi"
	"github.com/seed-e5e476df/logbook/sdk"
)

// FuzzMapper feeds arbitrary files to the line parser and mapper: they
// never panic, a damaged line has no inputs, and every replace names
// earlier seqs.
func FuzzMapper(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d := pi.New()
		lines := foreigntest.SplitLines(b)
		_, _ = d.Identify(lines)
		m := d.NewMapper(foreign.Identity{})
		seq := sdk.Seq(0)
		for i, l := range lines {
			d.Claims(l.Text)
			st := m.Line(l, seq)
			if st.Damage != "" && len(st.Inputs) != 0 {
				t.Fatalf("line %d: damaged (%s) with inputs", l.N, st.Damage)
			}
			for k, in := range st.Inputs {
				at := seq + 1 + sdk.Seq(k)
				if op := in.SurfaceOp; op != nil && op.Replace && (op.StartSeq >= at || op.EndSeq >= at) {
					t.Fatalf("line %d: replace %d…%d at seq %d", l.N, op.StartSeq, op.EndSeq, at)
				}
			}
			ok := i%3 != 2
			seq++
			if ok {
				seq += sdk.Seq(len(st.Inputs))
			}
			m.Accepted(ok)
		}
		m.End(seq)
	})
}
