package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

func init() { commands = append(commands, newCompactCmd, newPruneCmd) }

// newCompactCmd is `logbook compact ID [--start SEQ --end SEQ]`: manual
// compaction (docs/compaction.md) with the configured summarizer. The whole
// compaction, or the explicit region, runs on the resumed session; a stored
// log that ends inside a turn is refused with COMPACTION_TURN_OPEN before
// anything is written (resume it first).
func newCompactCmd(a *app) *cobra.Command {
	var start, end seqFlag
	cmd := &cobra.Command{
		Use:         "compact ID",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Compact a session with the configured summarizer; prints the events it appended",
		Example: "  logbook compact s1                         # the span the summarizer chooses\n" +
			"  logbook compact s1 --start 4 --end 12      # an explicit region of surface nodes",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if start.set != end.set {
				return sdk.Errorf(sdk.CodeUsage, "compact", "--start and --end go together")
			}
			return a.compacting(cmd.Context(), "compact", args[0], func(ctx context.Context, s *service.Session) error {
				var o service.CompactOptions
				if start.set {
					o.Start, o.End = new(sdk.Seq(start.v)), new(sdk.Seq(end.v))
				}
				_, err := s.Compact(ctx, o)
				return err
			})
		},
	}
	cmd.Flags().Var(&start, "start", "first `SEQ` of an explicit region (a current surface node)")
	cmd.Flags().Var(&end, "end", "last `SEQ` of an explicit region (inclusive)")
	return cmd
}

// newPruneCmd is `logbook prune ID`: the configured pruner over the
// session's oversized tool results (docs/compaction.md).
func newPruneCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:         "prune ID",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Prune oversized tool results with the configured pruner; prints the events it appended",
		Example:     "  logbook prune s1",
		Args:        cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.compacting(cmd.Context(), "prune", args[0], func(ctx context.Context, s *service.Session) error {
				res, err := s.Prune(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stderr, "logbook prune: %s, %d characters removed\n", plural(int64(res.ToolResults), "tool result"), res.CharsRemoved)
				return nil
			})
		},
	}
}

// compacting runs op on session id opened for write and prints the events
// op appended (the resume's own repair events are reported on stderr, not
// printed). It refuses a configuration without a compaction block
// (CONFIG_INVALID) and a stored log that ends inside a turn
// (COMPACTION_TURN_OPEN), both before writing anything.
func (a *app) compacting(ctx context.Context, name, id string, op func(context.Context, *service.Session) error) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	svc, err := a.writeService(ctx)
	if err != nil {
		return err
	}
	if cfg.Compaction == nil {
		return sdk.Errorf(sdk.CodeConfigInvalid, name, "the configuration has no compaction block (a headless profile); add one that names a summarizer and a pruner")
	}
	in, err := svc.Inspect(ctx, id)
	if err != nil {
		return err
	}
	if turn := in.OpenTurn; turn != nil {
		return sdk.Errorf(sdk.CodeCompactionTurnOpen, name, "session %q ends inside turn %d; resume it first (logbook resume %s)", id, *turn, id)
	}
	s, wrep, err := a.openWrite(ctx, id, service.WriteOptions{})
	if err != nil {
		return err
	}
	if len(wrep.Written) > 0 {
		fmt.Fprintf(a.stderr, "logbook %s: %s\n", name, repairSummary(id, wrep))
	}
	from := s.Len()
	opErr := op(ctx, s)
	appended := s.Range(from, s.Len())
	if err := a.close(); err != nil && opErr == nil {
		opErr = err
	}
	if opErr != nil {
		return opErr
	}
	return writeEnvelopes(a.stdout, appended)
}
