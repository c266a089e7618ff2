package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/runtime/session"
	"github.com/seed-e5e476df/logbook/runtime/store"
	"github.com/seed-e5e476df/logbook/runtime/transfer"
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

// newCreateCmd is `logbook create ID [--cwd DIR]`.
func newCreateCmd(a *app) *cobra.Command {
	var cwd string
	cmd := &cobra.Command{
		Use:         "create ID",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Create and materialize an empty session; prints its stored header",
		Example: "  logbook create s1\n" +
			"  logbook create s1 --cwd ~/src/project",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			dir, err := workingDir(cwd)
			if err != nil {
				return err
			}
			e, err := a.writeEngine(ctx)
			if err != nil {
				return err
			}
			s, err := e.Store.Create(ctx, store.CreateOptions{ID: args[0], CWD: dir})
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
	return cmd
}

// openWrite opens session id for write, as append and resume do. A stored
// session is resumed (docs/architecture.md: torn tail cut, interrupted turn closed,
// lifecycle marker); an absent one is created and materialized when create
// is set, else SESSION_NOT_FOUND. With expect set, a stored log (an absent
// session counts as empty) that does not hold exactly *expect events is
// refused with SEQ_CONFLICT before anything is written: checked by a read
// open first, so not even a torn tail is cut, and again under the write
// claim before the repair. With opts.Continue a stored session is opened
// without the repair batch unless a torn tail was cut (store.OpenWith).
// It returns the live session and the events the open itself wrote
// (nothing for a new session).
func (a *app) openWrite(ctx context.Context, id string, create bool, opts store.OpenOptions) (s *session.Session, written []session.Event, rep store.RepairReport, err error) {
	expect := opts.Expect
	e, err := a.writeEngine(ctx)
	if err != nil {
		return nil, nil, rep, err
	}
	cfg, err := a.config()
	if err != nil {
		return nil, nil, rep, err
	}
	p := e.Plugins[cfg.Persistence[0].Name].Persistence()
	// The stored length tells the resume's own events from the stored
	// ones: a resume may write nothing at all (a log that already ends
	// with a lifecycle marker), which the resumed session alone cannot
	// tell from a marker it wrote. A read open counts exactly the valid
	// prefix a write open keeps (Stat may count torn rows too).
	var n int64
	l, err := transfer.OpenStored(ctx, p, id)
	if err == nil {
		n = l.Len()
		l.Close()
	}
	if expect != nil && (err == nil || isNotFound(err)) && *expect != sdk.Offset(n) {
		return nil, nil, rep, store.StoredLenConflict(id, *expect, sdk.Offset(n))
	}
	switch {
	case isNotFound(err) && create:
		dir, err := workingDir("")
		if err != nil {
			return nil, nil, rep, err
		}
		s, err := e.Store.Create(ctx, store.CreateOptions{ID: id, CWD: dir})
		if err != nil {
			return nil, nil, rep, err
		}
		if _, err := e.Store.Flush(ctx, s); err != nil {
			return nil, nil, rep, err
		}
		return s, nil, rep, nil
	case err != nil:
		return nil, nil, rep, err
	}
	s, rep, err = e.Store.OpenWith(ctx, id, opts)
	if err != nil {
		return nil, nil, rep, err
	}
	live := int64(s.FirstLiveSeq())
	return s, s.Events().Range(sdk.Offset(min(n, live)), sdk.Offset(live)).Slice(), rep, nil
}

// repairSummary describes on one line what a resume wrote.
func repairSummary(id string, written []session.Event, rep store.RepairReport) string {
	if rep.Continued {
		return fmt.Sprintf("continued session %q: the open turn goes on, no events written", id)
	}
	if len(written) == 0 {
		return fmt.Sprintf("resumed session %q: nothing to repair, no events written", id)
	}
	msg := fmt.Sprintf("resumed session %q: wrote %s (seq %d–%d): %s", id, plural(int64(len(written)), "event"), written[0].Seq(), written[len(written)-1].Seq(), plural(int64(rep.Closers), "closer"))
	if rep.Torn.Bytes > 0 {
		msg += fmt.Sprintf(", cut %d torn bytes from seq %d (kept in %s)", rep.Torn.Bytes, rep.Torn.FromSeq, rep.Torn.Artifact)
	}
	return msg
}

// newResumeCmd is `logbook resume ID`: the store's Open (repair batch,
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
			s, written, rep, err := a.openWrite(ctx, args[0], false, store.OpenOptions{})
			if err != nil {
				return err
			}
			if err := a.close(); err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "logbook resume: %s\n", repairSummary(s.ID(), written, rep))
			return writeEnvelopes(a.stdout, written)
		},
	}
}

// writeEnvelopes prints events as canonical envelopes, one per line.
func writeEnvelopes(w io.Writer, events []session.Event) error {
	var b []byte
	for _, ev := range events {
		b = ev.AppendEnvelope(b)
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
			e, err := a.writeEngine(ctx)
			if err != nil {
				return err
			}
			s, err := e.Store.Fork(ctx, store.ForkRequest{SourceID: args[0], Boundary: at.ptr(), ChildID: child})
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
