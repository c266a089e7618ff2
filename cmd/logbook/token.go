package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The token commands (docs/operations.md, "auth"): create, list and
// revoke the scoped tokens logbook serve accepts.

func init() { commands = append(commands, newTokenCmd) }

// newTokenCmd is `logbook token create|list|revoke`.
func newTokenCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token create|list|revoke",
		Short: "Create, list and revoke the scoped bearer tokens logbook serve accepts",
		Long: "A token is scoped to one tenant with a role — read, write, admin — or is an operator of every\n" +
			"tenant (--tenant '*' --role operator). The store keeps only its SHA-256: the token itself is\n" +
			"shown once, by create. The store is <data_dir>/tokens (mode 0600), auth { tokens_file } in the\n" +
			"config, or a table of the postgres primary's schema; serve re-reads it within a second.",
		Example: "  logbook token create --tenant acme --role write --name ci\n" +
			"  logbook token list\n" +
			"  logbook token revoke ci",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sdk.Errorf(sdk.CodeUsage, "logbook", "missing subcommand: create, list or revoke; see 'logbook token --help'")
		},
	}
	cmd.AddCommand(newTokenCreateCmd(a), newTokenListCmd(a), newTokenRevokeCmd(a))
	return cmd
}

// tokenStore opens the configured token store.
func (a *app) tokenStore(cmd *cobra.Command) (*service.TokenStore, error) {
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	return service.OpenTokenStore(cmd.Context(), cfg)
}

func newTokenCreateCmd(a *app) *cobra.Command {
	var n service.NewToken
	cmd := &cobra.Command{
		Use:   "create --tenant TENANT --role ROLE --name NAME",
		Short: "Create a token and print it, once, as the last line of stdout",
		Example: "  logbook token create --tenant acme --role write --name ci\n" +
			"  logbook token create --tenant '*' --role operator --name ops",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var missing []string
			for _, f := range []struct{ flag, val string }{{"--tenant", n.Tenant}, {"--role", n.Role}, {"--name", n.Name}} {
				if f.val == "" {
					missing = append(missing, f.flag)
				}
			}
			if len(missing) > 0 {
				return sdk.Errorf(sdk.CodeUsage, "logbook", "token create needs %s", strings.Join(missing, ", "))
			}
			s, err := a.tokenStore(cmd)
			if err != nil {
				return err
			}
			defer s.Close()
			secret, t, err := s.Create(cmd.Context(), n)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "created token %q (tenant %s, role %s) in %s; it is shown once, below\n", t.Name, t.Tenant, t.Role, s.Where())
			_, err = fmt.Fprintln(a.stdout, secret)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&n.Tenant, "tenant", "", "the `TENANT` the token is scoped to; '*' (every tenant) for an operator")
	f.StringVar(&n.Role, "role", "", "`ROLE`: read, write, admin or operator (operator needs --tenant '*')")
	f.StringVar(&n.Name, "name", "", "the token's `NAME`, unique: [a-z0-9][a-z0-9._-]{0,63}; audit records name it")
	return cmd
}

func newTokenListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:         "list",
		Short:       "List the tokens: name, tenant, role and creation time (never the token)",
		Long:        "list prints one line per token in name order; with --json, one JSON array of {name, tenant, role, created}.",
		Example:     "  logbook token list\n  logbook token list --json",
		Annotations: offersJSONAnnotation(),
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.tokenStore(cmd)
			if err != nil {
				return err
			}
			defer s.Close()
			toks, err := s.List(cmd.Context())
			if err != nil {
				return err
			}
			if a.json {
				return writeJSON(a.stdout, toks)
			}
			w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tTENANT\tROLE\tCREATED")
			for _, t := range toks {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", t.Name, t.Tenant, t.Role, t.Created.UTC().Format(time.RFC3339))
			}
			return w.Flush()
		},
	}
}

func newTokenRevokeCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "revoke NAME",
		Short:   "Revoke a token: every serve over the store refuses it within a second",
		Example: "  logbook token revoke ci",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.tokenStore(cmd)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := s.Revoke(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "revoked token %q in %s\n", args[0], s.Where())
			return nil
		},
	}
}
