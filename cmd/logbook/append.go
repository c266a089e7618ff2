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
	var operationID string
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
			"With --operation-id ID append reads the whole input first and appends its lines once,\n" +
			"as one atomic group stored with ID (docs/format.md, \"Operation ids\"): all of them or,\n" +
			"at the first rejected line, none. When the session already holds ID for the same\n" +
			"lines, nothing is appended, the original envelopes are printed and stderr says\n" +
			"\"replayed\"; other lines under a held ID are OPERATION_CONFLICT, naming the\n" +
			"original's first seq. ID is 1–128 bytes of printable ASCII (else OPERATION_ID_INVALID,\n" +
			"before anything is opened). A retry with the same ID is safe from any process, after\n" +
			"any crash; an --expected-seq is not checked on a replay. Give a retry --continue too,\n" +
			"so that its open writes no repair of its own (closers, marker) before the replay.\n\n" +
			"A stored session is repaired at open: an interrupted turn gets its closers and a\n" +
			"lifecycle marker, because a crash cannot be told from a pause. With --continue the\n" +
			"open appends neither, and the lines go on with the turn the log ends in (one agent\n" +
			"step written by several append invocations). When the open has to cut a torn tail\n" +
			"the previous writer crashed, so --continue is ignored and the repair runs.",
		Example: "  logbook append demo turn.jsonl\n" +
			"  producer | logbook append demo --expected-seq 12\n" +
			"  logbook append demo turn3.jsonl --operation-id turn-3\n" +
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
			once := cmd.Flags().Changed("operation-id")
			if once {
				if err := sdk.ValidateOperationID(operationID); err != nil {
					return err
				}
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
			limit := int64(sdk.MaxEventMessageBytes(int(cfg.MaxEventBytes)))
			if once {
				err = a.appendOnce(ctx, s, in, limit, operationID)
			} else {
				err = a.appendLines(ctx, s, in, limit)
			}
			// The accepted lines are flushed and ownership released even
			// after a rejected line or a signal.
			if cerr := a.close(); cerr != nil {
				return errors.Join(err, cerr)
			}
			return err
		},
	}
	cmd.Flags().Int64Var(&expectedSeq, "expected-seq", 0, "append only if the first line gets seq `N` (stored length plus the open's repair), else refuse with SEQ_CONFLICT writing nothing")
	cmd.Flags().StringVar(&operationID, "operation-id", "", "append the whole input once, as one atomic group under `ID`: a retry with the same lines prints the original envelopes (\"replayed\" on stderr), other lines are OPERATION_CONFLICT")
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

// appendOnce reads every line of in, then appends them to s as one atomic
// group under the operation id (service.AppendRequest.OperationID) and
// prints the envelopes: the new events, or the original ones of a replay,
// which stderr names. A rejected line, read or appended, is a *lineError
// and nothing is appended.
func (a *app) appendOnce(ctx context.Context, s *service.Session, in io.Reader, limit int64, id string) error {
	lines := make(chan inputLine)
	done := make(chan struct{})
	defer close(done)
	go readLines(in, limit, lines, done)
	var (
		ins []events.Input
		ns  []int // the line of each input
	)
	for {
		var l inputLine
		var ok bool
		select {
		case <-ctx.Done():
			return &sdk.Error{Code: sdk.CodeIOError, Op: "append", SessionID: s.ID(),
				Detail: "interrupted while reading the input; nothing was appended", Err: context.Cause(ctx)}
		case l, ok = <-lines:
		}
		if !ok {
			break
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
		ins, ns = append(ins, input), append(ns, l.n)
	}
	res, err := s.Append(ctx, service.AppendRequest{Inputs: ins, OperationID: id})
	if err != nil {
		if e := sdk.ErrorOf(err); e != nil && e.Index != nil && *e.Index >= 0 && *e.Index < len(ns) {
			return &lineError{n: ns[*e.Index], err: withoutIndex(err)}
		}
		return err
	}
	if res.Replayed && len(res.Events) > 0 {
		fmt.Fprintf(a.stderr, "logbook append: replayed operation %q: the session holds it already (%s from seq %d); nothing appended\n", id, plural(int64(len(res.Events)), "event"), res.Events[0].Seq)
	}
	if err := writeEnvelopes(a.stdout, res.Events); err != nil {
		return &sdk.Error{Code: sdk.CodeIOError, Op: "append", Detail: "writing the events", Err: err}
	}
	return nil
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
