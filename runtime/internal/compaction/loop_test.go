package compaction

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/pruner"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// strictSession is txSession with the agent-loop rules on (docs/format.md,
// "The agent-loop protocol").
func strictSession(t testing.TB, mods ...func(*session.Options)) *session.Session {
	return txSession(t, append(mods, func(o *session.Options) { o.Header.Protocol = "" })...)
}

// txLoopConversation is txConversation written as the loop protocol asks:
// a system prompt (0), a header (1), turn/start 1 (2), then per round a
// user question and a step of its own (step/start, assistant tool call,
// tool result, assistant answer, step/end). It leaves turn 1 open unless
// closed is set.
func txLoopConversation(t testing.TB, s *session.Session, rounds, size int, closed bool) {
	t.Helper()
	txAppend(t, s, txSys("You are a test agent."), txHeader(), txTurnStart(1))
	for i := range rounds {
		call, step := fmt.Sprintf("call-%d", i), i+1
		txAppend(t, s,
			txUser(fmt.Sprintf("u%d", i), fmt.Sprintf("question %d %s", i, strings.Repeat("q", size))),
			txIn(session.TypeStepStart, fmt.Sprintf(`{"turn":1,"step":%d}`, step)),
			txAsstIn(1, step, fmt.Sprintf("a%d", i), "let me look", call),
			txResultIn(1, step, call, fmt.Sprintf("result %d %s", i, strings.Repeat("r", size))),
			txAsstIn(1, step, fmt.Sprintf("b%d", i), fmt.Sprintf("answer %d %s", i, strings.Repeat("a", size))),
			txIn(session.TypeStepEnd, fmt.Sprintf(`{"turn":1,"step":%d}`, step)),
		)
	}
	if closed {
		txAppend(t, s, txTurnEnd(1))
	}
}

// Compaction and the pruner write into a strict session while a step is
// open and a call waits for its result: their brackets, checkpoint and
// rewrites are exempt from the loop rules and leave the loop state as it
// was, so the harness goes on where it stopped.
func TestCompactionAndPruneKeepTheLoop(t *testing.T) {
	ctx := context.Background()
	c := txCompactor(t, &txSummarizer{}, func(o *Options) { o.Pruner = pruner.Pruner{} })
	s := strictSession(t)
	txLoopConversation(t, s, 6, 1000, false)
	big := strings.Repeat("é", 10_000)
	txAppend(t, s,
		txIn(session.TypeStepStart, `{"turn":1,"step":7}`),
		txAsstIn(1, 7, "a-big", "reading", "big", "waiting"),
		txResultIn(1, 7, "big", big),
	)
	n0 := s.Len()
	if _, err := c.Prune(ctx, s); err != nil {
		t.Fatal(err)
	}
	// Automatic compaction runs inside the open turn (a manual one needs
	// it closed): rounds 0 and 1, user question 3 to answer 13.
	if _, err := c.CompactRegion(ctx, s, 3, 13, Automatic); err != nil {
		t.Fatal(err)
	}
	if s.Len() <= n0+2 {
		t.Fatalf("prune and compaction appended %v", txTypes(s, n0))
	}
	// The call still waits: the loop refuses to end the step, then takes
	// its result and the step's and turn's ends.
	_, err := s.Append(ctx, txIn(session.TypeStepEnd, `{"turn":1,"step":7}`))
	txRequireCode(t, err, sdk.CodeToolCallsUnanswered, `["waiting"]`)
	txAppend(t, s, txResultIn(1, 7, "waiting", "done"), txIn(session.TypeStepEnd, `{"turn":1,"step":7}`), txTurnEnd(1))
	// A manual compaction between turns: the next turn follows it.
	if _, err := c.CompactNow(ctx, s, ""); err != nil {
		t.Fatal(err)
	}
	_, err = s.Append(ctx, txTurnStart(1))
	txRequireCode(t, err, sdk.CodeTurnNotIncreasing, "turn 1")
	txAppend(t, s, txTurnStart(2), txUser("u-next", "next"))
}
