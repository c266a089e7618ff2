package protocolcases

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Door is one way into the session service (the Go API, /v1, Connect, the
// CLI, a client), as Run drives it. A door's test implements it over its
// own wire and checks what only that wire carries (an HTTP status, a
// Connect code, an exit status) in its methods.
type Door interface {
	// Create makes a new empty session id; lenient creates it with
	// protocol "lenient", otherwise it is strict (the default).
	Create(t testing.TB, id string, lenient bool) Session
}

// Session is a session created through a door.
type Session interface {
	// Append appends ins in one request, not atomic. It returns the seqs
	// the accepted inputs got, or the refusal when the door refused one;
	// anything else (a transport failure, a refusal that is not a
	// rule's) fails t.
	Append(t testing.TB, ins []Input) ([]sdk.Seq, *Refusal)
	// Log returns every event of the session, each rendered as the door
	// renders an event (compared as opaque text).
	Log(t testing.TB) []string
}

// Grouper is a Session whose door appends atomic groups.
type Grouper interface {
	// AppendGroup appends ins as one atomic group, as Append does.
	AppendGroup(t testing.TB, ins []Input) ([]sdk.Seq, *Refusal)
}

// Operator is a Session whose door appends under an operation id.
type Operator interface {
	// AppendOnce appends ins under operation id in one request (one
	// atomic group). It returns the seqs of the events the door answers
	// (appended now, or the original operation's on a replay) and whether
	// it says the request was a replay, or the refusal, as Append does.
	AppendOnce(t testing.TB, id string, ins []Input) ([]sdk.Seq, bool, *Refusal)
}

// Refusal is a rule's refusal as a door reports it.
type Refusal struct {
	Code sdk.Code
	// Meta is the error's Meta; DetailOnly when the door reports none.
	Meta map[string]string
	// DetailOnly says the door carries the values in its text alone (the
	// CLI's last stderr line): Run then finds each of the case's Meta
	// values in Text instead.
	DetailOnly bool
	// Index is the refused input's position in the request, when the
	// door reports it.
	Index *int
	// Text is the error's message.
	Text string
}

// Options say what of the fixture a door runs besides the refused cases
// and the legal sequences.
type Options struct {
	// Groups runs the groups; the door's sessions must be Groupers.
	Groups bool
	// Operations runs the operations; the door's sessions must be
	// Operators.
	Operations bool
	// Lenient runs every refused case in a session created lenient, which
	// must accept it.
	Lenient bool
	// Parallel runs the cases in parallel (a door whose every append is a
	// process of its own).
	Parallel bool
}

// Run runs the fixture through d: every refused case (its prefix in one
// request, then the event: refused, nothing changed), every legal
// sequence (one request per event, so a door that reopens the session
// per request folds the loop state from the stored log each time: seqs
// 0, 1, …), and what o asks for. Each case runs in a fresh session of its
// own.
func Run(t *testing.T, d Door, o Options) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range c.Refused {
		t.Run("refused/"+r.Name, func(t *testing.T) {
			o.parallel(t)
			s := d.Create(t, fmt.Sprintf("refused-%02d", i), false)
			before := appendAll(t, s, r.Prefix, true)
			_, ref := s.Append(t, []Input{r.Event})
			checkRefusal(t, ref, r.Code, r.Meta, 0)
			unchanged(t, s, before, r.Next)
		})
	}
	for i, l := range c.Legal {
		t.Run("legal/"+l.Name, func(t *testing.T) {
			o.parallel(t)
			s := d.Create(t, fmt.Sprintf("legal-%02d", i), false)
			appendAll(t, s, l.Events, false)
		})
	}
	for i, g := range c.Groups {
		if !o.Groups {
			break
		}
		t.Run("group/"+g.Name, func(t *testing.T) {
			o.parallel(t)
			s := d.Create(t, fmt.Sprintf("group-%02d", i), false)
			gs, ok := s.(Grouper)
			if !ok {
				t.Fatalf("the door's session %T does not append groups", s)
			}
			before := appendAll(t, s, g.Prefix, true)
			seqs, ref := gs.AppendGroup(t, g.Group)
			if len(seqs) != 0 {
				t.Errorf("a refused group appended seqs %v", seqs)
			}
			checkRefusal(t, ref, g.Code, g.Meta, g.Index)
			unchanged(t, s, before, g.Next)
		})
	}
	for i, op := range c.Operations {
		if !o.Operations {
			break
		}
		t.Run("operation/"+op.Name, func(t *testing.T) {
			o.parallel(t)
			s := d.Create(t, fmt.Sprintf("operation-%02d", i), false)
			if _, ok := s.(Operator); !ok {
				t.Fatalf("the door's session %T does not append under operation ids", s)
			}
			log := appendAll(t, s, op.Prefix, true)
			for j, st := range op.Steps {
				log = runStep(t, s, j, st, log)
			}
		})
	}
	if !o.Lenient {
		return
	}
	for i, r := range c.Refused {
		t.Run("lenient/"+r.Name, func(t *testing.T) {
			o.parallel(t)
			s := d.Create(t, fmt.Sprintf("lenient-%02d", i), true)
			appendAll(t, s, append(slices.Clone(r.Prefix), r.Event), true)
		})
	}
}

// runStep runs step j of an operation case on s, whose log is before, and
// returns the log after it.
func runStep(t *testing.T, s Session, j int, st Step, before []string) []string {
	t.Helper()
	var (
		seqs     []sdk.Seq
		replayed bool
		ref      *Refusal
		what     = "a plain append"
	)
	if st.OperationID != nil {
		what = fmt.Sprintf("operation %q", *st.OperationID)
		seqs, replayed, ref = s.(Operator).AppendOnce(t, *st.OperationID, st.Events)
	} else {
		seqs, ref = s.Append(t, st.Events)
	}
	if st.Code != "" {
		if len(seqs) != 0 {
			t.Errorf("step %d (%s): refused, yet answered seqs %v", j, what, seqs)
		}
		checkRefusal(t, ref, st.Code, st.Meta, st.Index)
		if after := s.Log(t); !slices.Equal(after, before) {
			t.Fatalf("step %d (%s): the refusal changed the log:\nbefore %q\nafter  %q", j, what, before, after)
		}
		return before
	}
	if ref != nil {
		t.Fatalf("step %d (%s): refused: %s: %s", j, what, ref.Code, ref.Text)
	}
	if !slices.Equal(seqs, st.Seqs) || replayed != st.Replayed {
		t.Fatalf("step %d (%s): seqs %v replayed %v, want seqs %v replayed %v", j, what, seqs, replayed, st.Seqs, st.Replayed)
	}
	after := s.Log(t)
	want := len(before)
	if !replayed {
		want += len(st.Events)
	}
	if len(after) != want || !slices.Equal(after[:len(before)], before) {
		t.Fatalf("step %d (%s): the log went from %d to %d events (want %d), or its head changed", j, what, len(before), len(after), want)
	}
	return after
}

// parallel marks t parallel when o asks for it.
func (o Options) parallel(t *testing.T) {
	if o.Parallel {
		t.Parallel()
	}
}

// appendAll appends ins to a new session, in one request when together
// is set and one request each otherwise, requires consecutive seqs from 0
// (a new session's log is empty), and returns the log after them.
func appendAll(t *testing.T, s Session, ins []Input, together bool) []string {
	t.Helper()
	batches := [][]Input{ins}
	if !together {
		batches = batches[:0]
		for _, in := range ins {
			batches = append(batches, []Input{in})
		}
	}
	next := 0
	for _, b := range batches {
		if len(b) == 0 {
			continue
		}
		seqs, ref := s.Append(t, b)
		if ref != nil {
			t.Fatalf("input %d refused: %s: %s", next+indexOr0(ref.Index), ref.Code, ref.Text)
		}
		want := make([]sdk.Seq, len(b))
		for i := range want {
			want[i] = sdk.Seq(next + i)
		}
		if !slices.Equal(seqs, want) {
			t.Fatalf("inputs %d… (%s…) got seqs %v, want %v", next, b[0].Input().Type, seqs, want)
		}
		next += len(b)
	}
	log := s.Log(t)
	if len(log) != len(ins) {
		t.Fatalf("the log holds %d events after %d appended to a new session", len(log), len(ins))
	}
	return log
}

func indexOr0(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// checkRefusal checks a refusal against a case: its code, its Meta (or,
// for a door that reports none, the values in its text) and its index.
func checkRefusal(t *testing.T, ref *Refusal, code sdk.Code, meta map[string]string, index int) {
	t.Helper()
	if ref == nil {
		t.Fatalf("accepted; want %s", code)
	}
	if ref.Code != code {
		t.Fatalf("refused with %s (%s); want %s", ref.Code, ref.Text, code)
	}
	if ref.DetailOnly {
		for k, v := range meta {
			if !strings.Contains(ref.Text, v) {
				t.Errorf("the error %q does not name %s %s", ref.Text, k, v)
			}
		}
	} else if err := MetaError(ref.Meta, meta); err != nil {
		t.Error(err)
	}
	if ref.Index != nil && *ref.Index != index {
		t.Errorf("index %d, want %d", *ref.Index, index)
	}
}

// unchanged checks that a refusal changed nothing: the log is the one
// before it, and next, legal in the state before it, gets the seq after
// it.
func unchanged(t *testing.T, s Session, before []string, next Input) {
	t.Helper()
	if after := s.Log(t); !slices.Equal(after, before) {
		t.Fatalf("the refusal changed the log:\nbefore %q\nafter  %q", before, after)
	}
	seqs, ref := s.Append(t, []Input{next})
	if ref != nil {
		t.Fatalf("the next legal input (%s) was refused: %s: %s", next.Input().Type, ref.Code, ref.Text)
	}
	if want := sdk.Seq(len(before)); len(seqs) != 1 || seqs[0] != want {
		t.Fatalf("the next legal input got seqs %v, want [%d]", seqs, want)
	}
}

// Inputs returns ins for the Go API.
func Inputs(ins []Input) []events.Input {
	out := make([]events.Input, len(ins))
	for i, in := range ins {
		out[i] = in.Input()
	}
	return out
}

// Seqs returns the seqs of evs.
func Seqs(evs []events.Event) []sdk.Seq {
	var out []sdk.Seq
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

// Log renders evs for Session.Log: seq, type and data of each.
func Log(evs []events.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = fmt.Sprintf("%d %s %s", e.Seq, e.Type, e.Data)
	}
	return out
}

// RefusalOf returns the refusal an error of the Go API (or of the Go
// client) reports: nil for nil; an error without a logbook code fails t.
func RefusalOf(t testing.TB, err error) *Refusal {
	t.Helper()
	if err == nil {
		return nil
	}
	e := sdk.ErrorOf(err)
	if e == nil {
		t.Fatalf("append: %v (no logbook error)", err)
	}
	return &Refusal{Code: e.Code, Meta: e.Meta, Index: e.Index, Text: err.Error()}
}

// CreateOptions returns the header of a new session for Door.Create: the
// default (strict), or protocol "lenient".
func CreateOptions(lenient bool) events.CreateOptions {
	if lenient {
		return events.CreateOptions{Protocol: sdk.ProtocolLenient}
	}
	return events.CreateOptions{}
}

// RequireProtocol fails t unless a new session's header says what
// CreateOptions(lenient) asked for.
func RequireProtocol(t testing.TB, h sdk.Header, lenient bool) {
	t.Helper()
	if want := CreateOptions(lenient).Protocol; h.Protocol != want {
		t.Fatalf("created with protocol %q, the header says %q", want, h.Protocol)
	}
}
