package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/service"
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
	var f exportFormat
	cmd := &cobra.Command{
		Use:         "export ID",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Write a session as portable JSONL to stdout: the header line, then every envelope",
		Example: "  logbook export s1 > s1.jsonl\n" +
			"  logbook export s1 | ssh host logbook import -\n" +
			"  logbook export s1 --format otlp -o s1.otlp.json   # OpenTelemetry traces\n" +
			"  logbook export claude-code-abc --format claude-code -o abc.jsonl   # an import's source file",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if otlp, err := f.otlp(); err != nil || otlp {
				if err != nil {
					return err
				}
				return f.exportOTLP(ctx, a, args[0])
			}
			if isSourceFormat(f.format) {
				return f.exportSource(ctx, a, args[0])
			}
			svc, err := a.service(ctx)
			if err != nil {
				return err
			}
			l, err := svc.OpenStored(ctx, args[0])
			if err != nil {
				return err
			}
			defer l.Close()
			a.warnTorn("export", args[0], l.Torn())
			var prog *progress
			if l.Len() >= largeExport {
				prog = a.newProgress("export", "events", l.Len())
			}
			w := bufio.NewWriterSize(a.stdout, 1<<20)
			w.Write(headerjson.Encode(l.Header()))
			w.WriteByte('\n')
			if err := l.Read(ctx, 0, l.Len(), func(c [][]byte) error {
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
	f.register(cmd)
	return cmd
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

// newImportCmd is `logbook import FILE|- [--as NEW]`: the header line and
// the envelopes are read whole, then handed to the store's Import; --as
// replaces the header's id (envelopes carry no session id, so they stay
// byte-identical).
func newImportCmd(a *app) *cobra.Command {
	var (
		as     string
		src    sourceImport
		follow followFlags
	)
	cmd := &cobra.Command{
		Use:         "import FILE | import --from TOOL PATH...",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Restore an export verbatim (same header, byte-identical events; --as NEW under another id); prints the stored header",
		Long: "import stores the session an export holds (FILE, or - for stdin): its header\n" +
			"and its events byte for byte, validated like any restore, with no marker and\n" +
			"no closers, in one step: a failed or killed import stores nothing, and may be\n" +
			"run again. It refuses an id that is already stored (SESSION_ALREADY_EXISTS),\n" +
			"unless it holds exactly this import (a run that completed): that succeeds.\n\n" +
			"--as NEW stores it under the id NEW instead: only the header's id changes.\n" +
			"Events carry no session id, so they stay byte-identical; what they record\n" +
			"about other sessions (the header's parentSession, a salvage's salvagedFrom,\n" +
			"paths of kept torn bytes) still names the originals." + sourceImportHelp,
		Example: "  logbook export s1 > s1.jsonl && logbook import s1.jsonl --data /elsewhere\n" +
			"  logbook import s1.jsonl --as s1-copy        # a second copy beside the original\n" +
			"  ssh host logbook export s1 | logbook import -\n" +
			"  logbook import --from claude-code ~/.claude/projects\n" +
			"  logbook import --from auto session.jsonl --as mine --json\n" +
			"  logbook import --follow                     # live: each tool's own directory",
		Args: func(cmd *cobra.Command, args []string) error {
			if follow.on {
				return nil
			}
			return cobra.MinimumNArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := follow.check(as); err != nil {
				return err
			}
			if follow.on {
				return runFollow(ctx, a, src.from, args, follow.poll)
			}
			if src.on() {
				return src.run(ctx, a, args, as)
			}
			if len(args) != 1 {
				return sdk.Errorf(sdk.CodeUsage, "import", "import takes one FILE (an export); to read other tools' files give --from TOOL")
			}
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
			svc, err := a.writeService(ctx)
			if err != nil {
				return err
			}
			var prog *progress
			if size >= 0 {
				prog = a.newProgress("import", "bytes", size)
				in = countingReader{r: in, prog: prog}
			}
			lr := service.NewInputReader(in, int64(sdk.MaxEventMessageBytes(int(cfg.MaxEventBytes))))
			first, err := lr.Next()
			if err == io.EOF {
				return sdk.Errorf(sdk.CodeSeedInvalid, "import", "%s is empty: an export starts with the session header line", name)
			}
			if err != nil {
				return &lineError{n: 1, err: err}
			}
			h, err := headerjson.Decode(first, "", name)
			if errors.Is(err, sdk.CodeCorruptLog) {
				err = sdk.Wrap(sdk.CodeSeedInvalid, "import", err)
			}
			if err != nil {
				return &lineError{n: 1, err: err}
			}
			if as != "" {
				if err := sdk.ValidateSessionID(as); err != nil {
					return err
				}
				h.ID = as
			}
			var envelopes [][]byte
			for {
				env, err := lr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					return &lineError{n: lr.Line(), err: err}
				}
				envelopes = append(envelopes, env)
			}
			prog.finish()
			if err := svc.Import(ctx, h, envelopes); err != nil {
				return err
			}
			st, err := svc.StatStored(ctx, h.ID)
			if err != nil {
				return err
			}
			return writeLine(a.stdout, headerjson.Encode(st.Header))
		},
	}
	cmd.Flags().StringVar(&as, "as", "", "store the session under this `ID` instead of the export's (with --from: the one imported session's)")
	src.register(cmd)
	follow.register(cmd)
	return cmd
}

// newMigrateCmd is `logbook migrate --to NAME` (service.Migrate).
func newMigrateCmd(a *app) *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:         "migrate --to NAME",
		Annotations: offersJSONAnnotation(),
		Short:       "Copy every session from the primary to another configured backend, resumably, verifying each",
		Example: "  logbook migrate --to sqlite --config jsonl-and-sqlite.hcl\n" +
			"  logbook verify --config jsonl-and-sqlite.hcl",
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
			svc, err := a.writeService(ctx)
			if err != nil {
				return err
			}
			var prog *progress
			res, err := svc.Migrate(ctx, to, service.MigrateOptions{
				Listed: func(n int) { prog = a.newProgress("migrate", "sessions", int64(n)) },
				Done: func(id string, err error) {
					if err != nil {
						fmt.Fprintf(a.stderr, "logbook migrate: session %q: %v\n", id, err)
					}
					prog.add(1)
				},
			})
			if prog == nil { // the primary could not list its sessions
				return err
			}
			prog.finish()
			if a.json {
				if werr := writeJSON(a.stdout, migrateResult{To: to, Sessions: res.Copied + res.Complete, Copied: res.Copied, Events: res.Events, Complete: res.Complete, Failed: res.Failed}); werr != nil {
					return werr
				}
				return err
			}
			fmt.Fprintf(a.stdout, "migrated %s to %s: %d copied (%s), %d already complete, %d failed\n",
				plural(int64(res.Copied+res.Complete), "session"), to, res.Copied, plural(res.Events, "event"), res.Complete, res.Failed)
			return err
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the persistence block `NAME` to copy to (required)")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// migrateResult is what `logbook migrate --json` prints: the summary line
// as an object.
type migrateResult struct {
	To       string `json:"to"`
	Sessions int    `json:"sessions"` // copied + complete
	Copied   int    `json:"copied"`
	Events   int64  `json:"events"` // events copied
	Complete int    `json:"complete"`
	Failed   int    `json:"failed"`
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

// newVerifyCmd is `logbook verify [ID]` (service.Verify).
func newVerifyCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:         "verify [ID]",
		Annotations: offersJSONAnnotation(),
		Short:       "Compare the primary with every mirror event by event (one session, or all); exit 1 on divergence",
		Example: "  logbook verify\n" +
			"  logbook verify s1 --json",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, err := a.config()
			if err != nil {
				return err
			}
			if len(cfg.Persistence) < 2 {
				if a.json {
					return writeJSON(a.stdout, []service.Comparison{})
				}
				fmt.Fprintln(a.stdout, "no mirror is configured; nothing to compare")
				return nil
			}
			svc, err := a.service(ctx)
			if err != nil {
				return err
			}
			var ids []string
			if len(args) == 1 {
				if _, err := svc.StatStored(ctx, args[0]); err != nil {
					return err
				}
				ids = args
			} else {
				entries, err := svc.ListStored(ctx)
				if err != nil {
					return err
				}
				for _, en := range entries {
					ids = append(ids, en.ID)
				}
			}
			prog := a.newProgress("verify", "comparisons", int64(len(ids)*len(svc.Mirrors())))
			results := svc.Verify(ctx, ids, func(service.Comparison) { prog.add(1) })
			prog.finish()
			bad := 0
			for _, r := range results {
				if r.Status != service.VerifyOK {
					bad++
				}
			}
			if a.json {
				if results == nil {
					results = []service.Comparison{}
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
			return ctx.Err()
		},
	}
}

// writeVerifyTable prints verify's report as a table.
func writeVerifyTable(w io.Writer, results []service.Comparison) error {
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
