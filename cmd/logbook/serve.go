package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/viewer"
)

func init() { commands = append(commands, newServeCmd) }

// newServeCmd is `logbook serve`: the runtime daemon (runtime/service.Server) until
// SIGINT or SIGTERM, which end the command's context (see run), then a
// graceful shutdown that flushes and releases every session it held.
func newServeCmd(a *app) *cobra.Command {
	var addr, tokenFile string
	var readHeaderTimeout, readTimeout, idleTimeout time.Duration
	var edge edgeFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the runtime daemon: the logbook.v1.Sessions API over gRPC and JSON over HTTP",
		Example: "  logbook serve                                         # on 127.0.0.1:7420\n" +
			"  logbook serve --addr 0.0.0.0:7420 --token-file token  # reachable from other hosts\n" +
			"  logbook serve --config /etc/logbook/host-a.hcl",
		Long: "serve runs the runtime daemon: the logbook.v1.Sessions API (sdk/proto/logbook/v1/sessions.proto)\n" +
			"over gRPC (with server reflection), gRPC-Web and Connect's JSON over HTTP, on one port.\n" +
			"Envelopes, event data, messages and headers travel as their canonical JSON text in string\n" +
			"fields, so with JSON over HTTP each is a JSON string holding that text, byte for byte:\n\n" +
			"  curl -H 'Content-Type: application/json' -d '{\"sessionId\":\"s1\"}' \\\n" +
			"    http://127.0.0.1:7420/logbook.v1.Sessions/Inspect\n\n" +
			"The same port serves the /v1 resource API: native JSON, NDJSON appends, Server-Sent\n" +
			"Events and problem+json errors (docs/openapi.json, also at GET /v1/openapi.json):\n\n" +
			"  curl http://127.0.0.1:7420/v1/sessions/s1/events\n\n" +
			"A browser at / gets the web viewer (docs/viewer.md), which reads the same API.\n" +
			"It listens on 127.0.0.1:7420 by default and says where on stderr. Once any credential is\n" +
			"configured (a token of logbook token create, an auth { jwt } key, or --token-file, an operator\n" +
			"token of every tenant) every request but GET /healthz and the viewer's files needs\n" +
			"\"Authorization: Bearer <credential>\" (401 UNAUTHENTICATED) with the role its route needs\n" +
			"(403 PERMISSION_DENIED; read < write < admin < operator), loopback included; an address that\n" +
			"is not loopback requires a credential. A request runs on its credential's tenant; an operator\n" +
			"names another with ?tenant=T on /v1 or the Logbook-Tenant header. GET /v1/whoami says who you are.\n" +
			"A session no request used for idle_release (config serve block, default 10m) is flushed and released.\n" +
			"\n" +
			"No web page can drive it (docs/operations.md, \"Security model\"): on a loopback address a\n" +
			"request whose Host is not localhost, *.localhost, a loopback IP or the listen address is\n" +
			"refused (403 HOST_NOT_ALLOWED; more with --allowed-host or serve { allowed_hosts }); off\n" +
			"loopback any Host passes unless allowed_hosts names some. A request whose Origin is not the\n" +
			"server's own is refused (403 ORIGIN_NOT_ALLOWED; \"null\" too; more with --allowed-origin or\n" +
			"serve { allowed_origins }, which also get CORS answers). Every POST must carry its media\n" +
			"type (application/json; application/x-ndjson for event appends), body or not, else 415\n" +
			"UNSUPPORTED_MEDIA_TYPE before anything changes.\n\n" +
			"SIGINT or SIGTERM shut it down gracefully: every session it holds is flushed and released.\n" +
			"With a retention block in the config it applies it (as logbook gc does) when it starts and then\n" +
			"once an hour, and logs every deletion. With mirror \"<tool>\" blocks it imports that tool's\n" +
			"session files as they are written (docs/import.md, \"The live mirror\").",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if err := edge.check("serve"); err != nil {
				return err
			}
			token, err := readToken(tokenFile, a.stderr)
			if err != nil {
				return err
			}
			cfg, err := a.config()
			if err != nil {
				return err
			}
			if err := service.CheckServeAddr(ctx, cfg, addr, token); err != nil {
				return err
			}
			a.metrics = true
			svc, err := a.service(ctx)
			if err != nil {
				return err
			}
			srv, err := svc.NewServer(service.ServeOptions{
				Addr:              addr,
				Token:             token,
				AllowedHosts:      edge.allowedHosts,
				AllowedOrigins:    edge.allowedOrigins,
				ReadHeaderTimeout: readHeaderTimeout,
				ReadTimeout:       readTimeout,
				IdleTimeout:       idleTimeout,
				Logger:            a.logger().Named("serve"),
				Viewer:            viewer.Handler(),
			})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return &sdk.Error{Code: sdk.CodeIOError, Op: "serve", Detail: "cannot listen on " + addr, Err: err}
			}
			fmt.Fprintf(a.stderr, "logbook serve: listening on %s\n", ln.Addr())
			return srv.Serve(ctx, ln)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", service.DefaultAddr, "listen `ADDRESS` (host:port); an address that is not loopback requires a credential (a token in the store, a JWT key or --token-file)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "`FILE` holding a bearer token accepted as an operator of every tenant, named token-file in audit records (at least 16 bytes; keep the file private: serve warns when its group or others may read it)")
	cmd.Flags().DurationVar(&readHeaderTimeout, "read-header-timeout", service.DefaultReadHeaderTimeout, "how long a request's headers may take to arrive (`DURATION`)")
	cmd.Flags().DurationVar(&readTimeout, "read-timeout", service.DefaultReadTimeout,
		"how long a request may take to arrive (`DURATION`): all of a unary call, and each message of a stream from its first byte; a client trickling bytes is cut off after it; answers, such as an Events follow, are not bounded by it")
	cmd.Flags().DurationVar(&idleTimeout, "idle-timeout", service.DefaultIdleTimeout, "how long a connection may wait for its next request, and an append stream for its next message (`DURATION`)")
	edge.register(cmd)
	return cmd
}

// edgeFlags are the --allowed-host and --allowed-origin flags of serve and
// view, added to the config's serve block.
type edgeFlags struct {
	allowedHosts, allowedOrigins []string
}

// register adds the flags to cmd.
func (f *edgeFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.allowedHosts, "allowed-host", nil, "also accept requests whose Host is `HOST` (a name or IP, optionally :port; *.name for every subdomain); repeatable; adds to serve { allowed_hosts }")
	cmd.Flags().StringArrayVar(&f.allowedOrigins, "allowed-origin", nil, "let pages of `ORIGIN` (http(s)://host[:port]) call the server, with CORS; repeatable; adds to serve { allowed_origins }")
}

// check refuses (USAGE) a flag value that is not a host or an origin.
func (f *edgeFlags) check(op string) error {
	for _, h := range f.allowedHosts {
		if why := config.CheckAllowedHost(h); why != "" {
			return sdk.Errorf(sdk.CodeUsage, op, "--allowed-host %q %s", h, why)
		}
	}
	for _, o := range f.allowedOrigins {
		if why := config.CheckAllowedOrigin(o); why != "" {
			return sdk.Errorf(sdk.CodeUsage, op, "--allowed-origin %q %s", o, why)
		}
	}
	return nil
}

// readToken reads the bearer token from a --token-file ("" = no token); the
// surrounding whitespace (a trailing newline) is not part of it. A token
// shorter than service.MinTokenBytes is refused (CONFIG_INVALID), and a file
// its group or others may read gets a warning on warn.
func readToken(path string, warn io.Writer) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", &sdk.Error{Code: sdk.CodeUsage, Op: "serve", Detail: "cannot read --token-file " + path, Err: err}
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", sdk.Errorf(sdk.CodeUsage, "serve", "--token-file %s is empty", path)
	}
	if err := service.CheckToken(token); err != nil {
		if e := (*sdk.Error)(nil); errors.As(err, &e) {
			e.Detail = "--token-file " + path + ": " + e.Detail
		}
		return "", err
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o044 != 0 {
		fmt.Fprintf(warn, "logbook serve: warning: --token-file %s is readable by its group or others (mode %04o); anyone who can read it can call this server: chmod 600 %s\n", path, fi.Mode().Perm(), path)
	}
	return token, nil
}
