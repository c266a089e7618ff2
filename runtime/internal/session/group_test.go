package session

import (
	"context"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// commitCalls records each OnCommit call as one unit.
type commitCalls struct {
	mu    sync.Mutex
	units [][]Event
}

func (c *commitCalls) record(evs []Event) {
	c.mu.Lock()
	c.units = append(c.units, append([]Event(nil), evs...))
	c.mu.Unlock()
}

// relationalFunc adapts a function to Relational.
type relationalFunc func(events EventList, e Event) error

func (f relationalFunc) CheckAppend(events EventList, e Event) error { return f(events, e) }

// The three closing events of a compaction commit as one unit: contiguous
// seqs, one OnCommit call, one publish, and each member sees the previous
// ones (the checkpoint cites σ, a seq that exists only as a pending member).
func TestAppendGroupCommitsAsOneUnit(t *testing.T) {
	calls := &commitCalls{}
	var seenLens []int
	s, _ := newTestSession(t, bareMessages, func(o *Options) {
		o.OnCommit = calls.record
		o.Relational = []Relational{relationalFunc(func(events EventList, e Event) error {
			if int(e.Seq()) != events.Len() {
				t.Errorf("member seq %d validated against a log of %d events", e.Seq(), events.Len())
			}
			seenLens = append(seenLens, events.Len())
			return nil
		})}
	})
	mustAppendAll(t, s, evU("u0", "hello"), evA("a1", "hi"), evRaw(TypeCompactionStart, `{"compactionId":"c","turn":null}`))
	seenLens = nil
	calls.units = nil
	evs, err := s.AppendGroup(context.Background(), []AppendInput{
		evRaw(TypeCompactionSummary, `{"compactionId":"c","summary":[{"type":"text","text":"s"}],"shadowedRange":{"start":0,"end":1},"shadowedSeqs":[0,1],"shadowedTokenCount":20,"provider":"p","model":"m"}`),
		replacing(AppendInput{Type: TypeUserMessage, Data: tcRaw(`{"id":"compaction-c","role":"user","content":[{"type":"text","text":"sum"}],"source":{"kind":"compact-checkpoint","compactionId":"c"}}`)}, 0, 1, 2, 3, 0, 1),
		evRaw(TypeCompactionEnd, `{"compactionId":"c","turn":null}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || evs[0].Seq() != 3 || evs[1].Seq() != 4 || evs[2].Seq() != 5 {
		t.Fatalf("group events %v", evs)
	}
	if len(calls.units) != 1 || len(calls.units[0]) != 3 {
		t.Fatalf("OnCommit calls %d (sizes %v); want one call with 3 events", len(calls.units), unitSizes(calls.units))
	}
	if want := []int{3, 4, 5}; len(seenLens) != 3 || seenLens[0] != 3 || seenLens[1] != 4 || seenLens[2] != 5 {
		t.Fatalf("relational validator saw logs of %v events; want %v", seenLens, want)
	}
	sv, _ := s.Surface()
	if got := sv.Nodes(); len(got) != 1 || got[0] != 4 {
		t.Fatalf("surface %v; want [4]", got)
	}
	if s.Len() != 6 {
		t.Fatalf("Len %d", s.Len())
	}
	requireReplayEqual(t, s)
}

func unitSizes(units [][]Event) []int {
	out := make([]int, len(units))
	for i, u := range units {
		out[i] = len(u)
	}
	return out
}

// A rejected member rejects the whole group: nothing committed, no seq
// consumed, no OnCommit, every snapshot unchanged; the error names the member.
func TestAppendGroupRejectionChangesNothing(t *testing.T) {
	summary := evRaw(TypeCompactionSummary, `{"compactionId":"c","summary":[{"type":"text","text":"s"}],"shadowedRange":{"start":0,"end":1},"shadowedSeqs":[0,1],"shadowedTokenCount":20,"provider":"p","model":"m"}`)
	end := evRaw(TypeCompactionEnd, `{"compactionId":"c","turn":null}`)
	checkpoint := func(sources ...sdk.Seq) AppendInput {
		return replacing(AppendInput{Type: TypeUserMessage, Data: tcRaw(`{"id":"compaction-c","role":"user","content":[{"type":"text","text":"sum"}],"source":{"kind":"compact-checkpoint","compactionId":"c"}}`)}, 0, 1, sources...)
	}
	cases := []struct {
		name  string
		group []AppendInput
		code  sdk.Code
		index int
		rel   Relational
	}{
		{"member 2 coverage", []AppendInput{summary, checkpoint(2, 0), end}, sdk.CodeReplaceCoverage, 1, nil},
		{"member 2 cites a later member", []AppendInput{summary, checkpoint(2, 4, 0, 1), end}, sdk.CodeSourcesNotEarlier, 1, nil},
		{"member 3 payload", []AppendInput{summary, checkpoint(2, 0, 1), evRaw(TypeCompactionEnd, `{"compactionId":"","turn":null}`)}, sdk.CodePayloadInvalid, 2, nil},
		{"member 1 type", []AppendInput{evRaw("nope/x", `{}`), end}, sdk.CodeUnknownEventType, 0, nil},
		{"two surface members", []AppendInput{evU("x", "y"), evU("z", "w")}, sdk.CodeSurfaceOpNotAllowed, 1, nil},
		{"relational on member 3", []AppendInput{summary, checkpoint(2, 0, 1), end}, sdk.CodeCompactionInvariant, 2,
			relationalFunc(func(events EventList, e Event) error {
				if e.Type() == TypeCompactionEnd {
					return sdk.Errorf(sdk.CodeCompactionInvariant, "compaction", "refused")
				}
				return nil
			})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			s, _ := newTestSession(t, bareMessages, func(o *Options) {
				feed := o.OnCommit
				o.OnCommit = func(evs []Event) { calls++; feed(evs) }
				if tc.rel != nil {
					o.Relational = []Relational{tc.rel}
				}
			})
			mustAppendAll(t, s, evU("u0", "hello"), evA("a1", "hi"))
			calls = 0
			before := stateOf(t, s)
			evs, err := s.AppendGroup(context.Background(), tc.group)
			if evs != nil {
				t.Errorf("rejected group returned events %v", evs)
			}
			e := requireCode(t, err, tc.code)
			if (e.Index == nil || *e.Index != tc.index) || e.SessionID != "s1" {
				t.Errorf("error %v; want member %d of s1", err, tc.index)
			}
			requireUnchanged(t, before, s)
			if calls != 0 {
				t.Errorf("OnCommit called %d times for a rejected group", calls)
			}
			// The seqs were not consumed: the next append takes seq 2.
			if ev := mustAppend(t, s, evU("u2", "next")); ev.Seq() != 2 {
				t.Errorf("next append took seq %d; want 2", ev.Seq())
			}
			requireReplayEqual(t, s)
		})
	}
}

// Members are validated against the state including the members before
// them: a developer/message may bind to a request/header of its own group,
// and a second "initial" header in one group is refused.
func TestAppendGroupMembersSeeEarlierMembers(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppendAll(t, s, evTurnStart(1), evStepStart(1, 1))
	header := `{"config":{"provider":"p","model":"m"},"tools":[{"name":"search","description":"d","parameters":{}}]}`
	evs, err := s.AppendGroup(context.Background(), []AppendInput{
		evHeader("initial", header),
		evDeveloper("d1", 2, blockAddition("search")),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || len(s.ToolHistory().Updates) != 1 {
		t.Fatalf("events %d, tool history %+v", len(evs), s.ToolHistory())
	}
	s2, _ := newTestSession(t)
	before := stateOf(t, s2)
	_, err = s2.AppendGroup(context.Background(), []AppendInput{evHeader("initial", plainHeader), evHeader("initial", plainHeader)})
	if e := requireCode(t, err, sdk.CodeHeaderReasonInvalid); e.Index == nil || *e.Index != 1 {
		t.Fatalf("error %v names the wrong index", e)
	}
	requireUnchanged(t, before, s2)
	if _, err := s2.AppendGroup(context.Background(), []AppendInput{evHeader("initial", plainHeader), evHeader("change", `{"config":{"provider":"p","model":"n"}}`)}); err != nil {
		t.Fatal(err)
	}
}

// A group of one behaves like Append; an empty group appends nothing; a
// released session refuses a group like an append.
func TestAppendGroupEdges(t *testing.T) {
	s, _ := newTestSession(t)
	evs, err := s.AppendGroup(context.Background(), []AppendInput{evSys("s", "x")})
	if err != nil || len(evs) != 1 || evs[0].Seq() != 0 {
		t.Fatalf("%v %v", evs, err)
	}
	before := stateOf(t, s)
	if evs, err := s.AppendGroup(context.Background(), nil); err != nil || evs != nil {
		t.Fatalf("empty group: %v %v", evs, err)
	}
	requireUnchanged(t, before, s)
	ctl(s).Close()
	_, err = s.AppendGroup(context.Background(), []AppendInput{evTurnStart(1), evTurnEnd(1)})
	requireCode(t, err, sdk.CodeSessionClosed)
}

// AppendGroupAt commits only at the planned position: a group planned for a
// seq another append took is refused with SEQ_CONFLICT and changes nothing.
func TestAppendGroupAtRefusesAMovedLog(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppendAll(t, s, evSys("s0", "x"))
	before := stateOf(t, s)
	_, err := s.AppendGroupAt(context.Background(), 0, []AppendInput{evTurnStart(1), evTurnEnd(1)})
	e := requireCode(t, err, sdk.CodeSeqConflict)
	requireDetail(t, e, "log length of 0", "log holds 1")
	if want, _ := e.MetaInt("expected"); want != 0 {
		t.Errorf("expected %d, want 0", want)
	}
	if got, _ := e.MetaInt("actual"); got != 1 {
		t.Errorf("actual %d, want 1", got)
	}
	requireUnchanged(t, before, s)
	evs, err := s.AppendGroupAt(context.Background(), 1, []AppendInput{evTurnStart(1), evTurnEnd(1)})
	if err != nil || evs[0].Seq() != 1 || evs[1].Seq() != 2 {
		t.Fatalf("%v %v", evs, err)
	}
	_, err = s.AppendGroupAt(context.Background(), -1, []AppendInput{evTurnStart(2)})
	requireCode(t, err, sdk.CodeInvalidSeq)
}
