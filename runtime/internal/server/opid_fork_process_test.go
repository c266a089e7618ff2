package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// A fork keeps the operations of its prefix (docs/format.md, "Operation
// ids"), on a real `logbook serve`: in a child whose prefix holds an
// operation whole, its retry is a replay with the parent's envelopes, and
// an operation the prefix does not reach is a new one there; in a child
// whose fork point cuts an operation, the id is still held, and its retry
// is OPERATION_CONFLICT naming the operation's first seq, since its
// events are not all in the child. Each child answers so while the fork
// has it live and again after a release, from what it stored.
func TestOperationReplayInAFork(t *testing.T) {
	start := time.Now()
	p := startServe(t, t.TempDir())
	if code, body := v1Addr(t, p.addr, http.MethodPost, "/v1/sessions", `{"id":"parent"}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	turn1, turn2 := opTurn(1, "list the files"), opTurn(2, "and the tests")
	op1 := mustAppend(t, p.addr, "parent", "events", "op-1", turn1, false, "flush", "true")
	op2 := mustAppend(t, p.addr, "parent", "events", "op-2", turn2, false, "flush", "true")
	fork := func(at int64, as string) {
		t.Helper()
		if code, body := v1Addr(t, p.addr, http.MethodPost, "/v1/sessions/parent/fork", fmt.Sprintf(`{"at":%d,"as":%q}`, at, as)); code != http.StatusCreated {
			t.Fatalf("fork at %d as %s: %d %s", at, as, code, body)
		}
	}
	fork(op2.firstSeq(t)-1, "whole") // op-1 whole, op-2 not at all
	fork(op2.firstSeq(t)+1, "cut")   // op-1 whole, op-2's turn/start and message only
	var op2InWhole opAnswer          // op-2 as the child "whole" appended it
	for _, pass := range []string{"live", "released"} {
		if r := mustAppend(t, p.addr, "whole", "events", "op-1", turn1, true); !bytes.Equal(r.body, op1.body) {
			t.Fatalf("%s: the replay of op-1 in the fork answers\n%s\nnot the parent's envelopes\n%s", pass, r.body, op1.body)
		}
		if r := mustAppend(t, p.addr, "cut", "events/group", "op-1", turn1, true); !bytes.Equal(r.body, op1.body) {
			t.Fatalf("%s: the replay of op-1 in the fork that cuts op-2 answers\n%s\nnot the parent's envelopes\n%s", pass, r.body, op1.body)
		}
		mustConflict(t, p.addr, "cut", "events", "op-2", turn2, op2.firstSeq(t), 3)
		if pass == "live" {
			op2InWhole = mustAppend(t, p.addr, "whole", "events", "op-2", turn2, false, "flush", "true")
			if op2InWhole.firstSeq(t) <= op2.firstSeq(t)-1 {
				t.Fatalf("op-2 in the fork starts at seq %d, inside the prefix", op2InWhole.firstSeq(t))
			}
		} else if r := mustAppend(t, p.addr, "whole", "events", "op-2", turn2, true); !bytes.Equal(r.body, op2InWhole.body) {
			t.Fatalf("the replay of op-2 in the fork after a release answers\n%s\nnot\n%s", r.body, op2InWhole.body)
		}
		for _, id := range []string{"whole", "cut"} {
			if code, body := v1Addr(t, p.addr, http.MethodPost, "/v1/sessions/"+id+"/release", ""); code != http.StatusNoContent {
				t.Fatalf("release %s: %d %s", id, code, body)
			}
		}
	}
	if r := mustAppend(t, p.addr, "parent", "events", "op-2", turn2, true); !bytes.Equal(r.body, op2.body) {
		t.Fatalf("the replay of op-2 in the parent answers\n%s\nnot\n%s", r.body, op2.body)
	}
	whole := readLog(t, p.addr, "whole")
	whole.once(t, []string{"u1", "u2"}, map[string]int64{"op-1": op1.firstSeq(t), "op-2": op2InWhole.firstSeq(t)})
	whole.holds(t, op1, op2InWhole)
	cut := readLog(t, p.addr, "cut")
	cut.once(t, []string{"u1", "u2"}, map[string]int64{"op-1": op1.firstSeq(t), "op-2": op2.firstSeq(t)})
	cut.holds(t, op1)
	t.Logf("%s", time.Since(start).Round(time.Millisecond))
}
