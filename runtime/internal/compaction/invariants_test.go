package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// invSession returns a session with the compaction validator installed.
// The invariant tests put bare messages around compaction brackets, a
// foreign loop, so it is lenient (docs/format.md, "The agent-loop
// protocol"): the compaction invariants apply all the same.
func invSession(t *testing.T) *session.Session {
	t.Helper()
	s, err := session.New(session.Options{Header: sdk.Header{FormatVersion: sdk.FormatVersion, ID: "inv", Protocol: sdk.ProtocolLenient},
		Clock: session.ClockFunc(func() int64 { return 1 }), Relational: []session.Relational{NewValidator()}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func lg(typ, data string) session.AppendInput {
	return session.AppendInput{Type: typ, Data: []byte(data)}
}

func startEv(id, turn string) session.AppendInput {
	return lg(session.TypeCompactionStart, `{"compactionId":"`+id+`","turn":`+turn+`}`)
}

func endEv(id, turn, errText string) session.AppendInput {
	e := ""
	if errText != "" {
		e = `,"error":"` + errText + `"`
	}
	return lg(session.TypeCompactionEnd, `{"compactionId":"`+id+`","turn":`+turn+e+`}`)
}

func summaryEv(id string, seqs []int, start, end int, tokens string) session.AppendInput {
	parts := make([]string, len(seqs))
	for i, x := range seqs {
		parts[i] = fmt.Sprint(x)
	}
	return lg(session.TypeCompactionSummary, fmt.Sprintf(`{"compactionId":%q,"summary":[{"type":"text","text":"s"}],"shadowedRange":{"start":%d,"end":%d},"shadowedSeqs":[%s],"shadowedTokenCount":%s,"provider":"p","model":"m"}`,
		id, start, end, strings.Join(parts, ","), tokens))
}

func userEv(id, text string) session.AppendInput {
	return session.AppendInput{Type: session.TypeUserMessage, SurfaceOp: &session.SurfaceOp{},
		Data: []byte(`{"id":"` + id + `","role":"user","content":[{"type":"text","text":"` + text + `"}],"source":{"kind":"prompt"}}`)}
}

func checkpointEv(id string, start, end sdk.Seq, sources ...sdk.Seq) session.AppendInput {
	return session.AppendInput{Type: session.TypeUserMessage, SurfaceOp: &session.SurfaceOp{Replace: true, StartSeq: start, EndSeq: end},
		SourceEventSeqs: sources,
		Data:            []byte(`{"id":"compaction-` + id + `","role":"user","content":[{"type":"text","text":"c"}],"source":{"kind":"compact-checkpoint","compactionId":"` + id + `"}}`)}
}

func turnStartEv(n int) session.AppendInput {
	return lg(session.TypeTurnStart, fmt.Sprintf(`{"turn":%d}`, n))
}

func turnEndEv(n int) session.AppendInput {
	return lg(session.TypeTurnEnd, fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, n))
}

func appendOK(t *testing.T, s *session.Session, ins ...session.AppendInput) {
	t.Helper()
	for _, in := range ins {
		if _, err := s.Append(context.Background(), in); err != nil {
			t.Fatalf("append %s %s: %v", in.Type, in.Data, err)
		}
	}
}

// requireViolation appends in, which must fail with COMPACTION_INVARIANT
// naming rule and the parts, leaving the log unchanged.
func requireViolation(t *testing.T, s *session.Session, in session.AppendInput, rule int, parts ...string) {
	t.Helper()
	n := s.Len()
	_, err := s.Append(context.Background(), in)
	var e *sdk.Error
	if !errors.As(err, &e) || e.Code != sdk.CodeCompactionInvariant {
		t.Fatalf("append %s %s: %v; want COMPACTION_INVARIANT", in.Type, in.Data, err)
	}
	if want := fmt.Sprintf("rule %d:", rule); !strings.HasPrefix(e.Detail, want) {
		t.Errorf("detail %q does not start with %q", e.Detail, want)
	}
	for _, p := range parts {
		if !strings.Contains(e.Detail, p) {
			t.Errorf("detail %q does not mention %q", e.Detail, p)
		}
	}
	if e.SessionID != "inv" || (e.Seq == nil || *e.Seq != int64(n)) {
		t.Errorf("error %v; want session inv, seq %d", e, n)
	}
	if s.Len() != n {
		t.Fatalf("a rejected append changed Len from %d to %d", n, s.Len())
	}
}

func TestInvariantRule1StartWhileOpen(t *testing.T) {
	s := invSession(t)
	appendOK(t, s, startEv("a", "null"))
	requireViolation(t, s, startEv("b", "null"), 1, `"b"`, `"a"`)
	appendOK(t, s, endEv("a", "null", "failed"), startEv("b", "null"))
}

func TestInvariantRule2Summary(t *testing.T) {
	s := invSession(t)
	appendOK(t, s, userEv("u0", "x"), userEv("u1", "y"))
	requireViolation(t, s, summaryEv("a", []int{0, 1}, 0, 1, "5"), 2, "no open bracket")
	appendOK(t, s, startEv("a", "null"))
	requireViolation(t, s, summaryEv("b", []int{0, 1}, 0, 1, "5"), 2, `"b"`, `"a"`)
	requireViolation(t, s, summaryEv("a", []int{}, 0, 1, "5"), 2, "empty")
	requireViolation(t, s, summaryEv("a", []int{0, 0}, 0, 0, "5"), 2, "0 more than once")
	requireViolation(t, s, summaryEv("a", []int{0, 1}, 0, 0, "5"), 2, "start 0, end 0", "(0, 1)")
	requireViolation(t, s, summaryEv("a", []int{0, 1}, 0, 1, "-1"), 2, "-1")
	appendOK(t, s, summaryEv("a", []int{0, 1}, 0, 1, "5"))
	requireViolation(t, s, summaryEv("a", []int{0, 1}, 0, 1, "5"), 2, "second")
}

func TestInvariantRule3End(t *testing.T) {
	s := invSession(t)
	appendOK(t, s, userEv("u0", "x"))
	requireViolation(t, s, endEv("a", "null", ""), 3, "no open bracket")
	appendOK(t, s, turnStartEv(1), startEv("a", "1"))
	requireViolation(t, s, endEv("b", "1", "x"), 3, `"b"`, `"a"`)
	requireViolation(t, s, endEv("a", "null", "x"), 3, "turn none", "turn 1")
	requireViolation(t, s, endEv("a", "2", "x"), 3, "turn 2")
	requireViolation(t, s, endEv("a", "1", ""), 3, "0 summaries")
	appendOK(t, s, endEv("a", "1", "summarizer failed")) // an error end needs no summary
}

func TestInvariantRule4BracketTurn(t *testing.T) {
	s := invSession(t)
	requireViolation(t, s, startEv("a", "1"), 4, "turn 1", "none")
	appendOK(t, s, turnStartEv(1))
	requireViolation(t, s, startEv("a", "2"), 4, "turn 2", "open turn is 1")
	requireViolation(t, s, startEv("a", "null"), 4, "turn 1 is open")
	appendOK(t, s, startEv("a", "1"))
}

func TestInvariantRule5TurnsAroundBrackets(t *testing.T) {
	s := invSession(t)
	appendOK(t, s, turnStartEv(1), startEv("a", "1"))
	requireViolation(t, s, turnEndEv(1), 5, "turn 1", `"a"`)
	appendOK(t, s, endEv("a", "1", "x"), turnEndEv(1), startEv("b", "null"))
	requireViolation(t, s, turnStartEv(2), 5, "turn 2", `"b"`)
	appendOK(t, s, endEv("b", "null", "x"), turnStartEv(2))
}

func TestInvariantRule6Checkpoint(t *testing.T) {
	s := invSession(t)
	appendOK(t, s, userEv("u0", "x"), userEv("u1", "y"))
	requireViolation(t, s, checkpointEv("a", 0, 1, 0, 1), 6, "no open bracket")
	appendOK(t, s, startEv("a", "null"))
	requireViolation(t, s, checkpointEv("b", 0, 1, 2, 0, 1), 6, `"b"`, `"a"`)
	appendOK(t, s, summaryEv("a", []int{0, 1}, 0, 1, "9"), checkpointEv("a", 0, 1, 2, 3, 0, 1), endEv("a", "null", ""))
	appendOK(t, s, userEv("u2", "ordinary user messages are never checked"))
}

// A lifecycle marker releases an abandoned bracket (docs/architecture.md): the lock
// opens, and the invariants no longer see the old bracket.
func TestLifecycleMarkerReleasesBracket(t *testing.T) {
	seed := []session.Event{}
	for i, env := range []string{
		`{"seq":0,"time":1,"type":"compaction/start","data":{"compactionId":"a","turn":null}}`,
		`{"seq":1,"time":1,"type":"session/end-seed","data":{}}`,
	} {
		e, err := session.ParseEnvelope([]byte(env), 0)
		if err != nil {
			t.Fatal(i, err)
		}
		seed = append(seed, e)
	}
	if b, open := OpenBracket(session.EventListOf(seed[:1])); !open || b.ID != "a" || b.Turn != -1 {
		t.Fatalf("before the marker: %+v %v", b, open)
	}
	if _, open := OpenBracket(session.EventListOf(seed)); open {
		t.Fatal("the marker must release the bracket")
	}
	s, err := session.RestoreEvents(context.Background(), session.Options{Header: sdk.Header{FormatVersion: sdk.FormatVersion, ID: "inv"},
		Relational: []session.Relational{NewValidator()}}, session.RestoreOptions{}, seed)
	if err != nil {
		t.Fatal(err)
	}
	appendOK(t, s, startEv("b", "null"))
	requireViolationOn := func() {
		if _, err := s.Append(context.Background(), endEv("a", "null", "late")); !errors.Is(err, sdk.CodeCompactionInvariant) {
			t.Fatalf("an end for the abandoned bracket: %v", err)
		}
	}
	requireViolationOn()
}

// The validator folds incrementally and recovers when a rejected group's
// members, which it saw, never reach the log.
func TestValidatorAfterRejectedGroup(t *testing.T) {
	s := invSession(t)
	appendOK(t, s, userEv("u0", "x"), userEv("u1", "y"), startEv("a", "null"))
	_, err := s.AppendGroup(context.Background(), []session.AppendInput{
		summaryEv("a", []int{0, 1}, 0, 1, "9"),
		checkpointEv("a", 0, 1, 2, 3, 0, 1),
		endEv("a", "1", ""), // wrong turn: rule 3 rejects the whole group
	})
	if !errors.Is(err, sdk.CodeCompactionInvariant) {
		t.Fatalf("group: %v", err)
	}
	// The summary seen as a pending member must not count now.
	if _, err := s.AppendGroup(context.Background(), []session.AppendInput{
		summaryEv("a", []int{0, 1}, 0, 1, "9"),
		checkpointEv("a", 0, 1, 2, 3, 0, 1),
		endEv("a", "null", ""),
	}); err != nil {
		t.Fatal(err)
	}
	if b, open := OpenBracket(s.Events()); open {
		t.Fatalf("bracket %+v still open", b)
	}
}
