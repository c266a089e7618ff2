package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// The commands that take write ownership: create, resume and fork (append
// is in append.go). Each releases its session before printing, so what it
// prints is durable in every backend.

func init() {
	commands = append(commands, newCreateCmd, newResumeCmd, newForkCmd)
}

// workingDir returns dir made absolute; "" is the current directory.
func workingDir(dir string) (string, error) {
	if dir == "" {
		return os.Getwd()
	}
	return filepath.Abs(dir)
}

// newCreateCmd is `logbook create ID [--cwd DIR] [--protocol strict|lenient] [--label KEY=VALUE]…`.
func newCreateCmd(a *app) *cobra.Command {
	var cwd, protocol string
	var labels []string
	cmd := &cobra.Command{
		Use:         "create ID",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Create and materialize an empty session; prints its stored header",
		Example: "  logbook create s1\n" +
			"  logbook create s1 --cwd ~/src/project\n" +
			"  logbook create imported --protocol lenient\n" +
			"  logbook create s2 --label framework=openai-agents --label key=user-7/chat-3",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			dir, err := workingDir(cwd)
			if err != nil {
				return err
			}
			// Checked before the store is opened: a bad value is USAGE and
			// touches nothing.
			if protocol, err = sdk.ParseProtocol(protocol); err != nil {
				return err
			}
			lm, err := parseLabels(labels)
			if err != nil {
				return err
			}
			svc, err := a.writeService(ctx)
			if err != nil {
				return err
			}
			s, err := svc.Create(ctx, service.CreateRequest{ID: args[0], Header: events.CreateOptions{CWD: dir, Protocol: protocol, Labels: lm}})
			if err != nil {
				return err
			}
			if err := a.close(); err != nil {
				return err
			}
			return writeLine(a.stdout, headerjson.Encode(s.Header()))
		},
	}
	cmd.Flags().StringVar(&cwd, "cwd", "", "the session's working `DIR` (default: the current directory), made absolute")
	cmd.Flags().StringVar(&protocol, "protocol", sdk.ProtocolStrict, "how appends are checked: `strict` (the agent-loop rules of docs/format.md) or lenient (skip them, never the payload rules)")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "a label of the session, `KEY=VALUE` (repeatable; kept in its header)")
	return cmd
}

// parseLabels reads the values of create's --label flags, each KEY=VALUE
// (the value may hold "=" and be empty), into the header's labels, checked
// as a create checks them (sdk.ValidateLabels); nil for none. A value
// without "=", a key given twice or a label the rules refuse is USAGE.
func parseLabels(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(flags))
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, sdk.Errorf(sdk.CodeUsage, "create", "--label %q must be KEY=VALUE", f)
		}
		if _, dup := out[k]; dup {
			return nil, sdk.Errorf(sdk.CodeUsage, "create", "--label %q: the key %q is given twice", f, k)
		}
		out[k] = v
	}
	if err := sdk.ValidateLabels("create", out); err != nil {
		return nil, err
	}
	return out, nil
}

// openWrite opens session id for write, as append and resume do
// (service.OpenWrite): a stored session is resumed, an absent one created
// when o.Create is set.
func (a *app) openWrite(ctx context.Context, id string, o service.WriteOptions) (*service.Session, service.WriteReport, error) {
	svc, err := a.writeService(ctx)
	if err != nil {
		return nil, service.WriteReport{}, err
	}
	return svc.OpenWrite(ctx, id, o)
}

// repairSummary describes on one line what a resume wrote.
func repairSummary(id string, rep service.WriteReport) string {
	written := rep.Written
	if rep.Continued {
		return fmt.Sprintf("continued session %q: the open turn goes on, no events written", id)
	}
	if len(written) == 0 {
		return fmt.Sprintf("resumed session %q: nothing to repair, no events written", id)
	}
	msg := fmt.Sprintf("resumed session %q: wrote %s (seq %d–%d): %s", id, plural(int64(len(written)), "event"), written[0].Seq, written[len(written)-1].Seq, plural(int64(rep.Closers), "closer"))
	if rep.Torn.Bytes > 0 {
		msg += fmt.Sprintf(", cut %d torn bytes from seq %d (kept in %s)", rep.Torn.Bytes, rep.Torn.FromSeq, rep.Torn.Artifact)
	}
	return msg
}

// newResumeCmd is `logbook resume ID`: service.OpenWrite (repair batch,
// flushed before it returns), then a release.
func newResumeCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:         "resume ID",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Open a session for write and repair it durably; prints the events it appended",
		Example:     "  logbook resume s1                 # appends the repair an open turn needs",
		Args:        cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, rep, err := a.openWrite(ctx, args[0], service.WriteOptions{})
			if err != nil {
				return err
			}
			if err := a.close(); err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "logbook resume: %s\n", repairSummary(s.ID(), rep))
			return writeEnvelopes(a.stdout, rep.Written)
		},
	}
}

// writeEnvelopes prints events as canonical envelopes, one per line.
func writeEnvelopes(w io.Writer, evs []events.Event) error {
	var b []byte
	for _, ev := range evs {
		b = append(b, ev.Envelope...)
		b = append(b, '\n')
	}
	_, err := w.Write(b)
	return err
}

// newForkCmd is `logbook fork ID [--as CHILD] [--at SEQ]`.
func newForkCmd(a *app) *cobra.Command {
	var child string
	var at seqFlag
	cmd := &cobra.Command{
		Use:         "fork ID [--as CHILD]",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Fork a live or stored session at SEQ (default: its last event); prints the child's stored header",
		Long: "fork stores a new session, the child, that inherits the events of ID up to and\n" +
			"including --at (default: its last event), and prints the child's stored header\n" +
			"on stdout. Without --as the child's id is generated, a lowercase UUIDv7 (as\n" +
			"`serve` generates one), and stderr names it too.",
		Example: "  logbook fork s1 --as s1-retry\n" +
			"  logbook fork s1 --as s1-early --at 12\n" +
			"  child=$(logbook fork s1 | jq -r .id)",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			svc, err := a.writeService(ctx)
			if err != nil {
				return err
			}
			s, err := svc.Fork(ctx, service.ForkRequest{Source: args[0], At: at.ptr(), As: child})
			if err != nil {
				return err
			}
			if err := a.close(); err != nil {
				return err
			}
			if child == "" {
				fmt.Fprintf(a.stderr, "logbook fork: the child is %q\n", s.ID())
			}
			return writeLine(a.stdout, headerjson.Encode(s.Header()))
		},
	}
	cmd.Flags().StringVar(&child, "as", "", "the child session's `ID` (default: a generated UUIDv7)")
	cmd.Flags().Var(&at, "at", "the last `SEQ` the child inherits (default: the source's last event)")
	return cmd
}

// plural renders a count of things: "1 event", "2 events".
func plural(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
