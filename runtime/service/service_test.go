package service_test

import (
	"context"
	"errors"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/internal/testbin"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// logbookBin is the logbook binary the engine re-execs for its plugins.
var logbookBin string

func TestMain(m *testing.M) { testbin.Main(m, &logbookBin) }

// openMemory opens a service over the memory backend.
func openMemory(tb testing.TB) *service.Service {
	tb.Helper()
	ctx := context.Background()
	cfg, err := config.Parse([]byte(`persistence "memory" {}`), "memory.hcl")
	if err != nil {
		tb.Fatal(err)
	}
	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { svc.Close(ctx) })
	return svc
}

// note is a valid input; bad one the session rejects (its data is no JSON).
var (
	note = events.Input{Type: "app/note", Ignorable: true, Data: []byte(`{"n":1}`)}
	bad  = events.Input{Type: "app/note", Ignorable: true, Data: []byte(`{`)}
)

// create makes the live session id holding n notes.
func create(tb testing.TB, svc *service.Service, id string, n int) *service.Session {
	tb.Helper()
	ctx := context.Background()
	s, err := svc.Create(ctx, service.CreateRequest{ID: id})
	if err != nil {
		tb.Fatal(err)
	}
	for range n {
		if _, err := s.Append(ctx, service.AppendRequest{Inputs: []events.Input{note}}); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

func requireCode(tb testing.TB, err error, code sdk.Code) {
	tb.Helper()
	if got := sdk.CodeOf(err); got != code {
		tb.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

// An append at an expected seq other than the log's length is
// SEQ_CONFLICT and appends nothing, alone or as a group, by handle or by
// id.
func TestExpectedSeqConflictChangesNothing(t *testing.T) {
	ctx := context.Background()
	svc := openMemory(t)
	s := create(t, svc, "s", 2)
	stale := sdk.Offset(1)
	for _, group := range []bool{false, true} {
		r := service.AppendRequest{Inputs: []events.Input{note, note}, Expected: &stale, Group: group}
		res, err := s.Append(ctx, r)
		requireCode(t, err, sdk.CodeSeqConflict)
		if len(res.Events) != 0 || s.Len() != 2 {
			t.Fatalf("group %v: appended %d, log %d; want 0 and 2", group, len(res.Events), s.Len())
		}
		res, err = svc.Append(ctx, "s", r)
		requireCode(t, err, sdk.CodeSeqConflict)
		if len(res.Events) != 0 || s.Len() != 2 {
			t.Fatalf("group %v by id: appended %d, log %d; want 0 and 2", group, len(res.Events), s.Len())
		}
	}
	exact := sdk.Offset(2)
	res, err := s.Append(ctx, service.AppendRequest{Inputs: []events.Input{note}, Expected: &exact})
	if err != nil || len(res.Events) != 1 || res.Events[0].Seq != 2 {
		t.Fatalf("append at the length: %v, %+v", err, res)
	}
}

// A batch stopped by a rejected input reports the events appended before
// it and the seq of the first; the rejected input's Index is its position.
// One that appends nothing reports the log length it found.
func TestPartialFailureReportsAppendedAndFirstSeq(t *testing.T) {
	ctx := context.Background()
	svc := openMemory(t)
	s := create(t, svc, "s", 3)
	for _, c := range []struct {
		name     string
		ins      []events.Input
		appended int
		first    sdk.Offset
	}{
		{"two then a rejected one", []events.Input{note, note, bad, note}, 2, 3},
		{"a rejected first", []events.Input{bad, note}, 0, 5},
	} {
		res, err := svc.Append(ctx, "s", service.AppendRequest{Inputs: c.ins, Flush: true})
		var se *sdk.Error
		if !errors.As(err, &se) || se.Index == nil || *se.Index != c.appended {
			t.Fatalf("%s: error %v, want one with Index %d", c.name, err, c.appended)
		}
		if len(res.Events) != c.appended || res.FirstSeq == nil || *res.FirstSeq != c.first {
			t.Fatalf("%s: appended %d, firstSeq %v; want %d and %d", c.name, len(res.Events), res.FirstSeq, c.appended, c.first)
		}
		for i, e := range res.Events {
			if e.Seq != sdk.Seq(c.first)+sdk.Seq(i) {
				t.Fatalf("%s: event %d has seq %d", c.name, i, e.Seq)
			}
		}
	}
	if s.Len() != 5 {
		t.Fatalf("log %d, want 5", s.Len())
	}
}

// A group with a rejected member appends nothing; a good group appends
// every member with consecutive seqs.
func TestGroupIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	svc := openMemory(t)
	s := create(t, svc, "s", 1)
	res, err := svc.Append(ctx, "s", service.AppendRequest{Inputs: []events.Input{note, note, bad}, Group: true})
	var se *sdk.Error
	if !errors.As(err, &se) || se.Index == nil || *se.Index != 2 {
		t.Fatalf("error %v, want the third member's", err)
	}
	if len(res.Events) != 0 || res.FirstSeq != nil || s.Len() != 1 {
		t.Fatalf("appended %d, firstSeq %v, log %d; want nothing appended", len(res.Events), res.FirstSeq, s.Len())
	}
	res, err = svc.Append(ctx, "s", service.AppendRequest{Inputs: []events.Input{note, note}, Group: true})
	if err != nil || len(res.Events) != 2 || *res.FirstSeq != 1 || s.Len() != 3 {
		t.Fatalf("good group: %v, %+v, log %d", err, res, s.Len())
	}
}

// A failed append leaves a session that was not live as it was, not live;
// a successful one leaves it live. A session live before stays live.
func TestFailedAppendReleasesASessionItResumed(t *testing.T) {
	ctx := context.Background()
	svc := openMemory(t)
	s := create(t, svc, "s", 1)
	if err := s.Release(ctx); err != nil {
		t.Fatal(err)
	}
	live := func() bool {
		st, err := svc.Stat(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		return st.Live
	}
	if _, err := svc.Append(ctx, "s", service.AppendRequest{Inputs: []events.Input{bad}}); err == nil {
		t.Fatal("a bad input was appended")
	}
	if live() {
		t.Fatal("a failed append left the session it resumed live")
	}
	if _, err := svc.Append(ctx, "s", service.AppendRequest{Inputs: []events.Input{note}}); err != nil {
		t.Fatal(err)
	}
	if !live() {
		t.Fatal("a successful append left the session not live")
	}
	if _, err := svc.Append(ctx, "s", service.AppendRequest{Inputs: []events.Input{bad}}); err == nil {
		t.Fatal("a bad input was appended")
	}
	if !live() {
		t.Fatal("a failed append released a session that was live before it")
	}
}
