// Package plugintest runs a logbook plugin inside a test and connects a host
// client to it through real go-plugin gRPC, so that plugin authors and the
// conformance suites test exactly what crosses the process boundary without
// building a binary.
package plugintest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// startTimeout bounds how long Connect waits for the in-process server.
const startTimeout = 30 * time.Second

// stopTimeout bounds how long the cleanup waits for the server to stop after
// the client asked it to, before it cancels it.
const stopTimeout = 10 * time.Second

// Connect serves cfg in this process, as pluginrpc.Serve would in a plugin
// process (go-plugin test mode: the same gRPC server, message limits and
// error mapping, over a local socket without TLS), and returns a host client
// connected to it with pluginrpc's host configuration for cfg.RPCMaxBytes.
// It fails tb when cfg is invalid or the server does not start. A test
// cleanup closes the connection and waits for the server to stop.
//
// A nil cfg.Logger is replaced by a logger on stderr at level Warn.
func Connect(tb testing.TB, cfg pluginrpc.ServeConfig) *pluginrpc.Client {
	tb.Helper()
	if cfg.Logger == nil {
		cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: cfg.Info.Name, Level: hclog.Warn, Output: os.Stderr})
	}
	sc, err := cfg.GoPluginServeConfig()
	if err != nil {
		tb.Fatalf("plugintest: %v", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	sc.Test = &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: closed}
	go plugin.Serve(sc)

	var rc *plugin.ReattachConfig
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case rc = <-reattach:
	case <-closed:
		stop()
		tb.Fatalf("plugintest: plugin %q stopped before serving; see its log", cfg.Info.Name)
	case <-timer.C:
		stop()
		<-closed
		tb.Fatalf("plugintest: plugin %q did not start within %v", cfg.Info.Name, startTimeout)
	}
	// The server runs in this process: wait on it rather than on our own pid
	// (go-plugin's default reattach runner polls the pid forever).
	rc.ReattachFunc = func() (runner.AttachedRunner, error) {
		return &inProcess{stop: stop, closed: closed}, nil
	}

	cc := pluginrpc.NewClientConfig(cfg.RPCMaxBytes)
	cc.AutoMTLS = false // go-plugin cannot reattach with AutoMTLS
	cc.Reattach = rc
	// On reattach go-plugin dispenses from Plugins, not VersionedPlugins.
	cc.Plugins = cc.VersionedPlugins[sdk.ProtocolVersion]
	cc.Logger = cfg.Logger.Named("host")
	client := plugin.NewClient(cc)
	rpc, err := client.Client()
	if err != nil {
		stop()
		<-closed
		tb.Fatalf("plugintest: connecting to plugin %q: %v", cfg.Info.Name, err)
	}
	tb.Cleanup(func() {
		// Closing the client asks the server to stop (go-plugin's controller
		// Shutdown), which ends Serve. Cancelling Serve's context as well
		// would stop the server twice concurrently, a data race inside
		// go-plugin, so it is only the fallback.
		_ = rpc.Close()
		client.Kill()
		t := time.NewTimer(stopTimeout)
		defer t.Stop()
		select {
		case <-closed:
		case <-t.C:
			stop()
			<-closed
		}
		stop()
	})
	return pluginrpc.NewClient(rpc)
}

// inProcess is the go-plugin runner of a server running in this process.
type inProcess struct {
	stop   context.CancelFunc
	closed <-chan struct{}
}

func (p *inProcess) Wait(context.Context) error { <-p.closed; return nil }

func (p *inProcess) Kill(context.Context) error { p.stop(); <-p.closed; return nil }

func (p *inProcess) ID() string { return "in-process" }

func (p *inProcess) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (p *inProcess) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// ConfiguredPersistence serves cfg in this process as Connect does,
// configures the plugin with config (its block's JSON, through the
// Configure call, as the host configures a plugin), and returns its
// persistence adapter. It fails tb when any step fails.
func ConfiguredPersistence(tb testing.TB, cfg pluginrpc.ServeConfig, config []byte) sdk.Persistence {
	tb.Helper()
	c := Connect(tb, cfg)
	if err := c.Configure(context.Background(), config); err != nil {
		tb.Fatalf("plugintest: Configure: %v", err)
	}
	p, err := c.Persistence()
	if err != nil {
		tb.Fatalf("plugintest: dispensing the persistence adapter: %v", err)
	}
	return p
}

// Launch starts cmd as a plugin process the way logbook's host starts one
// (go-plugin over gRPC, the handshake, automatic mutual TLS, pluginrpc's
// message limits for the default RPCMaxBytes), configures it with config
// (its block's JSON; nil for an empty block) and returns the connected
// client. It fails tb when the process does not start or does not speak
// the protocol; the plugin's refusal of config is returned as the error.
// A test cleanup stops the process; cmd.Process is the running plugin
// once Launch returns.
//
// Use it to test a plugin binary as it will run: launch the built binary
// and run sdk/persistencetest over the client's Persistence.
func Launch(tb testing.TB, cmd *exec.Cmd, config []byte) (*pluginrpc.Client, error) {
	tb.Helper()
	cc := pluginrpc.NewClientConfig(0)
	cc.Cmd = cmd
	cc.Logger = hclog.New(&hclog.LoggerOptions{Name: "plugintest", Level: hclog.Warn, Output: os.Stderr})
	cc.StartTimeout = startTimeout
	client := plugin.NewClient(cc)
	tb.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		tb.Fatalf("plugintest: starting %s: %v", cmd.Path, err)
	}
	c := pluginrpc.NewClient(rpc)
	if config == nil {
		config = []byte("{}")
	}
	return c, c.Configure(context.Background(), config)
}

// LaunchedPersistence is Launch, then the persistence adapter of the
// plugin; it fails tb when the plugin refuses config or serves no
// persistence.
func LaunchedPersistence(tb testing.TB, cmd *exec.Cmd, config []byte) sdk.Persistence {
	tb.Helper()
	c, err := Launch(tb, cmd, config)
	if err != nil {
		tb.Fatalf("plugintest: Configure %s: %v", cmd.Path, err)
	}
	p, err := c.Persistence()
	if err != nil {
		tb.Fatalf("plugintest: dispensing the persistence adapter of %s: %v", cmd.Path, err)
	}
	return p
}
