package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// Moving sessions between stores and backends: export and import (a
// portable JSONL file), migrate (primary → another configured backend) and
// verify (primary against its mirrors).

func init() {
	commands = append(commands, newExportCmd, newImportCmd, newMigrateCmd, newVerifyCmd)
}

// largeExport is the event count from which export reports progress.
const largeExport = 10000

// newExportCmd is `logbook export ID`.
func newExportCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "export ID",
		Short: "Write a session as portable JSONL to stdout: the header line, then every envelope",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := a.primary(ctx)
			if err != nil {
				return err
			}
			l, err := openStored(ctx, p, args[0])
			if err != nil {
				return err
			}
			defer l.close()
			a.warnTorn("export", args[0], l.o.Torn)
			var prog *progress
			if l.len() >= largeExport {
				prog = a.newProgress("export", "events", l.len())
			}
			w := bufio.NewWriterSize(a.stdout, 1<<20)
			w.Write(headerjson.Encode(l.o.Header))
			w.WriteByte('\n')
			if err := l.read(ctx, 0, l.len(), func(c [][]byte) error {
				for _, env := range c {
					w.Write(env)
					w.WriteByte('\n')
				}
				prog.add(int64(len(c)))
				return nil
			}); err != nil {
				return err
			}
			prog.finish()
			return w.Flush()
		},
	}
}

// countingReader counts the bytes read through it as progress.
type countingReader struct {
	r    io.Reader
	prog *progress
}

// Read reads from the underlying reader and counts what it read.
func (c countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.prog.add(int64(n))
	return n, err
}

// newImportCmd is `logbook import FILE|-`: the header line and the
// envelopes are read whole, then handed to the store's Import.
func newImportCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE",
		Short: "Restore an export verbatim (same header, byte-identical events); prints the stored header",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, err := a.config()
			if err != nil {
				return err
			}
			name, in, size := args[0], a.stdin, int64(-1)
			if name != "-" {
				f, err := os.Open(name)
				if err != nil {
					return &sdk.Error{Code: sdk.CodeIOError, Op: "import", Detail: "cannot read the export", Err: err}
				}
				defer f.Close()
				if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
					size = st.Size()
				}
				in = f
			}
			e, err := a.writeEngine(ctx)
			if err != nil {
				return err
			}
			var prog *progress
			if size >= 0 {
				prog = a.newProgress("import", "bytes", size)
				in = countingReader{r: in, prog: prog}
			}
			lr := newLineReader(in, int64(sdk.MaxEventMessageBytes(int(cfg.MaxEventBytes))))
			first, err := lr.next()
			if err == io.EOF {
				return sdk.Errorf(sdk.CodeSeedInvalid, "import", "%s is empty: an export starts with the session header line", name)
			}
			if err != nil {
				return &lineError{n: 1, err: err}
			}
			h, err := headerjson.Decode(first, "", name)
			if errors.Is(err, sdk.ErrCorruptLog) {
				err = sdk.Wrap(sdk.CodeSeedInvalid, "import", err)
			}
			if err != nil {
				return &lineError{n: 1, err: err}
			}
			var envelopes [][]byte
			for {
				env, err := lr.next()
				if err == io.EOF {
					break
				}
				if err != nil {
					return &lineError{n: lr.n, err: err}
				}
				envelopes = append(envelopes, env)
			}
			prog.finish()
			if err := e.Store.Import(ctx, h, envelopes); err != nil {
				return err
			}
			p, err := a.primary(ctx)
			if err != nil {
				return err
			}
			st, err := p.Stat(ctx, h.ID)
			if err != nil {
				return err
			}
			return writeLine(a.stdout, headerjson.Encode(st.Header))
		},
	}
}

// listIDs returns the ids of the sessions stored on p, in its order; a
// session p cannot read is returned with its error.
func listIDs(ctx context.Context, p sdk.Persistence) ([]sdk.ListEntry, error) {
	var out []sdk.ListEntry
	err := p.List(ctx, func(e sdk.ListEntry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// newMigrateCmd is `logbook migrate --to NAME`.
func newMigrateCmd(a *app) *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "migrate --to NAME",
		Short: "Copy every session from the primary to another configured backend, resumably, verifying each",
		Long: "migrate copies every session of the primary backend to the persistence block NAME.\n" +
			"It is resumable: a session the target already holds in full is only verified, one it\n" +
			"holds in part gets the rest. Every copy is read back and compared event by event.\n" +
			"Progress goes to stderr, the summary to stdout; exit status 1 when a session failed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, err := a.config()
			if err != nil {
				return err
			}
			switch idx := persistenceIndex(cfg.Persistence, to); {
			case idx < 0:
				return sdk.Errorf(sdk.CodeUsage, "migrate", "--to %q names no persistence block of the configuration", to)
			case idx == 0:
				return sdk.Errorf(sdk.CodeUsage, "migrate", "--to %q names the primary; name another persistence block", to)
			}
			if _, err := a.writeEngine(ctx); err != nil {
				return err
			}
			src, err := a.primary(ctx)
			if err != nil {
				return err
			}
			dst, err := a.backend(ctx, to)
			if err != nil {
				return err
			}
			entries, err := listIDs(ctx, src)
			if err != nil {
				return err
			}
			batch := sdk.MaxCopyBatchBytes(int(cfg.RPCMaxBytes))
			prog := a.newProgress("migrate", "sessions", int64(len(entries)))
			var copied, complete, events int64
			var failures []error
			for _, en := range entries {
				err := en.Err
				if err == nil {
					var n int64
					var created bool
					if n, created, err = copySession(ctx, src, dst, en.ID, batch); err == nil {
						if n > 0 || created {
							copied++
							events += n
						} else {
							complete++
						}
					}
				}
				if err != nil {
					failures = append(failures, err)
					fmt.Fprintf(a.stderr, "logbook migrate: session %q: %v\n", en.ID, err)
				}
				prog.add(1)
				if ctx.Err() != nil {
					break
				}
			}
			prog.finish()
			fmt.Fprintf(a.stdout, "migrated %s to %s: %d copied (%s), %d already complete, %d failed\n",
				plural(copied+complete, "session"), to, copied, plural(events, "event"), complete, len(failures))
			if len(failures) > 0 {
				return &sdk.Error{Code: sdk.CodeOf(failures[0]), Op: "migrate",
					Detail: fmt.Sprintf("%d of %d sessions failed (run migrate again to resume); the first", len(failures), len(entries)), Err: failures[0]}
			}
			return ctx.Err()
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the persistence block `NAME` to copy to (required)")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// persistenceIndex returns the position of the persistence block called
// name, or -1.
func persistenceIndex(blocks []config.Persistence, name string) int {
	for i, b := range blocks {
		if b.Name == name {
			return i
		}
	}
	return -1
}

// copySession copies session id from src to dst, resumably: dst is opened
// for write (created when absent), its stored events must equal src's
// prefix (else MIRROR_DIVERGED), the rest is appended in batches of at most
// batch bytes under compare-and-set, flushed, and the whole copy is read
// back and compared with src. It returns how many events it appended and
// whether it created the session on dst.
func copySession(ctx context.Context, src, dst sdk.Persistence, id string, batch int) (appended int64, created bool, err error) {
	from, err := openStored(ctx, src, id)
	if err != nil {
		return 0, false, err
	}
	defer from.close()
	o, err := dst.Open(ctx, id, sdk.AccessWrite)
	if isNotFound(err) {
		o, err = dst.Create(ctx, from.o.Header)
		created = true
	}
	if err != nil {
		return 0, false, err
	}
	to := &storedLog{p: dst, o: o}
	defer to.close()
	n, m := from.len(), to.len()
	switch {
	case !bytes.Equal(headerjson.Encode(o.Header), headerjson.Encode(from.o.Header)):
		return 0, false, diverged(id, "the target's session header differs from the primary's")
	case m > n:
		return 0, false, diverged(id, fmt.Sprintf("the target holds %d events, the primary %d", m, n))
	}
	if seq, err := firstDifference(ctx, from, to, m); err != nil || seq >= 0 {
		return 0, false, differs(id, seq, err)
	}
	for off := m; off < n; off += readChunk {
		envs, err := from.readAll(ctx, off, min(off+readChunk, n))
		if err != nil {
			return 0, false, err
		}
		for i := 0; i < len(envs); {
			rest := envs[i:]
			j := i + sdk.AppendBatchLen(len(rest), batch, func(k int) int { return len(rest[k]) })
			if _, err := dst.Append(ctx, o.Handle, sdk.Seq(off+int64(i)), envs[i:j]); err != nil {
				return 0, false, err
			}
			i = j
		}
	}
	d, err := dst.Flush(ctx, o.Handle)
	if err != nil {
		return 0, false, err
	}
	if int64(d.NextSeq) != n {
		return 0, false, diverged(id, fmt.Sprintf("after the copy the target holds %d events, the primary %d", d.NextSeq, n))
	}
	if seq, err := firstDifference(ctx, from, to, n); err != nil || seq >= 0 {
		return 0, false, differs(id, seq, err)
	}
	return n - m, created, nil
}

// diverged is MIRROR_DIVERGED for session id.
func diverged(id, detail string) error {
	return &sdk.Error{Code: sdk.CodeMirrorDiverged, Op: "logbook", SessionID: id, Detail: detail}
}

// differs turns the result of firstDifference into an error: the read
// error, or MIRROR_DIVERGED at seq.
func differs(id string, seq int64, err error) error {
	if err != nil {
		return err
	}
	return sdk.Errorf(sdk.CodeMirrorDiverged, "logbook", "the target's event differs from the primary's").WithSession(id).WithSeq(seq)
}

// firstDifference compares the envelopes [0, n) of two stored logs chunk
// by chunk and returns the first seq where they are not byte-equal, or -1.
func firstDifference(ctx context.Context, x, y *storedLog, n int64) (int64, error) {
	for off := int64(0); off < n; off += readChunk {
		end := min(off+readChunk, n)
		xs, err := x.readAll(ctx, off, end)
		if err != nil {
			return -1, err
		}
		ys, err := y.readAll(ctx, off, end)
		if err != nil {
			return -1, err
		}
		for i := range xs {
			if i >= len(ys) || !bytes.Equal(xs[i], ys[i]) {
				return off + int64(i), nil
			}
		}
	}
	return -1, nil
}

// verifyResult is one comparison of `logbook verify`: a session of the
// primary against one mirror.
type verifyResult struct {
	Session      string `json:"session"`
	Mirror       string `json:"mirror"`
	Status       string `json:"status"` // ok, missing, header-differs, diverged, behind, ahead, error
	Events       int64  `json:"events"`
	MirrorEvents int64  `json:"mirrorEvents"`
	Seq          *int64 `json:"seq,omitempty"` // the first differing seq (diverged)
	Detail       string `json:"detail,omitempty"`
}

// newVerifyCmd is `logbook verify [ID]`.
func newVerifyCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "verify [ID]",
		Short: "Compare the primary with every mirror event by event (one session, or all); exit 1 on divergence",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, err := a.config()
			if err != nil {
				return err
			}
			if len(cfg.Persistence) < 2 {
				fmt.Fprintln(a.stdout, "no mirror is configured; nothing to compare")
				return nil
			}
			src, err := a.primary(ctx)
			if err != nil {
				return err
			}
			var ids []string
			if len(args) == 1 {
				if _, err := src.Stat(ctx, args[0]); err != nil {
					return err
				}
				ids = args
			} else {
				entries, err := listIDs(ctx, src)
				if err != nil {
					return err
				}
				for _, en := range entries {
					ids = append(ids, en.ID)
				}
			}
			mirrors := cfg.Persistence[1:]
			prog := a.newProgress("verify", "comparisons", int64(len(ids)*len(mirrors)))
			var results []verifyResult
			bad := 0
			for _, id := range ids {
				for _, m := range mirrors {
					dst, err := a.backend(ctx, m.Name)
					if err != nil {
						return err
					}
					r := compareSession(ctx, src, dst, id)
					r.Mirror = m.Name
					if r.Status != "ok" {
						bad++
					}
					results = append(results, r)
					prog.add(1)
				}
			}
			prog.finish()
			if a.json {
				if results == nil {
					results = []verifyResult{}
				}
				if err := writeJSON(a.stdout, results); err != nil {
					return err
				}
			} else if err := writeVerifyTable(a.stdout, results); err != nil {
				return err
			}
			if bad > 0 {
				return sdk.Errorf(sdk.CodeMirrorDiverged, "verify", "%d of %d comparisons differ", bad, len(results))
			}
			return nil
		},
	}
}

// writeVerifyTable prints verify's report as a table.
func writeVerifyTable(w io.Writer, results []verifyResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tMIRROR\tSTATUS\tEVENTS\tMIRROR EVENTS\tDETAIL")
	for _, r := range results {
		detail := r.Detail
		if r.Seq != nil {
			detail = fmt.Sprintf("first difference at seq %d", *r.Seq)
		}
		if detail == "" {
			detail = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", r.Session, r.Mirror, r.Status, r.Events, r.MirrorEvents, detail)
	}
	return tw.Flush()
}

// compareSession compares session id on the primary src with one mirror,
// both opened read-only, event by event.
func compareSession(ctx context.Context, src, dst sdk.Persistence, id string) verifyResult {
	r := verifyResult{Session: id}
	fail := func(err error) verifyResult {
		r.Status, r.Detail = "error", err.Error()
		return r
	}
	from, err := openStored(ctx, src, id)
	if err != nil {
		return fail(err)
	}
	defer from.close()
	r.Events = from.len()
	to, err := openStored(ctx, dst, id)
	if isNotFound(err) {
		r.Status = "missing"
		return r
	}
	if err != nil {
		return fail(err)
	}
	defer to.close()
	r.MirrorEvents = to.len()
	if !bytes.Equal(headerjson.Encode(from.o.Header), headerjson.Encode(to.o.Header)) {
		r.Status = "header-differs"
		return r
	}
	seq, err := firstDifference(ctx, from, to, min(r.Events, r.MirrorEvents))
	switch {
	case err != nil:
		return fail(err)
	case seq >= 0:
		r.Status, r.Seq = "diverged", &seq
	case r.MirrorEvents < r.Events:
		r.Status = "behind"
	case r.MirrorEvents > r.Events:
		r.Status = "ahead"
	default:
		r.Status = "ok"
	}
	return r
}
