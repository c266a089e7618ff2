package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

func init() {
	commands = append(commands, newAppendCmd)
}

// newAppendCmd is `logbook append ID [FILE|-]`.
func newAppendCmd(a *app) *cobra.Command {
	var expectedSeq int64
	var cont bool
	cmd := &cobra.Command{
		Use:         "append ID [FILE|-]",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Append input lines as events while they arrive; prints one canonical envelope per accepted line",
		Long: "append opens the session for write — creating and materializing it when absent, or\n" +
			"resuming it (repair) — then reads input lines as they arrive (FILE, or stdin for - or\n" +
			"none), holding write ownership until it exits, and flushes after the last line.\n\n" +
			"Each line is a JSON object with exactly type and data, and optionally surfaceOp,\n" +
			"sourceEventSeqs and ignorable (the literal true); data is passed on as written.\n" +
			"Blank lines are skipped. At the first rejected line append stops: the lines before it\n" +
			"stay committed and are flushed, and the error names the line number and its code.\n\n" +
			"With --expected-seq N the first line must get seq N, as expectedSeq means over the\n" +
			"API: N is the stored length plus what the open itself appends first (an interrupted\n" +
			"turn's closers, as `inspect` lists them, and the lifecycle marker; nothing for an\n" +
			"absent or empty session, or with --continue). It is compared before the open writes anything, so on a mismatch append\n" +
			"refuses with SEQ_CONFLICT (expected, actual) and the stored session is left exactly\n" +
			"as it was. A caller that retries an append with the same N therefore never stores\n" +
			"its lines twice.\n\n" +
			"A stored session is repaired at open: an interrupted turn gets its closers and a\n" +
			"lifecycle marker, because a crash cannot be told from a pause. With --continue the\n" +
			"open appends neither, and the lines go on with the turn the log ends in (one agent\n" +
			"step written by several append invocations). When the open has to cut a torn tail\n" +
			"the previous writer crashed, so --continue is ignored and the repair runs.",
		Example: "  logbook append demo turn.jsonl\n" +
			"  producer | logbook append demo --expected-seq 12\n" +
			"  logbook append demo --continue step2.jsonl",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var expect *sdk.Offset
			if cmd.Flags().Changed("expected-seq") {
				n, err := sdk.NewOffset("--expected-seq", expectedSeq)
				if err != nil {
					return err
				}
				expect = &n
			}
			in := a.stdin
			if len(args) == 2 && args[1] != "-" {
				f, err := os.Open(args[1])
				if err != nil {
					return &sdk.Error{Code: sdk.CodeIOError, Op: "append", Detail: "cannot read the input", Err: err}
				}
				defer f.Close()
				in = f
			}
			// A reader of stdout that goes away must not kill append before
			// it flushes: with SIGPIPE caught, the write fails with EPIPE.
			pipe := make(chan os.Signal, 1)
			signal.Notify(pipe, syscall.SIGPIPE)
			defer signal.Stop(pipe)
			cfg, err := a.config()
			if err != nil {
				return err
			}
			s, rep, err := a.openWrite(ctx, args[0], service.WriteOptions{Create: true, Expected: expect, Continue: cont})
			if err != nil {
				return err
			}
			if s.Len() == 0 && len(rep.Written) == 0 && !rep.Continued {
				fmt.Fprintf(a.stderr, "logbook append: session %q is new\n", s.ID())
			} else {
				fmt.Fprintf(a.stderr, "logbook append: %s\n", repairSummary(s.ID(), rep))
			}
			err = a.appendLines(ctx, s, in, int64(sdk.MaxEventMessageBytes(int(cfg.MaxEventBytes))))
			// The accepted lines are flushed and ownership released even
			// after a rejected line or a signal.
			if cerr := a.close(); cerr != nil {
				return errors.Join(err, cerr)
			}
			return err
		},
	}
	cmd.Flags().Int64Var(&expectedSeq, "expected-seq", 0, "append only if the first line gets seq `N` (stored length plus the open's repair), else refuse with SEQ_CONFLICT writing nothing")
	cmd.Flags().BoolVar(&cont, "continue", false, "go on with the open turn: no closers or lifecycle marker at open (the repair still runs after a torn tail)")
	return cmd
}

// inputLine is one line of append's input, numbered from 1, or the read
// error that ended the input at that line.
type inputLine struct {
	n    int
	text []byte
	err  error
}

// lineError names the input line an append failed at; its code is the
// cause's.
type lineError struct {
	n   int
	err error
}

// Error names the line and the cause.
func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.n, e.err) }

// Unwrap returns the cause, whose code is the failure's.
func (e *lineError) Unwrap() error { return e.err }

// appendLines appends the lines of in to s as they arrive and prints each
// accepted event. It returns at the end of the input, at the first rejected
// line, or when ctx ends (a signal).
//
// The lines are read on a goroutine of their own, so a signal is noticed
// while a read blocks. That goroutine stops at the end of the input, at a
// read error, or as soon as this function returns and it has a line to hand
// over; a read still blocked then ends with the process, which exits right
// after the flush.
func (a *app) appendLines(ctx context.Context, s *service.Session, in io.Reader, limit int64) error {
	lines := make(chan inputLine)
	done := make(chan struct{})
	defer close(done)
	go readLines(in, limit, lines, done)
	var accepted int64
	for {
		var l inputLine
		var ok bool
		select {
		case <-ctx.Done():
			return &sdk.Error{Code: sdk.CodeIOError, Op: "append", SessionID: s.ID(),
				Detail: fmt.Sprintf("interrupted after %s; the accepted lines are flushed", plural(accepted, "accepted line")), Err: context.Cause(ctx)}
		case l, ok = <-lines:
		}
		if !ok {
			return nil
		}
		if l.err != nil {
			return &lineError{n: l.n, err: l.err}
		}
		if len(bytes.TrimSpace(l.text)) == 0 {
			continue
		}
		input, err := service.ParseInput(l.text)
		if err != nil {
			return &lineError{n: l.n, err: err}
		}
		res, err := s.Append(ctx, service.AppendRequest{Inputs: []events.Input{input}})
		if err != nil {
			return &lineError{n: l.n, err: withoutIndex(err)}
		}
		accepted++
		ev := res.Events[0]
		out := append(append(make([]byte, 0, len(ev.Envelope)+1), ev.Envelope...), '\n')
		if _, err := a.stdout.Write(out); err != nil {
			return &sdk.Error{Code: sdk.CodeIOError, Op: "append", Detail: "writing the accepted event", Err: err}
		}
	}
}

// withoutIndex drops the batch index of a rejected input's error: each
// line is appended alone, so the index is always 0, and the line number
// names the input instead.
func withoutIndex(err error) error {
	if e, ok := err.(*sdk.Error); ok && e.Index != nil {
		c := *e
		c.Index = nil
		return &c
	}
	return err
}

// readLines sends the lines of r to out as they arrive, read by a
// service.InputReader, until the end of the input; a line longer than
// limit bytes or a read error is sent as the last item. It closes out when
// it is done, and stops early once done is closed.
func readLines(r io.Reader, limit int64, out chan<- inputLine, done <-chan struct{}) {
	defer close(out)
	lr := service.NewInputReader(r, limit)
	for {
		text, err := lr.Next()
		if err == io.EOF {
			return
		}
		select {
		case out <- inputLine{n: lr.Line(), text: text, err: err}:
		case <-done:
			return
		}
		if err != nil {
			return
		}
	}
}
