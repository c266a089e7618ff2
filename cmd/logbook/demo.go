package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/internal/demo"
	"github.com/seed-e5e476df/logbook/sdk"
)

func init() { commands = append(commands, newDemoCmd) }

// newDemoCmd is `logbook demo`: the guided tour of internal/demo, in a
// fresh directory (--data, or a new temporary one that is kept so that the
// commands it prints can look at it). The hidden --worker flag runs the
// demo's crash worker, which the tour starts as a child and kills.
func newDemoCmd(a *app) *cobra.Command {
	var worker bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a scripted agent session: a crash, a resume, a compaction and a fork",
		Example: "  logbook demo                 # in a new temporary directory, which it names\n" +
			"  logbook demo --data /tmp/tour # in an empty directory of your choice",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if worker {
				svc, err := a.writeService(cmd.Context())
				if err != nil {
					return err
				}
				return demo.Worker(cmd.Context(), svc, a.stdout)
			}
			dir := a.dataDir
			if dir == "" {
				d, err := os.MkdirTemp("", "logbook-demo-")
				if err != nil {
					return &sdk.Error{Code: sdk.CodeIOError, Op: "demo", Detail: "cannot make a directory for the demo", Err: err}
				}
				dir = d
			}
			exe, err := os.Executable()
			if err != nil {
				return &sdk.Error{Code: sdk.CodeIOError, Op: "demo", Detail: "cannot find the logbook binary", Err: err}
			}
			return demo.Run(cmd.Context(), demo.Options{Executable: exe, Dir: dir, Out: a.stdout, Logger: a.logger()})
		},
	}
	cmd.Flags().BoolVar(&worker, "worker", false, "run the demo's crash worker (the tour starts it)")
	_ = cmd.Flags().MarkHidden("worker")
	return cmd
}
