package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/sdk"
)

// allTenants is the --tenant value of a command acting across every
// tenant.
const allTenants = "*"

// tenantCommands are the commands that act within one tenant and take
// --tenant NAME (default sdk.DefaultTenant); the value says whether the
// command also takes --tenant '*', running once per tenant (tenants that
// hold sessions, Service.Tenants).
var tenantCommands = map[string]bool{
	"sessions": true, "gc": true, "verify": true, "search": true, "audit": true,
	"events": false, "messages": false, "transcript": false, "surface": false, "header": false,
	"request": false, "inspect": false, "why": false, "view": false,
	"create": false, "resume": false, "fork": false, "append": false, "compact": false, "prune": false,
	"delete": false, "hold": false, "release-hold": false, "salvage": false,
	"export": false, "import": false, "migrate": false,
}

// addTenantFlags gives every command of tenantCommands under root its
// --tenant flag and checks it before the command runs: an invalid name is
// TENANT_INVALID, '*' where the command acts in one tenant only is USAGE.
// With '*' the command runs once per tenant (eachTenant).
func addTenantFlags(a *app, root *cobra.Command) {
	for _, c := range root.Commands() {
		across, ok := tenantCommands[c.Name()]
		if !ok || c.RunE == nil {
			continue
		}
		usage := "act within tenant `NAME`"
		if across {
			usage += "; '*' runs the command in every tenant that holds sessions"
		}
		c.Flags().StringVar(&a.tenant, "tenant", sdk.DefaultTenant, usage)
		run := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if a.tenant == allTenants {
				if !across {
					return sdk.Errorf(sdk.CodeUsage, cmd.Name(), "--tenant '*' is for sessions, gc, verify, search and audit; '%s' acts within one tenant: name it", cmd.Name())
				}
				return a.eachTenant(cmd, func() error { return run(cmd, args) })
			}
			if err := sdk.ValidateTenant(a.tenant); err != nil {
				return err
			}
			return run(cmd, args)
		}
	}
}

// eachTenant runs run once for every tenant that holds sessions, the
// default first, with a.service returning that tenant's service. Each
// run's output follows a line "tenant NAME:"; with --json, every JSON
// value a run prints is printed as {"tenant": NAME, "result": value} on a
// line of its own. Every tenant is run; the error is the first one.
func (a *app) eachTenant(cmd *cobra.Command, run func() error) error {
	root, err := a.rootService(cmd.Context())
	if err != nil {
		return err
	}
	names, err := root.Tenants(cmd.Context())
	if err != nil {
		return err
	}
	out := a.stdout
	defer func() { a.stdout, a.current = out, "" }()
	var first error
	for _, name := range names {
		var buf bytes.Buffer
		a.stdout, a.current = &buf, name
		err := run()
		if first == nil && err != nil {
			first = err
		}
		if werr := writeTenantOutput(out, name, &buf, a.json); werr != nil && first == nil {
			first = werr
		}
	}
	return first
}

// writeTenantOutput writes one tenant's output to w as eachTenant says.
func writeTenantOutput(w io.Writer, tenant string, out *bytes.Buffer, asJSON bool) error {
	if !asJSON {
		if _, err := fmt.Fprintf(w, "tenant %s:\n", tenant); err != nil {
			return err
		}
		_, err := out.WriteTo(w)
		return err
	}
	dec := json.NewDecoder(out)
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return sdk.Wrap(sdk.CodeIOError, "logbook", err)
		}
		if _, err := fmt.Fprintf(w, "{\"tenant\":%s,\"result\":%s}\n", strconv.Quote(tenant), v); err != nil {
			return err
		}
	}
	return nil
}
