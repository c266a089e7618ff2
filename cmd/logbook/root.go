package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// commands holds the constructors of the top-level commands. Each file of
// this package appends its commands from init(), so a new command never
// edits root.go:
//
//	func init() { commands = append(commands, newServeCmd) }
//	func newServeCmd(a *app) *cobra.Command { … RunE: func(cmd *cobra.Command, args []string) error { svc, err := a.service(cmd.Context()) … } }
//
// A RunE returns an error carrying a stable error code (an *sdk.Error or an
// sdk.Code); an error without one is reported as IO_ERROR. Return
// sdk.CodeUsage for a malformed command line the flag parser could not catch
// (exit status 2). Results go to a.stdout, anything else to a.stderr.
var commands []func(*app) *cobra.Command

// closeTimeout bounds the shutdown of the service: flushing and releasing
// every live session, then stopping the plugins.
const closeTimeout = time.Minute

// app is one invocation of the CLI: the global flags, the standard streams
// and the lazily started service. It is used from the command's goroutine
// only.
type app struct {
	// Global flags (before or after the command).
	configPath string // --config: HCL file; "" = the embedded default
	dataDir    string // --data: replaces data_dir
	logLevel   string // --log-level: hclog level, default warn
	json       bool   // --json: JSON output where a command offers it

	stdin  io.Reader
	stdout io.Writer // results only
	stderr io.Writer // logs, progress, the final error line

	// tenant is --tenant of the commands acting within a tenant
	// (tenant.go); current, set while eachTenant runs a command in one
	// tenant, replaces it.
	tenant, current string

	cfg *config.Config
	svc *service.Service // the service Open returned (the default tenant's)
	// metrics, set before the service starts, makes it collect the
	// measurements serve publishes at /metrics; readOnly makes it a
	// read-only service (view).
	metrics, readOnly bool
}

// The environment variables that stand in for the global flags: a flag
// wins over its variable.
const (
	configEnv = "LOGBOOK_CONFIG" // --config
	dataEnv   = "LOGBOOK_DATA"   // --data
)

// config loads the configuration once: the --config file, else the one
// $LOGBOOK_CONFIG names, else the embedded default profile (JSONL+zstd).
// The data directory is --data, else $LOGBOOK_DATA, else the file's
// data_dir; the embedded profile's is the per-user one (userDataDir).
func (a *app) config() (*config.Config, error) {
	if a.cfg != nil {
		return a.cfg, nil
	}
	path := a.configPath
	if path == "" {
		path = os.Getenv(configEnv)
	}
	dataDir := a.dataDir
	if dataDir == "" {
		dataDir = os.Getenv(dataEnv)
	}
	if dataDir == "" && path == "" {
		d, err := userDataDir()
		if err != nil {
			return nil, err
		}
		dataDir = d
	}
	cfg, err := config.LoadOrDefault(path, config.Overrides{DataDir: dataDir})
	if err != nil {
		return nil, err
	}
	a.cfg = cfg
	return cfg, nil
}

// userDataDir is the data directory of the embedded profile when neither
// --data nor $LOGBOOK_DATA gives one: $XDG_DATA_HOME/logbook when
// XDG_DATA_HOME is an absolute path (the XDG base directory rule ignores a
// relative one), else ~/.local/share/logbook.
func userDataDir() (string, error) {
	if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "logbook"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", sdk.Errorf(sdk.CodeConfigInvalid, "logbook", "no data directory: $HOME and $XDG_DATA_HOME are unset; give one with --data DIR or %s", dataEnv)
	}
	return filepath.Join(home, ".local", "share", "logbook"), nil
}

// logger returns the hclog logger at --log-level, writing to stderr.
func (a *app) logger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "logbook", Level: hclog.LevelFromString(a.logLevel), Output: a.stderr})
}

// service starts the configured plugins and the store on first use and
// returns the service of the command's tenant (--tenant, default
// "default"); later calls return the same one. close shuts it down.
func (a *app) service(ctx context.Context) (*service.Service, error) {
	root, err := a.rootService(ctx)
	if err != nil {
		return nil, err
	}
	name := a.current
	if name == "" {
		name = a.tenant
	}
	if name == "" {
		return root, nil // a command without --tenant
	}
	return root.Tenant(name)
}

// rootService starts the configured plugins and the store on first use
// and returns the service Open returned, the default tenant's.
func (a *app) rootService(ctx context.Context) (*service.Service, error) {
	if a.svc != nil {
		return a.svc, nil
	}
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, &sdk.Error{Code: sdk.CodeIOError, Op: "logbook", Detail: "cannot find the logbook binary to run the bundled plugins", Err: err}
	}
	s, err := service.Open(ctx, service.Options{Config: cfg, Executable: exe, Logger: a.logger(), Metrics: a.metrics, ReadOnly: a.readOnly})
	if err != nil {
		return nil, err
	}
	a.svc = s
	return s, nil
}

// writeService is service for the commands that write sessions: it first
// creates the data directory (0700) when it does not exist, since backends
// such as SQLite need their directory to exist. Read commands use service
// and leave the file system as it is.
func (a *app) writeService(ctx context.Context) (*service.Service, error) {
	if err := a.makeDataDir(); err != nil {
		return nil, err
	}
	return a.service(ctx)
}

// makeDataDir creates the data directory (0700) when it does not exist.
func (a *app) makeDataDir() error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return &sdk.Error{Code: sdk.CodeIOError, Op: "logbook", Detail: "cannot create the data directory", Err: err}
	}
	return nil
}

// close shuts the service down, if it was started: every live session is
// flushed and released, then the plugins stop. It runs on its own deadline,
// so an interrupted command still flushes what it committed. It is the last
// flush of a write command: nothing is written after it, so what it returns
// is what is durable when the command exits (a Release before it would
// report one drain's outcome while this one could still store the events).
func (a *app) close() error {
	if a.svc == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	err := a.svc.Close(ctx)
	a.svc = nil
	return err
}

// newRoot builds the command tree for a: the global flags and every
// registered command. Every RunE is wrapped so that an error without a
// stable code (docs/errors.md) becomes IO_ERROR; errors that reach execute without a code
// therefore come from cobra itself (unknown command or flag, wrong argument
// count, bad flag value) and are usage errors.
func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "logbook",
		Short: "Inspect, repair, fork, migrate and serve logbook sessions",
		Long: "logbook keeps agent sessions as append-only event logs.\n\n" +
			"stdout carries results only; logs and progress go to stderr. On failure the last\n" +
			"stderr line is `logbook: <CODE>: <message>`; the exit status is 1 for a rejected\n" +
			"operation and 2 for a malformed command line.",
		Version:       buildVersion().Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		// cobra's default, which SuggestionsFor only applies once its own
		// error text asked for suggestions.
		SuggestionsMinimumDistance: 2,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if hclog.LevelFromString(a.logLevel) == hclog.NoLevel {
				return sdk.Errorf(sdk.CodeUsage, "logbook", "--log-level %q is not one of trace, debug, info, warn, error, off", a.logLevel)
			}
			if a.json && !offersJSON(cmd) {
				return sdk.Errorf(sdk.CodeUsage, "logbook", "'%s' does not offer --json; the commands that do say so in their --help", cmd.CommandPath())
			}
			return nil
		},
		// An argument the root got is a command it does not have.
		Args: unknownCommand,
		// Without a command the root only explains itself.
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sdk.Errorf(sdk.CodeUsage, "logbook", "missing command; see 'logbook --help'")
		},
	}
	// completion.go replaces cobra's default completion command.
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetVersionTemplate("logbook {{.Version}}\n")
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetIn(a.stdin)
	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "", "HCL config `FILE` (default: $"+configEnv+", else the embedded JSONL+zstd profile)")
	pf.StringVar(&a.dataDir, "data", "", "data `DIR` (default: $"+dataEnv+", else the config file's data_dir, else $XDG_DATA_HOME/logbook or ~/.local/share/logbook); relative persistence paths resolve against it")
	pf.StringVar(&a.logLevel, "log-level", "warn", "log `LEVEL` on stderr: trace, debug, info, warn, error, off")
	pf.BoolVar(&a.json, "json", false, "JSON output, for the commands that offer it")
	for _, newCmd := range commands {
		root.AddCommand(newCmd(a))
	}
	addTenantFlags(a, root)
	requireCodes(root)
	return root
}

// unknownCommand refuses an argument of the root, which can only be a
// mistyped command, with USAGE on one line and cobra's suggestions quoted:
// `unknown command "sesions"; did you mean "sessions"?`.
func unknownCommand(root *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q", args[0])
	if s := root.SuggestionsFor(args[0]); len(s) > 0 {
		quoted := make([]string, len(s))
		for i, name := range s {
			quoted[i] = strconv.Quote(name)
		}
		msg += "; did you mean " + strings.Join(quoted, " or ") + "?"
	} else {
		msg += "; 'logbook --help' lists the commands"
	}
	return sdk.Errorf(sdk.CodeUsage, "logbook", "%s", msg)
}

// jsonAnnotation is the key, in a command's Annotations, that marks a
// command honouring --json: `Annotations: offersJSONAnnotation()`. The
// root refuses --json with USAGE for every other command instead of
// ignoring it.
const jsonAnnotation = "logbook/json"

// offersJSONAnnotation returns the Annotations of a command that honours
// --json.
func offersJSONAnnotation() map[string]string { return map[string]string{jsonAnnotation: "yes"} }

// offersJSON reports whether c honours --json.
func offersJSON(c *cobra.Command) bool { return c.Annotations[jsonAnnotation] != "" }

// requireCodes wraps the RunE of c and of every command below it so that
// an error without a stable error code is reported as IO_ERROR.
func requireCodes(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			if err != nil && sdk.CodeOf(err) == "" {
				return &sdk.Error{Code: sdk.CodeIOError, Op: "logbook", Detail: err.Error(), Err: err}
			}
			return err
		}
	}
	for _, sub := range c.Commands() {
		requireCodes(sub)
	}
}

// execute runs the CLI with args and returns the exit status: 0 on
// success, 1 for a rejected operation, 2 for a usage error (a --tenant
// that is no tenant name, TENANT_INVALID, included). On failure the
// last line written to stderr is `logbook: <CODE>: <message>`.
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRoot(a)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if cerr := a.close(); err == nil {
		err = cerr
	}
	if err == nil {
		return 0
	}
	code := sdk.CodeOf(err)
	if code == "" {
		// Only cobra returns errors without a code (see newRoot).
		code = sdk.CodeUsage
	}
	if code == sdk.CodeUsage {
		if cmd == nil {
			cmd = root
		}
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	msg := message(err, code)
	if code == sdk.CodeCorruptLog && (cmd == nil || cmd.Name() != "salvage") {
		msg += salvageHint(err)
	}
	fmt.Fprintf(stderr, "logbook: %s: %s\n", code, msg)
	if code == sdk.CodeUsage || code == sdk.CodeTenantInvalid {
		return 2
	}
	return 1
}

// message renders err for the final stderr line: on one line, without a
// leading "<op>: <CODE>: " that would repeat the code.
func message(err error, code sdk.Code) string {
	msg := err.Error()
	var e *sdk.Error
	if errors.As(err, &e) && e == err && e.Code == code {
		msg = strings.TrimPrefix(msg, e.Op+": "+string(code)+": ")
	}
	if msg == string(code) {
		msg = "failed"
	}
	return strings.NewReplacer("\r\n", "; ", "\n", "; ", "\r", "; ").Replace(msg)
}
