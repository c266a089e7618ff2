package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/sdk"
)

// The read commands: they show the stored log as it is, read-only, beside a
// running writer. Only inspect adds what a resume would write.

func init() {
	commands = append(commands, newSessionsCmd, newEventsCmd, newMessagesCmd, newTranscriptCmd,
		newSurfaceCmd, newHeaderCmd, newRequestCmd, newInspectCmd)
}

// sessionEntry is one session of `logbook sessions --json`; absent members
// are omitted.
type sessionEntry struct {
	ID            string `json:"id"`
	Events        *int64 `json:"events,omitempty"`
	TornBytes     *int64 `json:"tornBytes,omitempty"` // with events: the torn tail a write open would cut
	CreatedAt     *int64 `json:"createdAt,omitempty"`
	LastActivity  *int64 `json:"lastActivity,omitempty"` // Unix ms of the last stored write, when the backend knows it
	ParentSession string `json:"parentSession,omitempty"`
	IsSeeded      *bool  `json:"isSeeded,omitempty"`
	Protocol      string `json:"protocol,omitempty"` // "lenient", as the header stores it; absent for strict
	// Labels are the header's labels, absent when it has none.
	Labels map[string]string `json:"labels,omitempty"`
	Error  string            `json:"error,omitempty"`
}

// newSessionsCmd is `logbook sessions [--limit N]`: the stored sessions,
// most recently active first, each with its event count (a broken one
// with its error instead).
func newSessionsCmd(a *app) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:         "sessions",
		Annotations: offersJSONAnnotation(),
		Short:       "List stored sessions, most recently active first (table; --json: array)",
		Long: "sessions lists the stored sessions, the one written last first (sessions of one\n" +
			"moment by id; a session whose last write the backend does not know, or that cannot be\n" +
			"read, comes last), with the number of events, when it was created and last written,\n" +
			"its parent and its format version (--json: also its protocol and labels). --limit N\n" +
			"shows the first N only.",
		Example: "  logbook sessions\n" +
			"  logbook sessions --limit 10\n" +
			"  logbook sessions --json | jq -r \".[].id\"",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if cmd.Flags().Changed("limit") && limit < 1 {
				return sdk.Errorf(sdk.CodeUsage, "sessions", "--limit %d must be at least 1", limit)
			}
			svc, err := a.service(ctx)
			if err != nil {
				return err
			}
			list, err := svc.ListStored(ctx)
			if err != nil {
				return err
			}
			slices.SortStableFunc(list, func(x, y sdk.ListEntry) int {
				return cmp.Or(cmp.Compare(y.LastActivity, x.LastActivity), strings.Compare(x.ID, y.ID))
			})
			if limit > 0 && len(list) > limit {
				list = list[:limit]
			}
			entries := make([]sessionEntry, 0, len(list))
			for _, le := range list {
				en := sessionEntry{ID: le.ID}
				err := le.Err
				if err == nil {
					var n int64
					var torn sdk.Torn
					if n, torn, err = countEvents(ctx, svc, le.ID); err == nil {
						h := le.Header
						en.Events, en.TornBytes, en.CreatedAt, en.ParentSession, en.IsSeeded = &n, &torn.Bytes, &h.CreatedAt, h.ParentSession, &h.IsSeeded
						en.Protocol, en.Labels = h.Protocol, h.Labels
						if le.LastActivity > 0 {
							en.LastActivity = &le.LastActivity
						}
						a.warnTorn("sessions", le.ID, torn)
					}
				}
				if err != nil {
					en.Error = err.Error()
					fmt.Fprintf(a.stderr, "logbook sessions: session %q cannot be read: %v\n", le.ID, err)
				}
				entries = append(entries, en)
			}
			if a.json {
				return writeJSON(a.stdout, entries)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tEVENTS\tCREATED\tLAST ACTIVE\tPARENT\tFORMAT")
			for i, en := range entries {
				events, created, active, parent, format := "-", "-", "-", "-", "-"
				if en.Events != nil {
					events = strconv.FormatInt(*en.Events, 10)
					created = time.UnixMilli(*en.CreatedAt).UTC().Format(time.RFC3339)
					format = "v" + strconv.Itoa(list[i].Header.FormatVersion)
				}
				if en.LastActivity != nil {
					active = time.UnixMilli(*en.LastActivity).UTC().Format(time.RFC3339)
				}
				if en.ParentSession != "" {
					parent = en.ParentSession
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", en.ID, events, created, active, parent, format)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "show the `N` most recently active sessions only (at least 1)")
	return cmd
}

// newEventsCmd is `logbook events ID [--from N] [--to N] [--follow]`: the
// stored envelopes, read straight from the primary; --follow then keeps
// printing what another process stores (followEvents).
func newEventsCmd(a *app) *cobra.Command {
	var from, to seqFlag
	var follow bool
	cmd := &cobra.Command{
		Use:         "events ID",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Print the stored log, one canonical envelope per line (--to exclusive; --follow tails it)",
		Long: "events prints the stored envelopes of session ID in seq order, one line each,\n" +
			"from --from (default 0) up to, not including, --to (default the end).\n\n" +
			"--follow keeps printing the events another process (append, serve) stores in the\n" +
			"session, each once and in order, until interrupted (Ctrl-C ends it with exit\n" +
			"status 0) or, with --to, until the event before --to is printed. It watches the\n" +
			"primary backend: file-system notifications for JSONL, polling for SQLite,\n" +
			"LISTEN/NOTIFY for PostgreSQL. An event shows once its writer has stored it\n" +
			"durably (a flush, or the end of the writer's command).",
		Example: "  logbook events s1\n" +
			"  logbook events s1 --from 10 --to 20\n" +
			"  logbook events s1 --follow                  # tail it while another process appends\n" +
			"  logbook events s1 --follow --from 0 | jq -c .type",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if follow {
				return a.followEvents(ctx, args[0], from, to)
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
			a.warnTorn("events", args[0], l.Torn())
			lo, hi := from.v, l.Len()
			if to.set {
				hi = min(hi, to.v)
			}
			w := bufio.NewWriter(a.stdout)
			if err := l.Read(ctx, lo, hi, func(c [][]byte) error {
				for _, env := range c {
					w.Write(env)
					w.WriteByte('\n')
				}
				return nil
			}); err != nil {
				return err
			}
			return w.Flush()
		},
	}
	cmd.Flags().Var(&from, "from", "first `SEQ` to print")
	cmd.Flags().Var(&to, "to", "stop before this `SEQ`")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing the events stored from now on, until interrupted")
	return cmd
}

// newMessagesCmd is `logbook messages ID [--at SEQ] [--format F]`.
func newMessagesCmd(a *app) *cobra.Command {
	var at seqFlag
	var format string
	cmd := &cobra.Command{
		Use:         "messages ID",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Print the derived model messages as a JSON array (--at: right after event SEQ; --format: logbook, openai, anthropic, openai-responses or markdown)",
		Example: "  logbook messages s1\n" +
			"  logbook messages s1 --at 12\n" +
			"  logbook messages s1 --format openai\n" +
			"  logbook messages s1 --format markdown | less",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(cmd.Name(), format, messageFormats); err != nil {
				return err
			}
			if a.json && format == "markdown" {
				return sdk.Errorf(sdk.CodeUsage, "messages", "--format markdown is text, not JSON; drop --json or choose logbook, openai, anthropic or openai-responses")
			}
			v, err := a.storedView(cmd.Context(), cmd.Name(), args[0], at.ptr())
			if err != nil {
				return err
			}
			b, omitted, err := v.FormatMessages(format)
			if err != nil {
				return err
			}
			a.warnOmitted(omitted)
			return writeLine(a.stdout, b)
		},
	}
	cmd.Flags().Var(&at, "at", "show the messages as they were right after event `SEQ`")
	cmd.Flags().StringVar(&format, "format", "logbook", "`F`: logbook (as derived), openai, anthropic or openai-responses (the provider's messages array or Responses input items; Anthropic's system prompt is not a message), markdown (for reading)")
	return cmd
}

// newSurfaceCmd is `logbook surface ID [--at SEQ]`.
func newSurfaceCmd(a *app) *cobra.Command {
	var at seqFlag
	cmd := &cobra.Command{
		Use:         "surface ID",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Print the surface nodes as a JSON array of seqs (--at: right after event SEQ)",
		Example: "  logbook surface s1\n" +
			"  logbook surface s1 --at 12",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := a.storedView(cmd.Context(), cmd.Name(), args[0], at.ptr())
			if err != nil {
				return err
			}
			nodes, err := v.Surface()
			if err != nil {
				return err
			}
			if nodes == nil {
				nodes = []sdk.Seq{}
			}
			return writeJSON(a.stdout, nodes)
		},
	}
	cmd.Flags().Var(&at, "at", "show the surface right after event `SEQ`")
	return cmd
}

// newHeaderCmd is `logbook header ID [--at SEQ]`.
func newHeaderCmd(a *app) *cobra.Command {
	var at seqFlag
	cmd := &cobra.Command{
		Use:         "header ID",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Print the folded request header as JSON, null when none (--at: right after event SEQ)",
		Example: "  logbook header s1\n" +
			"  logbook header s1 --at 3",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := a.storedView(cmd.Context(), cmd.Name(), args[0], at.ptr())
			if err != nil {
				return err
			}
			return writeLine(a.stdout, v.RequestHeaderJSON())
		},
	}
	cmd.Flags().Var(&at, "at", "show the header folded up to event `SEQ`")
	return cmd
}

// newRequestCmd is `logbook request ID [--at SEQ] [--format F]`.
func newRequestCmd(a *app) *cobra.Command {
	var at seqFlag
	var format string
	cmd := &cobra.Command{
		Use:         "request ID",
		Annotations: offersJSONAnnotation(), // its output is JSON already
		Short:       "Print the exact request a model would be sent next: {header, context, messages}, or the provider's body (--at: right after event SEQ; --format openai|anthropic|openai-responses)",
		Long: "request prints the request a model would be sent right after the last event (with\n" +
			"--at SEQ, right after event SEQ): logbook's {header, context, messages}, or with\n" +
			"--format openai|anthropic|openai-responses the provider's body. A provider\n" +
			"format needs a request/header event up to that seq (it names the model), else\n" +
			"REQUEST_HEADER_MISSING, and refuses with TOOL_CALLS_PENDING while a step's calls\n" +
			"have no result.",
		Example: "  logbook request s1\n" +
			"  logbook request s1 --at 12\n" +
			"  logbook request s1 --at 12 --format anthropic",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(cmd.Name(), format, requestFormats); err != nil {
				return err
			}
			v, err := a.storedView(cmd.Context(), cmd.Name(), args[0], at.ptr())
			if err != nil {
				return err
			}
			b, omitted, err := v.Request(format)
			if err != nil {
				return err
			}
			a.warnOmitted(omitted)
			return writeLine(a.stdout, b)
		},
	}
	cmd.Flags().Var(&at, "at", "the request right after event `SEQ` (default: the last event)")
	cmd.Flags().StringVar(&format, "format", "logbook", "`F`: logbook ({header, context, messages}), openai (Chat Completions body: model, messages, tools), anthropic (Messages body: model, system, messages, tools, max_tokens) or openai-responses (Responses body: model, input, tools)")
	return cmd
}

// inspectReport is `logbook inspect --json`.
type inspectReport struct {
	ID            string            `json:"id"`
	Events        int64             `json:"events"`
	OpenTurn      *int64            `json:"openTurn"`
	PendingRepair []json.RawMessage `json:"pendingRepair"`
	TornBytes     int64             `json:"tornBytes"`
	Protocol      string            `json:"protocol,omitempty"` // "lenient", as the header stores it; absent for strict
}

// newInspectCmd is `logbook inspect ID`: the store's read-only inspect
// view, whose trailing PendingRepair events are the closers a resume would
// append.
func newInspectCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:         "inspect ID",
		Annotations: offersJSONAnnotation(),
		Short:       "Show the read-only balanced view: events, open turn, the closers a resume would append, torn bytes; never writes",
		Example: "  logbook inspect s1\n" +
			"  logbook inspect s1 --json",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			svc, err := a.service(ctx)
			if err != nil {
				return err
			}
			in, err := svc.Inspect(ctx, args[0])
			if err != nil {
				return err
			}
			a.warnTorn("inspect", args[0], in.Torn)
			r := inspectReport{ID: in.ID, Events: int64(in.Events), OpenTurn: in.OpenTurn, PendingRepair: []json.RawMessage{}, TornBytes: in.Torn.Bytes, Protocol: in.Header.Protocol}
			for _, ev := range in.PendingRepair {
				r.PendingRepair = append(r.PendingRepair, ev.Envelope)
			}
			if a.json {
				return writeJSON(a.stdout, r)
			}
			turn := "none"
			if r.OpenTurn != nil {
				turn = strconv.FormatInt(*r.OpenTurn, 10)
			}
			w := bufio.NewWriter(a.stdout)
			fmt.Fprintf(w, "session         %s\nevents          %d\nopen turn       %s\ntorn bytes      %d\n", r.ID, r.Events, turn, r.TornBytes)
			if in.Torn.Bytes > 0 {
				fmt.Fprintf(w, "torn from seq   %d\n", in.Torn.FromSeq)
			}
			if r.Protocol != "" {
				fmt.Fprintf(w, "protocol        %s\n", r.Protocol)
			}
			fmt.Fprintf(w, "pending repair  %s a resume would append\n", plural(int64(len(r.PendingRepair)), "event"))
			for _, env := range r.PendingRepair {
				fmt.Fprintf(w, "  %s\n", env)
			}
			return w.Flush()
		},
	}
}

// warnOmitted writes to stderr what a provider rendering left out because
// no provider accepts it where it stands (docs/providers.md, Omissions),
// one "warning:" line each.
func (a *app) warnOmitted(omitted []string) {
	for _, o := range omitted {
		fmt.Fprintf(a.stderr, "logbook: warning: %s\n", o)
	}
}

// writeJSON writes v as one line of JSON, without HTML escaping.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeLine writes b and a newline.
func writeLine(w io.Writer, b []byte) error {
	_, err := w.Write(append(b, '\n'))
	return err
}
