package pruner

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// Name is the plugin's name.
const Name = "pruner"

// Pruner is the sdk.Pruner of docs/compaction.md: PruneMessage over every offered
// node. It has no state and is safe for concurrent use; the zero value is
// ready.
type Pruner struct{}

// Prune validates the budget, then prunes each node in order and returns
// one replacement per node whose text exceeds budget.ThresholdChars, in the
// order of nodes. Nothing is returned for the others, so a second run over
// the replaced nodes returns nothing.
//
// Errors carry sessionID: CONFIG_INVALID for a bad budget (before any node
// is read); PAYLOAD_INVALID, with the node's seq, for a message that is not
// a tool result PruneMessage can read; COMPACTION_CANCELLED wrapping the
// context's error when ctx ends between nodes.
func (Pruner) Prune(ctx context.Context, sessionID string, nodes []sdk.PruneNode, budget sdk.PruneBudget) ([]sdk.PruneReplacement, error) {
	if err := ValidateBudget(budget); err != nil {
		return nil, withSession(err, sessionID)
	}
	var out []sdk.PruneReplacement
	for _, n := range nodes {
		if err := ctx.Err(); err != nil {
			return nil, &sdk.Error{Code: sdk.CodeCompactionCancelled, Op: op, SessionID: sessionID,
				Detail: "pruning stopped: the caller's context ended", Err: err}
		}
		r, ok, err := PruneMessage(n.Message, budget)
		if err != nil {
			if e, ok := err.(*sdk.Error); ok {
				err = e.WithSeq(int64(n.Seq))
			}
			return nil, withSession(err, sessionID)
		}
		if ok {
			out = append(out, sdk.PruneReplacement{Seq: n.Seq, Content: r.Content, CharsBefore: r.CharsBefore, CharsAfter: r.CharsAfter})
		}
	}
	return out, nil
}

// withSession sets the session of an error made by this package.
func withSession(err error, sessionID string) error {
	if e, ok := err.(*sdk.Error); ok {
		return e.WithSession(sessionID)
	}
	return err
}

// ServeConfig is what a pruner plugin process serves: Info (name "pruner",
// kind pruner, the given version) and a Pruner. It takes no config block:
// the budget comes with every request. cmd/logbook serves it as
// `logbook plugin pruner`.
func ServeConfig(version string) pluginrpc.ServeConfig {
	return pluginrpc.ServeConfig{
		Info:   sdk.Info{Name: Name, Version: version, Kinds: []sdk.Kind{sdk.KindPruner}},
		Pruner: Pruner{},
	}
}

var _ sdk.Pruner = Pruner{}
