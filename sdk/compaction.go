package sdk

import "context"

// SummarizeRequest is the input of a summarizer (docs/compaction.md). Byte fields
// hold canonical JSON.
type SummarizeRequest struct {
	SessionID    string
	CompactionID string
	Provider     string
	Model        string
	MaxTokens    int64
	System       []byte   // derived message of node 0 if it is a non-empty system/message
	Tools        []byte   // folded header tools (JSON array), or empty
	Config       []byte   // folded header config, or empty
	Messages     [][]byte // derived messages of the region, in surface order
	Instruction  string   // sent as the final user message
}

// SummarizeReply is a summarizer's answer.
type SummarizeReply struct {
	Summary   [][]byte // content blocks; only "text" is accepted
	Provider  string
	Model     string
	Usage     []byte // TokenUsage JSON, or empty
	RawOutput []byte // optional opaque JSON
}

// SelectRangeRequest asks a summarizer with the "select-range" capability to
// choose the span to compact.
type SelectRangeRequest struct {
	SessionID    string
	Nodes        []Seq   // the current surface
	Tokens       []int64 // estimated tokens per node, parallel to Nodes
	Messages     [][]byte
	RetainTokens int64
}

// SelectRangeReply is the chosen span (inclusive, surface order); OK false
// means "no choice, use the host's".
type SelectRangeReply struct {
	Start, End Seq
	OK         bool
}

// Summarizer is a compaction strategy (docs/compaction.md).
type Summarizer interface {
	Summarize(ctx context.Context, r SummarizeRequest) (SummarizeReply, error)
}

// RangeSelector is implemented by summarizers that declare the
// "select-range" capability.
type RangeSelector interface {
	SelectRange(ctx context.Context, r SelectRangeRequest) (SelectRangeReply, error)
}

// PruneNode is a current tool/result node offered to a pruner (docs/compaction.md).
type PruneNode struct {
	Seq     Seq
	CallID  string
	Message []byte
}

// PruneBudget is the pruner's budget in code points.
type PruneBudget struct {
	ThresholdChars, HeadChars, TailChars int64
}

// PruneReplacement is new content for one node.
type PruneReplacement struct {
	Seq         Seq
	Content     []byte // JSON array of content blocks
	CharsBefore int64
	CharsAfter  int64
}

// Pruner is a model-free tool-result pruner (docs/compaction.md).
type Pruner interface {
	Prune(ctx context.Context, sessionID string, nodes []PruneNode, budget PruneBudget) ([]PruneReplacement, error)
}

// ProjectTarget is a node and a message: in a request, its current derived
// message; in a reply, the decided one (docs/plugins.md).
type ProjectTarget struct {
	Seq       Seq
	EventType string
	Message   []byte
}

// ProjectRequest is the input of a projection definition.
type ProjectRequest struct {
	SessionID string
	Event     []byte // the canonical envelope of the projection event
	Nodes     []Seq
	Targets   []ProjectTarget
}

// Projector serves message projections (docs/plugins.md).
type Projector interface {
	// Declare lists the projection types served: projection:<owner>/<name>.
	Declare(ctx context.Context) ([]string, error)
	Project(ctx context.Context, r ProjectRequest) ([]ProjectTarget, error)
}
