package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// callIDOf returns an id of n bytes: ASCII, or two-byte runes (with one
// ASCII byte when n is odd) when wide.
func callIDOf(n int, wide bool) string {
	if !wide {
		return strings.Repeat("c", n)
	}
	return strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
}

// Every member that carries a call id, as an input carrying id; answers
// says the input names a call an assistant/message announced.
var callIDCarriers = []struct {
	name    string
	path    string
	answers bool
	in      func(id string) AppendInput
}{
	{"tool/call callId", "data.callId", true, func(id string) AppendInput { return evToolCall(1, 1, id) }},
	{"tool/result toolCallId", "data.message.toolCallId", true, func(id string) AppendInput { return evR("r1", id, "done") }},
	{"assistant/message tool-call block id", "data.message.content[1].id", false, func(id string) AppendInput {
		return evACalls(1, 1, "a1", "short", id)
	}},
}

// openStepWith opens step 1 of turn 1 in s and, when announce is set,
// announces call id in it.
func openStepWith(t *testing.T, s *Session, id string, announce bool) {
	t.Helper()
	mustAppendAll(t, s, evTurnStart(1), evStepStart(1, 1))
	if announce {
		mustAppend(t, s, evACalls(1, 1, "a0", id))
	}
}

func TestCallIDsAreAtMostMaxCallIDBytesAtAppend(t *testing.T) {
	if sdk.MaxCallIDBytes != 128 {
		t.Fatalf("sdk.MaxCallIDBytes = %d; the format says 128", sdk.MaxCallIDBytes)
	}
	for _, c := range callIDCarriers {
		for _, wide := range []bool{false, true} {
			for n := 1; n <= sdk.MaxCallIDBytes+1; n++ {
				if wide && n < 2 {
					continue
				}
				id := callIDOf(n, wide)
				t.Run(c.name+"/"+strconv.Itoa(n)+map[bool]string{true: "-utf8"}[wide], func(t *testing.T) {
					s, _ := newTestSession(t)
					openStepWith(t, s, id, c.answers && n <= sdk.MaxCallIDBytes)
					if n <= sdk.MaxCallIDBytes {
						mustAppend(t, s, c.in(id))
						return
					}
					rejectAppend(t, s, c.in(id), sdk.CodePayloadInvalid, c.path, "129 bytes", "at most 128 bytes")
				})
			}
		}
	}
	// The bound is on the decoded string: escapes in the input do not count.
	s, _ := newTestSession(t)
	openStepWith(t, s, callIDOf(sdk.MaxCallIDBytes, false), true)
	escaped := strings.Repeat(`\u0063`, sdk.MaxCallIDBytes)
	mustAppend(t, s, evRaw(TypeToolCall, `{"turn":1,"step":1,"callId":"`+escaped+`","name":"read","arguments":"{}"}`))
	// A group is refused whole.
	s, _ = newTestSession(t)
	before := stateOf(t, s)
	if _, err := s.AppendGroup(context.Background(), []AppendInput{evTurnStart(1), evToolCall(1, 1, callIDOf(240, false))}); err == nil {
		t.Fatal("a group with a 240-byte call id was accepted")
	} else {
		requireDetail(t, requireCode(t, err, sdk.CodePayloadInvalid), "240 bytes", "at most 128 bytes")
	}
	requireUnchanged(t, before, s)
}

// storedOpenCall is a stored log (as a log written before call ids were
// bounded holds it) that stops inside step 1 of turn 1 with call id
// started and call other announced only.
func storedOpenCall(t *testing.T, id, other string) []Event {
	t.Helper()
	calls := blockCall(id) + "," + blockCall(other)
	envs := [][]byte{
		envLine(0, TypeTurnStart, `{"turn":1}`, ""),
		envLine(1, TypeUserMessage, dataUser("u1", "go"), `,"surfaceOp":"append"`),
		envLine(2, TypeStepStart, `{"turn":1,"step":1}`, ""),
		envLine(3, TypeAssistantMessage, dataAsst(1, 1, "a1", calls), `,"surfaceOp":"append"`),
		envLine(4, TypeToolCall, `{"turn":1,"step":1,"callId":`+tcQuote(id)+`,"name":"read","arguments":"{}"}`, ""),
	}
	s, err := Restore(context.Background(), restoreOpts(), RestoreOptions{}, envs)
	if err != nil {
		t.Fatalf("a stored log with call ids of %d and %d bytes does not restore: %v", len(id), len(other), err)
	}
	return s.Events().Slice()
}

func hashedCloserID(cause, callID string, seq int) string {
	sum := sha256.Sum256([]byte(callID))
	return cause + "-tool-result-h" + hex.EncodeToString(sum[:])[:16] + "-" + strconv.Itoa(seq)
}

func TestCloserIDsOfLongStoredCallIDsAreHashed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		id, other string
		want      func(cause string) [2]string
	}{
		{"at the bound the id is embedded", callIDOf(128, false), "n", func(cause string) [2]string {
			return [2]string{cause + "-tool-result-" + callIDOf(128, false) + "-5", cause + "-tool-result-n-6"}
		}},
		{"past the bound the id is hashed", callIDOf(240, false), callIDOf(129, true), func(cause string) [2]string {
			return [2]string{hashedCloserID(cause, callIDOf(240, false), 5), hashedCloserID(cause, callIDOf(129, true), 6)}
		}},
		{"a 256-byte UTF-8 call id", callIDOf(256, true), callIDOf(255, false), func(cause string) [2]string {
			return [2]string{hashedCloserID(cause, callIDOf(256, true), 5), hashedCloserID(cause, callIDOf(255, false), 6)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := storedOpenCall(t, tc.id, tc.other)
			for _, cause := range []Cause{Interrupted, Forked} {
				closers := OpenTurnClosers(stored, cause)
				if len(closers) != 4 {
					t.Fatalf("%s: %d closers, want 4", cause, len(closers))
				}
				want := tc.want(string(cause))
				for i, callID := range []string{tc.id, tc.other} {
					m, ok := MessageOf(closers[i], nil)
					if !ok || m.ID() != want[i] {
						t.Errorf("%s closer %d: message id %q, want %q", cause, i, m.ID(), want[i])
					}
					if got, _ := closers[i].r.dataView().Get("message").Get("toolCallId").Str(); got != callID {
						t.Errorf("%s closer %d answers %q, want the stored call id", cause, i, got)
					}
				}
			}
			// The repaired log restores: the closers pass every stored-log rule.
			all := append(stored, ResumeBatch(stored, sdk.Torn{}, tT0+1)...)
			s := mustRestoreEvents(t, restoreOpts(), RestoreOptions{}, all)
			if s.Len() != 10 {
				t.Fatalf("repaired log of %d events, want 10", s.Len())
			}
			seed, _, err := ForkSeed(stored, nil, tT0+1)
			if err != nil {
				t.Fatal(err)
			}
			mustRestoreEvents(t, restoreOpts(func(o *Options) { o.Header = ForkHeader(o.Header, "child", 5, tT0+1) }), RestoreOptions{}, seed)
		})
	}
}

// A stored result of a call id past the bound can still be rewritten (a
// pruner's replacement changes only its content); a replacement cannot
// bring in another long id.
func TestARewriteOfAStoredResultKeepsItsLongCallID(t *testing.T) {
	long := callIDOf(240, false)
	envs := [][]byte{
		envLine(0, TypeTurnStart, `{"turn":1}`, ""),
		envLine(1, TypeStepStart, `{"turn":1,"step":1}`, ""),
		envLine(2, TypeAssistantMessage, dataAsst(1, 1, "a1", blockCall(long)), `,"surfaceOp":"append"`),
		envLine(3, TypeToolResult, dataResult("r1", long, "big output"), `,"surfaceOp":"append"`),
	}
	s, err := Restore(context.Background(), restoreOpts(), RestoreOptions{}, envs)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, replacing(evR("r1", long, "(pruned)"), 3, 3, 3))
	rejectAppend(t, s, replacing(evR("r1", callIDOf(241, false), "(pruned)"), 4, 4, 4), sdk.CodeToolResultRewriteOnlyContent)
	rejectAppend(t, s, evR("r2", long, "again"), sdk.CodePayloadInvalid, "data.message.toolCallId", "240 bytes")
}
