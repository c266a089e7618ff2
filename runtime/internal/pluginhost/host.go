package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// BundledArg is the first argument of a bundled plugin's process, the
// plugin's name the second: the host runs `<Executable> plugin <name>`.
const BundledArg = "plugin"

// Spec says how to run one plugin.
type Spec struct {
	// Name is the plugin's name in the configuration; GetInfo must report it.
	Name string
	// Command runs a third-party plugin; "" runs the bundled plugin Name as
	// `<Executable> plugin <Name>`.
	Command string
	// Args are extra arguments for Command.
	Args []string
	// SHA256 is the hex digest the binary must have; "" skips the check.
	SHA256 string
	// Config is the plugin block's config as a JSON object; nil means "{}".
	Config []byte
}

// Options configure a Host. Zero values take the defaults named below.
type Options struct {
	// Executable is the logbook binary that bundled plugins re-exec;
	// default os.Executable().
	Executable string
	// InsecureNoMTLS turns go-plugin's AutoMTLS off (tests only); default
	// false, i.e. AutoMTLS on.
	InsecureNoMTLS bool
	// StartTimeout bounds launch and handshake; default 10 s.
	StartTimeout time.Duration
	// RPCMaxBytes is the gRPC message limit; default sdk.DefaultRPCMaxBytes.
	RPCMaxBytes int
	// RestartMin and RestartMax bound the restart backoff; default 100 ms and 10 s.
	RestartMin, RestartMax time.Duration
	// Logger receives the host's and, named per plugin, the plugins' logs;
	// default a null logger.
	Logger hclog.Logger
}

// Host launches and supervises plugins. Safe for concurrent use.
type Host struct {
	opts    Options
	mu      sync.Mutex
	plugins []*Plugin
	closed  bool
}

// New returns a Host.
func New(opts Options) (*Host, error) {
	if opts.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("pluginhost: locating the logbook binary for bundled plugins: %w", err)
		}
		opts.Executable = exe
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 10 * time.Second
	}
	if opts.RPCMaxBytes == 0 {
		opts.RPCMaxBytes = sdk.DefaultRPCMaxBytes
	}
	if opts.RestartMin == 0 {
		opts.RestartMin = 100 * time.Millisecond
	}
	if opts.RestartMax == 0 {
		opts.RestartMax = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Host{opts: opts}, nil
}

// Start launches a plugin, completes the handshake, checks GetInfo against
// the spec, configures it and starts supervising it.
func (h *Host) Start(ctx context.Context, spec Spec) (*Plugin, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, unavailable(spec.Name, "the plugin host is closed", nil)
	}
	h.mu.Unlock()
	p := &Plugin{h: h, spec: spec, log: h.opts.Logger.Named(spec.Name), stop: make(chan struct{}), down: make(chan struct{}, 1), done: make(chan struct{})}
	c, err := p.launch(ctx)
	if err != nil {
		return nil, err
	}
	p.cur = c
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		c.client.Kill()
		return nil, unavailable(spec.Name, "the plugin host is closed", nil)
	}
	h.plugins = append(h.plugins, p)
	h.mu.Unlock()
	go p.supervise()
	return p, nil
}

// Close stops every plugin (the store flushes and closes its handles first).
func (h *Host) Close() {
	h.mu.Lock()
	h.closed = true
	ps := h.plugins
	h.plugins = nil
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(p.Stop)
	}
	wg.Wait()
}

// conn is one running plugin process.
type conn struct {
	client *plugin.Client
	rpc    *pluginrpc.Client
	info   sdk.Info
	kinds  map[sdk.Kind]any // dispensed adapters
}

// Plugin is one supervised plugin.
type Plugin struct {
	h    *Host
	spec Spec
	log  hclog.Logger

	mu       sync.RWMutex
	cur      *conn // nil while restarting
	restarts int

	stop chan struct{}
	down chan struct{} // a call saw the plugin unavailable
	done chan struct{}
}

// launch starts the process and returns a configured connection.
func (p *Plugin) launch(ctx context.Context) (*conn, error) {
	h, spec := p.h, p.spec
	var cmd *exec.Cmd
	path := spec.Command
	if path == "" {
		path = h.opts.Executable
		cmd = exec.Command(path, BundledArg, spec.Name)
	} else {
		cmd = exec.Command(path, spec.Args...)
	}
	setParentDeathSignal(cmd)
	// The plugin serves the host's RPC limit: the process's environment
	// is the host's with that one variable set (last, so it wins).
	cmd.Env = append(os.Environ(), sdk.RPCMaxBytesEnv+"="+strconv.Itoa(h.opts.RPCMaxBytes))
	cfg := pluginrpc.NewClientConfig(h.opts.RPCMaxBytes)
	cfg.Cmd = cmd
	cfg.SkipHostEnv = true
	cfg.AutoMTLS = !h.opts.InsecureNoMTLS
	cfg.StartTimeout = h.opts.StartTimeout
	cfg.Logger = p.log
	cfg.Stderr = io.Discard // plugin logs arrive through go-plugin's structured log stream
	if spec.SHA256 != "" {
		sum, err := hex.DecodeString(spec.SHA256)
		if err != nil || len(sum) != sha256.Size {
			return nil, sdk.Errorf(sdk.CodeConfigInvalid, "plugin", "plugin %q: sha256 %q is not 64 hex digits", spec.Name, spec.SHA256)
		}
		cfg.SecureConfig = &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()}
	}
	client := plugin.NewClient(cfg)
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, p.startError(path, err)
	}
	c := &conn{client: client, rpc: pluginrpc.NewClient(rpc), kinds: map[sdk.Kind]any{}}
	ictx, cancel := context.WithTimeout(ctx, h.opts.StartTimeout)
	defer cancel()
	info, err := c.rpc.Info(ictx)
	if err == nil && info.Name != spec.Name {
		err = sdk.Errorf(sdk.CodeConfigInvalid, "plugin", "plugin %q reports the name %q; the config block must use the plugin's own name", spec.Name, info.Name)
	}
	if err == nil {
		cfgJSON := spec.Config
		if cfgJSON == nil {
			cfgJSON = []byte("{}")
		}
		err = c.rpc.Configure(ictx, cfgJSON)
	}
	if err != nil {
		client.Kill()
		return nil, err
	}
	c.info = info
	for _, k := range info.Kinds {
		var a any
		var derr error
		switch k {
		case sdk.KindPersistence:
			a, derr = c.rpc.Persistence()
		case sdk.KindSummarizer:
			a, derr = c.rpc.Summarizer()
		case sdk.KindPruner:
			a, derr = c.rpc.Pruner()
		case sdk.KindProjection:
			a, derr = c.rpc.Projector()
		}
		if derr != nil {
			client.Kill()
			return nil, derr
		}
		c.kinds[k] = a
	}
	return c, nil
}

// startError turns go-plugin's start failures into errors that say how to
// fix them.
func (p *Plugin) startError(path string, err error) error {
	name := p.spec.Name
	switch msg := err.Error(); {
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		actual := "unreadable"
		if b, rerr := os.ReadFile(path); rerr == nil {
			s := sha256.Sum256(b)
			actual = hex.EncodeToString(s[:])
		}
		return sdk.Errorf(sdk.CodeConfigInvalid, "plugin", "plugin %q refused before it ran: %s has sha256 %s, the config expects %s; update sha256 or reinstall the plugin", name, path, actual, p.spec.SHA256)
	case strings.Contains(msg, "incompatible API version"):
		return unavailable(name, fmt.Sprintf("%s; this logbook speaks plugin protocol version %d — rebuild the plugin against this logbook's sdk", msg, sdk.ProtocolVersion), err)
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return unavailable(name, fmt.Sprintf("%s did not complete the plugin handshake within %v; is it a logbook plugin built with pluginrpc.Serve?", path, p.h.opts.StartTimeout), err)
	default:
		return unavailable(name, "starting "+path+" failed", err)
	}
}

func unavailable(name, detail string, cause error) error {
	return &sdk.Error{Code: sdk.CodePluginUnavailable, Op: "plugin", Detail: "plugin " + name + ": " + detail, Err: cause}
}

// Info returns what the plugin reported at its last start.
func (p *Plugin) Info() sdk.Info {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return sdk.Info{Name: p.spec.Name}
	}
	return p.cur.info
}

// Restarts counts the restarts since Start.
func (p *Plugin) Restarts() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.restarts
}

// Pid returns the plugin process id, or 0 while it is restarting.
func (p *Plugin) Pid() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return 0
	}
	if rc := p.cur.client.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}

// Stop kills the plugin process and ends supervision; idempotent.
func (p *Plugin) Stop() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}

// current returns the live adapter of a kind, or PLUGIN_UNAVAILABLE.
func (p *Plugin) current(k sdk.Kind) (any, error) {
	p.mu.RLock()
	c := p.cur
	p.mu.RUnlock()
	if c == nil || c.client.Exited() {
		p.notifyDown()
		return nil, unavailable(p.spec.Name, "the plugin process is restarting", nil)
	}
	a, ok := c.kinds[k]
	if !ok {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "plugin", "plugin %q does not serve the %s kind", p.spec.Name, k)
	}
	return a, nil
}

func (p *Plugin) notifyDown() {
	select {
	case p.down <- struct{}{}:
	default:
	}
}

// observe notes a call's error: an unavailable plugin wakes the supervisor.
func (p *Plugin) observe(err error) error {
	if errors.Is(err, sdk.CodePluginUnavailable) {
		p.notifyDown()
	}
	return err
}

// supervise restarts the process whenever it dies, with exponential backoff.
func (p *Plugin) supervise() {
	defer close(p.done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	backoff := p.h.opts.RestartMin
	for {
		select {
		case <-p.stop:
			p.mu.Lock()
			c := p.cur
			p.cur = nil
			p.mu.Unlock()
			if c != nil {
				c.client.Kill()
			}
			return
		case <-tick.C:
		case <-p.down:
		}
		p.mu.RLock()
		c := p.cur
		p.mu.RUnlock()
		if c != nil && !c.client.Exited() {
			continue
		}
		if c != nil {
			p.log.Warn("plugin process exited; restarting")
			c.client.Kill()
			p.mu.Lock()
			p.cur = nil
			p.mu.Unlock()
		}
		ctx, cancel := context.WithTimeout(context.Background(), p.h.opts.StartTimeout)
		nc, err := p.launch(ctx)
		cancel()
		if err != nil {
			p.log.Error("plugin restart failed", "error", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-p.stop:
				continue
			}
			backoff = min(2*backoff, p.h.opts.RestartMax)
			p.notifyDown()
			continue
		}
		backoff = p.h.opts.RestartMin
		p.mu.Lock()
		p.cur = nc
		p.restarts++
		p.mu.Unlock()
		p.log.Info("plugin restarted", "restarts", p.Restarts())
	}
}
