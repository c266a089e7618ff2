package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The session lifecycle commands (docs/operations.md, "Deleting sessions,
// holds and retention"): delete, hold, release-hold, gc and audit.

func init() {
	commands = append(commands, newDeleteCmd, newHoldCmd(true), newHoldCmd(false), newGCCmd, newAuditCmd)
}

// newDeleteCmd is `logbook delete ID [--reason TEXT]`.
func newDeleteCmd(a *app) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "delete ID [--reason TEXT]",
		Short: "Delete a stored session from every backend, after recording it in the audit log",
		Long: "delete removes a stored session — its log, checkpoint and artifacts — from the primary and every\n" +
			"mirror. Each backend first appends a record to its audit log: when, which session, its length\n" +
			"and a SHA-256 digest of its stored bytes, the reason and \"by cli\" (see logbook audit). A session\n" +
			"open for writing anywhere is refused with ALREADY_OWNED, one under a legal hold with SESSION_HELD;\n" +
			"a refused delete changes nothing and records nothing. Forks of the session keep their own copy.\n" +
			"The id can be used again afterwards.",
		Example: "  logbook delete 0193a4f2-7c1e-7b9d-9f00-5a1b2c3d4e5f --reason \"customer asked for erasure\"\n" +
			"  logbook delete demo --json",
		Annotations: offersJSONAnnotation(),
		Args:        cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			svc, err := a.service(ctx)
			if err != nil {
				return err
			}
			rec, err := svc.Delete(ctx, args[0], sdk.AuditRequest{Reason: reason, By: sdk.ByCLI})
			if err != nil && rec.Session == "" {
				return err
			}
			if werr := a.printRecord(rec, "deleted"); werr != nil {
				return werr
			}
			return err // a mirror that failed after the primary's deletion
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why the session is deleted, kept in the audit record")
	return cmd
}

// newHoldCmd is `logbook hold ID [--reason]` (hold) or `logbook
// release-hold ID [--reason]`.
func newHoldCmd(hold bool) func(a *app) *cobra.Command {
	return func(a *app) *cobra.Command {
		var reason string
		name, short, long, done, already := "hold", "Put a stored session under a legal hold: it cannot be deleted until released",
			"hold marks a stored session as under a legal hold in every backend: delete and retention (gc,\n"+
				"serve) refuse it with SESSION_HELD until logbook release-hold lifts the hold. It works beside a\n"+
				"writer. The hold is recorded in the audit log; holding a held session changes and records nothing.",
			"held", "is already held"
		if !hold {
			name, short, long, done, already = "release-hold", "Lift the legal hold on a stored session",
				"release-hold lifts the legal hold logbook hold put on a stored session, in every backend, and\n"+
					"records it in the audit log; releasing a session that is not held changes and records nothing.",
				"released", "is not held"
		}
		cmd := &cobra.Command{
			Use:         name + " ID [--reason TEXT]",
			Short:       short,
			Long:        long,
			Example:     "  logbook " + name + " demo --reason \"ticket LEGAL-42\"\n  logbook " + name + " demo --json",
			Annotations: offersJSONAnnotation(),
			Args:        cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				ctx := cmd.Context()
				svc, err := a.service(ctx)
				if err != nil {
					return err
				}
				r := sdk.AuditRequest{Reason: reason, By: sdk.ByCLI}
				set := svc.Hold
				if !hold {
					set = svc.ReleaseHold
				}
				rec, changed, err := set(ctx, args[0], r)
				if err != nil && !changed {
					return err
				}
				var werr error
				switch {
				case a.json:
					out := struct {
						Changed bool             `json:"changed"`
						Record  *sdk.AuditRecord `json:"record,omitempty"`
					}{Changed: changed}
					if changed {
						out.Record = &rec
					}
					werr = writeJSON(a.stdout, out)
				case changed:
					werr = a.printRecord(rec, done)
				default:
					_, werr = fmt.Fprintf(a.stdout, "%s %s; nothing changed\n", args[0], already)
				}
				if werr != nil {
					return werr
				}
				return err
			},
		}
		cmd.Flags().StringVar(&reason, "reason", "", "why, kept in the audit record")
		return cmd
	}
}

// printRecord prints rec: as its JSON with --json, else one line "<done>
// <session>: <n> events, <digest>".
func (a *app) printRecord(rec sdk.AuditRecord, done string) error {
	if a.json {
		return writeJSON(a.stdout, rec)
	}
	_, err := fmt.Fprintf(a.stdout, "%s %s: %s, %s\n", done, rec.Session, plural(int64(rec.Events), "event"), rec.Digest)
	return err
}

// gcEntry is one line of `logbook gc --json`.
type gcEntry struct {
	Session      string           `json:"session"`
	LastActivity string           `json:"lastActivity,omitempty"`
	Action       string           `json:"action"` // "delete", "would-delete" or "keep"
	Kept         string           `json:"kept,omitempty"`
	Error        string           `json:"error,omitempty"`
	Record       *sdk.AuditRecord `json:"record,omitempty"`
}

// newGCCmd is `logbook gc [--dry-run]`: the retention policy, once.
func newGCCmd(a *app) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "gc [--dry-run]",
		Short: "Delete the sessions the retention policy no longer keeps (--dry-run: only list them)",
		Long: "gc applies the config's retention block: every stored session whose last activity (its last\n" +
			"event's time) is older than max_age is deleted as logbook delete would, with reason \"retention\"\n" +
			"and by \"retention\" in the audit record, except a session under a legal hold, one open for\n" +
			"writing, and, with keep_forked_parents (the default), one that another stored session names as\n" +
			"its parent. It prints each session older than max_age and what it did with it. --dry-run deletes\n" +
			"nothing. logbook serve runs the same once an hour. Without a retention block gc is CONFIG_INVALID.",
		Example: "  logbook gc --dry-run\n" +
			"  logbook gc --json\n\n" +
			"  # in the config file:\n" +
			"  retention {\n    max_age             = \"90d\"\n    keep_forked_parents = true\n  }",
		Annotations: offersJSONAnnotation(),
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, err := a.config()
			if err != nil {
				return err
			}
			if err := service.CheckRetention(cfg); err != nil {
				return err
			}
			svc, err := a.service(ctx)
			if err != nil {
				return err
			}
			ds, err := svc.GC(ctx, service.GCOptions{DryRun: dryRun})
			if err != nil {
				return err
			}
			entries := make([]gcEntry, 0, len(ds))
			for _, d := range ds {
				en := gcEntry{Session: d.ID, Action: "keep", Kept: d.Kept}
				if !d.LastActivity.IsZero() {
					en.LastActivity = d.LastActivity.Format(time.RFC3339)
				}
				switch {
				case d.Delete && dryRun:
					en.Action = "would-delete"
				case d.Delete:
					en.Action, en.Record = "delete", &d.Record
				}
				if d.Err != nil {
					en.Error = d.Err.Error()
					fmt.Fprintf(a.stderr, "logbook gc: session %q: %v\n", d.ID, d.Err)
				}
				entries = append(entries, en)
			}
			if a.json {
				return writeJSON(a.stdout, entries)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SESSION\tLAST ACTIVE\tACTION")
			for _, en := range entries {
				action := en.Action
				if en.Kept != "" {
					action += " (" + en.Kept + ")"
				}
				last := en.LastActivity
				if last == "" {
					last = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", en.Session, last, action)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be deleted and delete nothing")
	return cmd
}

// newAuditCmd is `logbook audit [--session ID]`: the primary's audit log.
func newAuditCmd(a *app) *cobra.Command {
	var only string
	cmd := &cobra.Command{
		Use:   "audit [--session ID]",
		Short: "Print the audit log of deletions and legal holds (table; --json: one object per line)",
		Long: "audit prints the primary backend's audit log, oldest first: every delete, hold and release-hold,\n" +
			"by hand or by retention, with its time, the session, its length and last seq, the SHA-256 digest\n" +
			"of its stored bytes, who did it (cli, retention, api) and why. --json prints one JSON object per\n" +
			"record and line.",
		Example:     "  logbook audit\n  logbook audit --session demo --json",
		Annotations: offersJSONAnnotation(),
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if only != "" {
				if err := sdk.ValidateSessionID(only); err != nil {
					return err
				}
			}
			svc, err := a.service(ctx)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			if !a.json {
				fmt.Fprintln(tw, "TIME\tOP\tSESSION\tLAST SEQ\tDIGEST\tBY\tREASON")
			}
			err = svc.Audit(ctx, func(r sdk.AuditRecord) error {
				if only != "" && r.Session != only {
					return nil
				}
				if a.json {
					return writeJSON(a.stdout, r)
				}
				last := "-"
				if r.Events > 0 {
					last = fmt.Sprint(r.Events - 1)
				}
				_, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.Format(time.RFC3339), r.Op, r.Session, last, r.Digest, r.By, r.Reason)
				return err
			})
			if err != nil {
				return err
			}
			if a.json {
				return nil
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&only, "session", "", "print only the records of session `ID`")
	return cmd
}
