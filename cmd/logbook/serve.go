package main

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/runtime/server"
	"github.com/seed-e5e476df/logbook/sdk"
)

func init() { commands = append(commands, newServeCmd) }

// newServeCmd is `logbook serve`: the runtime daemon (runtime/server) until
// SIGINT or SIGTERM, which end the command's context (see run), then a
// graceful shutdown that flushes and releases every session it held.
func newServeCmd(a *app) *cobra.Command {
	var addr, tokenFile string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the runtime daemon: the logbook.v1.Sessions API over gRPC and JSON over HTTP",
		Long: "serve runs the runtime daemon: the logbook.v1.Sessions API (sdk/proto/logbook/v1/sessions.proto)\n" +
			"over gRPC (with server reflection), gRPC-Web and Connect's JSON over HTTP, on one port.\n" +
			"Envelopes, event data, messages and headers travel as their canonical JSON text in string\n" +
			"fields, so with JSON over HTTP each is a JSON string holding that text, byte for byte:\n\n" +
			"  curl -H 'Content-Type: application/json' -d '{\"sessionId\":\"s1\"}' \\\n" +
			"    http://127.0.0.1:7420/logbook.v1.Sessions/Inspect\n\n" +
			"It listens on 127.0.0.1:7420 by default and says where on stderr. With --token-file every\n" +
			"request needs \"Authorization: Bearer <token>\"; an address that is not loopback requires it.\n" +
			"SIGINT or SIGTERM shut it down gracefully: every session it holds is flushed and released.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			token, err := readToken(tokenFile)
			if err != nil {
				return err
			}
			if err := server.CheckAddr(addr, token); err != nil {
				return err
			}
			cfg, err := a.config()
			if err != nil {
				return err
			}
			e, err := a.engine(ctx)
			if err != nil {
				return err
			}
			srv, err := server.New(e, server.Options{
				Addr:            addr,
				Token:           token,
				MaxRequestBytes: sdk.MaxEventMessageBytes(int(cfg.MaxEventBytes)),
				Logger:          a.logger().Named("serve"),
			})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return &sdk.Error{Code: sdk.CodeIOError, Op: "serve", Seq: -1, Index: -1, Detail: "cannot listen on " + addr, Err: err}
			}
			fmt.Fprintf(a.stderr, "logbook serve: listening on %s\n", ln.Addr())
			return srv.Serve(ctx, ln)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", server.DefaultAddr, "listen `ADDRESS` (host:port); an address that is not loopback requires --token-file")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "`FILE` holding the bearer token every request must carry")
	return cmd
}

// readToken reads the bearer token from a --token-file ("" = no token); the
// surrounding whitespace (a trailing newline) is not part of it.
func readToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", &sdk.Error{Code: sdk.CodeUsage, Op: "serve", Seq: -1, Index: -1, Detail: "cannot read --token-file " + path, Err: err}
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", sdk.Errorf(sdk.CodeUsage, "serve", "--token-file %s is empty", path)
	}
	return token, nil
}
