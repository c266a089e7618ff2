// Package foreigntest runs a foreign.Mapper over a source file into a real
// in-memory lenient session, the way the importer does, so each dialect's
// tests can check what its mapping appends (and that every input passes the
// payload rules) without a store.
package foreigntest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/provider"
	"github.com/seed-e5e476df/logbook/runtime/internal/compaction"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Result is what a run appended.
type Result struct {
	// Session is the in-memory session the run appended to.
	Session *session.Session
	// Identity is what the dialect identified.
	Identity foreign.Identity
	// Damaged maps the number of each damaged line to its reason.
	Damaged map[int]string
	// Branches are the Branch names the mapper asked for, in order.
	Branches []string
	// BranchLens are the session's lengths when each branch was asked for
	// (after the raw record and the Step's first BranchAfter inputs): the
	// importer's fork child holds events 0 … len−1.
	BranchLens []int
	// Refused maps the number of each line whose inputs the session
	// refused to the error (the line was kept raw only).
	Refused map[int]error
}

// ReadLines reads a .jsonl or .jsonl.zst file into lines as the importer
// does.
func ReadLines(t testing.TB, path string) []foreign.Line {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasSuffix([]byte(path), []byte(".zst")) {
		d, err := zstd.NewReader(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if b, err = d.DecodeAll(b, nil); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return SplitLines(b)
}

// SplitLines is foreign.SplitLines, the importer's split of a file into
// lines.
func SplitLines(b []byte) []foreign.Line { return foreign.SplitLines(b) }

// Run identifies lines with d, then feeds them to a new mapper (End after
// the last), appending each line's source/line record (with the Step's
// damage) and the Step's inputs, as foreign.Groups splits them, to a
// lenient in-memory session that checks the compaction invariants as the
// store does. A refused group is reported to the mapper with
// Accepted(false) (the groups after it are not appended) and recorded in
// Result.Refused.
func Run(t testing.TB, d foreign.Dialect, lines []foreign.Line) Result {
	t.Helper()
	id, err := d.Identify(lines)
	if err != nil {
		t.Fatalf("Identify: %v", err)
	}
	s, err := session.New(session.Options{
		Header:     sdk.Header{FormatVersion: sdk.FormatVersion, ID: "foreigntest", Protocol: sdk.ProtocolLenient},
		Relational: []session.Relational{compaction.NewValidator()},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := Result{Session: s, Identity: id, Damaged: map[int]string{}, Refused: map[int]error{}}
	m := d.NewMapper(id)
	ctx := context.Background()
	appendGroups := func(n int, inputs []events.Input) bool {
		for _, g := range foreign.Groups(inputs) {
			if _, err := s.AppendGroup(ctx, g); err != nil {
				r.Refused[n] = err
				return false
			}
		}
		return true
	}
	apply := func(n int, st foreign.Step) {
		if st.Damage != "" {
			r.Damaged[n] = st.Damage
		}
		before, after := st.Inputs, []events.Input(nil)
		if st.Branch != "" {
			k := min(max(st.BranchAfter, 0), len(st.Inputs))
			before, after = st.Inputs[:k], st.Inputs[k:]
		}
		ok := appendGroups(n, before)
		if ok && st.Branch != "" {
			r.Branches = append(r.Branches, st.Branch)
			r.BranchLens = append(r.BranchLens, int(s.Len()))
		}
		m.Accepted(ok && appendGroups(n, after))
	}
	for _, l := range lines {
		st := m.Line(l, sdk.Seq(s.Len()))
		if _, err := s.Append(ctx, foreign.Record{Line: l, Damage: st.Damage}.Input()); err != nil {
			t.Fatalf("raw record of line %d: %v", l.N, err)
		}
		apply(l.N, st)
	}
	apply(len(lines)+1, m.End(sdk.Seq(s.Len())))
	return r
}

// Messages renders the session's messages in format (provider.MessageFormats).
func (r Result) Messages(format string) ([]byte, error) {
	ml, err := r.Session.Messages()
	if err != nil {
		return nil, err
	}
	msgs := make([][]byte, 0, ml.Len())
	for _, m := range ml.All() {
		msgs = append(msgs, m.JSON())
	}
	b, err := provider.Messages(format, msgs)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", format, err)
	}
	return b, nil
}
