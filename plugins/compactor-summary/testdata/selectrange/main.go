// Command selectrange is a third-party compaction strategy for tests: a
// summarizer plugin that declares the capability "select-range" and
// chooses the span to compact itself (docs/compaction.md, issue 5). It summarizes
// with compactorsummary.Extractive.
//
// Usage: selectrange [valid|invalid] (default valid), run by a logbook
// host as a plugin named "selectrange":
//
//   - valid: the older half of the surface, cut where it is balanced:
//     from the first node after a system/message at node 0 up to the
//     latest balanced cut (no tool call waiting for its result, docs/compaction.md)
//     at or before the middle of the surface. It ignores the retain
//     budget, so it differs from the host's own choice and a test can tell
//     whose span was compacted. No such cut answers "no choice" (OK false).
//   - invalid: a span whose end is not on the surface (one past the last
//     seq), which the host's region checks must refuse before falling
//     back to its own selection with a warning.
//
// Build it with `go build ./plugins/compactor-summary/testdata/selectrange`.
package main

import (
	"context"
	"fmt"
	"os"

	compactorsummary "github.com/seed-e5e476df/logbook/plugins/compactor-summary"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// strategy is the summarizer and range selector.
type strategy struct {
	compactorsummary.Extractive
	invalid bool
}

// SelectRange implements sdk.RangeSelector.
func (s strategy) SelectRange(_ context.Context, r sdk.SelectRangeRequest) (sdk.SelectRangeReply, error) {
	if len(r.Messages) != len(r.Nodes) {
		return sdk.SelectRangeReply{}, sdk.Errorf(sdk.CodePayloadInvalid, "selectrange",
			"%d messages for %d nodes; they must be parallel", len(r.Messages), len(r.Nodes))
	}
	first := 0
	if len(r.Messages) > 0 && role(r.Messages[0]) == "system" {
		first = 1
	}
	if first >= len(r.Nodes) {
		return sdk.SelectRangeReply{}, nil
	}
	if s.invalid {
		return sdk.SelectRangeReply{Start: r.Nodes[first], End: r.Nodes[len(r.Nodes)-1] + 1, OK: true}, nil
	}
	// cut is the latest balanced cut before position i, first < i ≤ middle.
	cut, open := 0, 0
	for i := 0; i < max(first+1, len(r.Nodes)/2); i++ {
		open += delta(r.Messages[i])
		if open == 0 && i >= first {
			cut = i + 1
		}
	}
	if cut == 0 {
		return sdk.SelectRangeReply{}, nil
	}
	return sdk.SelectRangeReply{Start: r.Nodes[first], End: r.Nodes[cut-1], OK: true}, nil
}

// role returns a derived message's role ("" for none).
func role(msg []byte) string {
	doc, err := jsonv.Parse(msg, jsonv.Options{})
	if err != nil {
		return ""
	}
	r, _ := doc.Root().Get("role").Str()
	return r
}

// delta is a node's change of the tool-pairing count (docs/compaction.md): + its
// tool calls for an assistant message, −1 for a tool result.
func delta(msg []byte) int {
	doc, err := jsonv.Parse(msg, jsonv.Options{})
	if err != nil {
		return 0
	}
	root := doc.Root()
	switch {
	case root.Get("role").StrEqual("tool"):
		return -1
	case root.Get("role").StrEqual("assistant"):
		n := 0
		for _, b := range root.Get("content").Elements() {
			if b.Get("type").StrEqual("tool-call") {
				n++
			}
		}
		return n
	}
	return 0
}

func main() {
	mode := "valid"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if mode != "valid" && mode != "invalid" {
		fmt.Fprintf(os.Stderr, "selectrange: unknown mode %q; use valid or invalid\n", mode)
		os.Exit(2)
	}
	pluginrpc.Serve(pluginrpc.ServeConfig{
		Info: sdk.Info{
			Name:         "selectrange",
			Version:      "test-" + mode,
			Kinds:        []sdk.Kind{sdk.KindSummarizer},
			Capabilities: []string{"select-range"},
		},
		Summarizer: strategy{invalid: mode == "invalid"},
	})
}
