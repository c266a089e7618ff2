package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

func init() {
	commands = append(commands, newWhyCmd)
}

// newWhyCmd is `logbook why ID SEQ`.
func newWhyCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:         "why ID SEQ",
		Annotations: offersJSONAnnotation(),
		Short:       "Show what event SEQ was derived from, recursively (tree; --json)",
		Example: "  logbook why s1 12\n" +
			"  logbook why s1 12 --json",
		Long: "why shows the provenance of an event: the events in its sourceEventSeqs,\n" +
			"recursively; for a replacement, the span it shadowed; for a compaction summary or a\n" +
			"prune, the events it covers; for a tool result (also one a repair wrote), the\n" +
			"tool/call that started the call and the assistant message that requested it.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			seq, err := parseSeq(args[1])
			if err != nil {
				return sdk.Errorf(sdk.CodeUsage, "why", "SEQ: %v", err)
			}
			v, err := a.storedView(ctx, cmd.Name(), args[0], nil)
			if err != nil {
				return err
			}
			if seq >= int64(v.Len()) {
				return boundaryError(v.ID(), seq, int64(v.Len()))
			}
			root, err := v.Why(ctx, seq)
			if err != nil {
				return err
			}
			if a.json {
				return writeJSON(a.stdout, root)
			}
			w := bufio.NewWriter(a.stdout)
			writeWhyTree(w, root, "", "")
			return w.Flush()
		},
	}
}

// writeWhyTree renders a provenance tree as indented text, one event per
// line: `[relation] seq type [replace a..b]: summary`.
func writeWhyTree(w io.Writer, n *service.WhyNode, lead, childLead string) {
	line := lead
	if n.Relation != "" {
		line += n.Relation + " "
	}
	line += fmt.Sprintf("%d %s", n.Seq, n.Type)
	if n.Replace != nil {
		line += fmt.Sprintf(" replace %d..%d", n.Replace.StartSeq, n.Replace.EndSeq)
	}
	if n.Summary != "" {
		line += ": " + n.Summary
	}
	if n.Repeated {
		line += " (see above)"
	}
	fmt.Fprintln(w, line)
	for i, c := range n.DerivedFrom {
		if i == len(n.DerivedFrom)-1 {
			writeWhyTree(w, c, childLead+"└─ ", childLead+"   ")
		} else {
			writeWhyTree(w, c, childLead+"├─ ", childLead+"│  ")
		}
	}
}
