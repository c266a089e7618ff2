package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

func init() { commands = append(commands, newSalvageCmd) }

// newSalvageCmd is `logbook salvage ID [--as NEW]`: the service's
// Salvage, then its close (the command's last flush, see app.close), so
// the child is durable when its id is printed.
func newSalvageCmd(a *app) *cobra.Command {
	var child string
	cmd := &cobra.Command{
		Use:         "salvage ID [--as NEW]",
		Annotations: offersJSONAnnotation(),
		Short:       "Copy the valid prefix of a damaged (CORRUPT_LOG) session into a new session; prints the new session's id (--json: the report)",
		Example: "  logbook salvage s1                # prints the new session's id\n" +
			"  logbook salvage s1 --as s1-fixed\n" +
			"  logbook salvage s1 --json          # the id, what was kept and where the rest went",
		Long: "salvage reads a session whose stored log is damaged inside its committed part, which no other\n" +
			"command loads, and creates a new session holding what a fork of its longest valid prefix would\n" +
			"hold, then a session/salvaged event. The damaged bytes and everything after them are kept in an\n" +
			"artifact file beside the sessions. The damaged session is never modified. An intact session is\n" +
			"refused: fork it instead.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			svc, err := a.writeService(ctx)
			if err != nil {
				return err
			}
			rep, err := svc.Salvage(ctx, service.SalvageRequest{Source: args[0], Child: child})
			if err != nil {
				return err
			}
			if err := a.close(); err != nil {
				return err
			}
			// Offset and size are bytes of a file backend, seq and rows of a row backend.
			fmt.Fprintf(a.stderr, "logbook salvage: session %q holds the %s of %q before its damage (%s; damagedAtOffset %d, damagedBytes %d); the damaged part and the %s after it are left out and kept in %s\n",
				rep.ID, plural(rep.ValidEvents, "valid event"), rep.From, rep.Reason, rep.DamagedAtOffset, rep.DamagedBytes,
				plural(rep.IntactEventsExcluded, "intact event"), rep.Artifact)
			if a.json {
				return writeJSON(a.stdout, rep)
			}
			return writeLine(a.stdout, []byte(rep.ID))
		},
	}
	cmd.Flags().StringVar(&child, "as", "", "the new session's `ID` (default: a generated one)")
	return cmd
}

// salvageHint is what the final error line of a command other than
// salvage adds to a CORRUPT_LOG of storage: the command that keeps what the
// damaged log of the session still holds. A CORRUPT_LOG of the host's
// restore (Op "restore": the stored events are intact but break an event
// rule) gets none, since salvage cannot help there.
func salvageHint(err error) string {
	var top *sdk.Error
	if errors.As(err, &top) && top.Op == "restore" {
		return ""
	}
	id := "ID"
	for x := err; x != nil; x = errors.Unwrap(x) {
		if e, ok := x.(*sdk.Error); ok && e.SessionID != "" {
			id = shellWord(e.SessionID)
			break
		}
	}
	return "; `logbook salvage " + id + "` copies what the damaged log still holds into a new session"
}

// shellWord quotes s for a POSIX shell unless it is made of characters
// that need no quoting.
func shellWord(s string) string {
	safe := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-:@%+=,/", r)
	}
	if strings.IndexFunc(s, func(r rune) bool { return !safe(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
