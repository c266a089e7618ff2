package main

import (
	"fmt"
	"net"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/viewer"
)

func init() { commands = append(commands, newViewCmd) }

// defaultViewAddr is where `logbook view` listens by default: a free
// loopback port.
const defaultViewAddr = "127.0.0.1:0"

// newViewCmd is `logbook view [ID]`: the server of `logbook serve`, read-only
// (service.Options.ReadOnly) and on loopback only, for a browser to look at
// the stored sessions; it prints its URL and runs until SIGINT or SIGTERM.
func newViewCmd(a *app) *cobra.Command {
	var addr string
	var edge edgeFlags
	cmd := &cobra.Command{
		Use:   "view [ID]",
		Short: "Serve the stored sessions read-only on loopback for a browser, and print the URL",
		Long: "view starts the server of logbook serve over the configured store, with the web viewer\n" +
			"at / (docs/viewer.md), read-only: it takes no session's write ownership, so it runs beside\n" +
			"writers in other processes, and it refuses every write (create, append, fork, flush,\n" +
			"compact, release) with SESSION_READ_ONLY. A followed event stream\n" +
			"(GET /v1/sessions/ID/events?follow=true) shows the events other processes append. It\n" +
			"listens on a loopback address only (--addr, default a free port on 127.0.0.1), prints one\n" +
			"line, the URL to open (with #/sessions/ID when ID is given, and ?tenant=NAME, which the viewer\n" +
			"picks for its tab, with --tenant NAME), opens nothing itself, and runs\n" +
			"until SIGINT or SIGTERM. Like serve it answers only requests whose Host is localhost, a loopback\n" +
			"IP or the listen address (--allowed-host adds one) and refuses pages of other origins\n" +
			"(--allowed-origin allows one).",
		Example: "  logbook view                          # prints the URL to open in a browser\n" +
			"  logbook view s1                       # the URL opens session s1\n" +
			"  logbook view --tenant team-a s1       # session s1 of tenant team-a\n" +
			"  logbook view --addr 127.0.0.1:7421",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := edge.check("view"); err != nil {
				return err
			}
			if !service.LoopbackAddr(addr) {
				return sdk.Errorf(sdk.CodeUsage, "view", "--addr %s is not a loopback address: view serves this machine only (for example 127.0.0.1:0); to serve others, use logbook serve with a credential (a token of logbook token create, a JWT key in the config's auth { jwt { … } } block, or --token-file)", addr)
			}
			a.readOnly = true
			svc, err := a.service(ctx)
			if err != nil {
				return err
			}
			if len(args) == 1 {
				if _, err := svc.StatStored(ctx, args[0]); err != nil {
					return err
				}
			}
			srv, err := svc.NewServer(service.ServeOptions{
				Addr:           addr,
				AllowedHosts:   edge.allowedHosts,
				AllowedOrigins: edge.allowedOrigins,
				Logger:         a.logger().Named("view"),
				Viewer:         viewer.Handler(),
			})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return &sdk.Error{Code: sdk.CodeIOError, Op: "view", Detail: "cannot listen on " + addr, Err: err}
			}
			link := "http://" + ln.Addr().String() + "/"
			if a.tenant != sdk.DefaultTenant {
				// The server serves every tenant; the viewer picks this one
				// for its tab from ?tenant= (docs/viewer.md).
				link += "?tenant=" + url.QueryEscape(a.tenant)
			}
			if len(args) == 1 {
				link += "#/sessions/" + url.PathEscape(args[0])
			}
			fmt.Fprintln(a.stdout, link)
			return srv.Serve(ctx, ln)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", defaultViewAddr, "listen `ADDRESS` (host:port), loopback only; port 0 picks a free one")
	edge.register(cmd)
	return cmd
}
