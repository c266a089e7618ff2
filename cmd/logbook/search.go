package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

func init() {
	commands = append(commands, newSearchCmd)
}

// defaultSearchLimit is how many hits search prints without --limit.
const defaultSearchLimit = 100

// newSearchCmd is `logbook search TEXT`: the service's Search over the primary
// backend, each hit printed as soon as it is known.
func newSearchCmd(a *app) *cobra.Command {
	var q service.SearchQuery
	q.Limit = defaultSearchLimit
	cmd := &cobra.Command{
		Use:         "search TEXT",
		Annotations: offersJSONAnnotation(),
		Short:       "Find the messages and tool results that contain TEXT, in every stored session, newest first",
		Long: "search reads every stored session (or only --session ID) and prints the events whose\n" +
			"message contains TEXT — the text of its text blocks, or a tool call's name and\n" +
			"arguments — one line each: session, seq, time, type and a snippet around the match.\n" +
			"Sessions come newest first (by creation), and within one the latest event first; hits\n" +
			"are printed while the scan goes on. ASCII letters match in either case unless\n" +
			"--case-sensitive. --json prints a JSON array of {session, seq, time, type, snippet}.",
		Example: "  logbook search \"permission denied\"\n" +
			"  logbook search TODO --type assistant/message --limit 5\n" +
			"  logbook search go.sum --session demo --json",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q.Text = args[0]
			if q.Limit < 1 {
				return &sdk.Error{Code: sdk.CodeUsage, Op: "search", Detail: fmt.Sprintf("--limit %d: the limit must be at least 1", q.Limit)}
			}
			if err := q.Validate(); err != nil {
				return err
			}
			ctx := cmd.Context()
			svc, err := a.service(ctx)
			if err != nil {
				return err
			}
			w := a.stdout
			sep := "[\n"
			if a.json {
				defer func() {
					if sep == "[\n" {
						fmt.Fprint(w, "[]\n")
					} else {
						fmt.Fprint(w, "\n]\n")
					}
				}()
			}
			return svc.Search(ctx, q, func(h service.SearchHit) error {
				if a.json {
					b, err := json.Marshal(h)
					if err != nil {
						return err
					}
					_, err = fmt.Fprintf(w, "%s%s", sep, b)
					sep = ",\n"
					return writeError(err)
				}
				when := time.UnixMilli(h.Time).UTC().Format(time.RFC3339)
				_, err := fmt.Fprintf(w, "%s\t#%s\t%s\t%s\t%s\n", h.Session, strconv.FormatInt(int64(h.Seq), 10), when, h.Type, h.Snippet)
				return writeError(err)
			})
		},
	}
	cmd.Flags().StringVar(&q.Session, "session", "", "search only the session `ID`")
	cmd.Flags().StringSliceVar(&q.Types, "type", nil, "report only events of type `T` (repeat or separate with commas): "+fmt.Sprint(service.SearchTypes()))
	cmd.Flags().IntVar(&q.Limit, "limit", defaultSearchLimit, "stop after `N` hits")
	cmd.Flags().BoolVar(&q.CaseSensitive, "case-sensitive", false, "match ASCII letters only in the case given")
	return cmd
}

// writeError is an IO_ERROR for a failed write of search's output.
func writeError(err error) error {
	if err == nil {
		return nil
	}
	return &sdk.Error{Code: sdk.CodeIOError, Op: "search", Detail: "writing the results", Err: err}
}
