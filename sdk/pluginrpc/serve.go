package pluginrpc

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/seed-e5e476df/logbook/sdk"
	"google.golang.org/grpc"
	"google.golang.org/grpc/experimental"
)

// ServeConfig is what a plugin serves: its Info and one implementation per
// kind it declares in Info.Kinds.
type ServeConfig struct {
	// Info describes the plugin; GetInfo returns it. Info.Name must match
	// [a-z0-9][a-z0-9._-]{0,63} and Info.Kinds must list exactly the kinds
	// whose implementation is set below. Empty Info.ProtocolVersions is served
	// as [sdk.ProtocolVersion]; a non-empty list may name only that version.
	Info sdk.Info

	// The implementations, one per served kind; nil for kinds not served.
	// A Summarizer that also implements sdk.RangeSelector answers
	// SelectRange; others answer "no choice". Info.Capabilities may list
	// "select-range" only when it does, and sdk.CapabilityCopyPrefix only
	// when Persistence implements sdk.PrefixCopier (which the host then uses
	// to fork), and sdk.CapabilityWatch only when it implements sdk.Watcher
	// (which the host then uses to follow sessions other hosts write), and
	// sdk.CapabilityDelete only when it implements sdk.Deleter, and
	// sdk.CapabilityImport only when it implements sdk.Importer, and
	// sdk.CapabilityTenants only when it implements sdk.Tenancy (whose
	// views then serve the calls that name a tenant).
	Persistence sdk.Persistence
	Summarizer  sdk.Summarizer
	Pruner      sdk.Pruner
	Projector   sdk.Projector

	// Configurable receives the plugin block's config (Configure). Optional:
	// when nil the plugin accepts only an empty config object and refuses any
	// other with CONFIG_INVALID.
	Configurable sdk.Configurable

	// RPCMaxBytes is the largest request or reply the plugin sends or
	// expects, without the 1 MiB of headroom added to the gRPC limits.
	// 0 means sdk.DefaultRPCMaxBytes; otherwise at least 4 KiB. It must
	// equal the host's setting: a process the host started finds that in
	// sdk.RPCMaxBytesEnv, which replaces this field.
	RPCMaxBytes int

	// Logger receives the plugin's and go-plugin's logs. nil means an hclog
	// JSON logger on stderr named after Info.Name at level Trace; go-plugin
	// forwards those lines to the host's logger, which filters them.
	Logger hclog.Logger
}

// Serve serves cfg as a go-plugin plugin process: it is what a plugin's main
// calls, and it returns when the host closes the connection. When cfg is
// invalid (see Validate), or the process was not started by a logbook host,
// it prints why on stderr and exits with status 1.
func Serve(cfg ServeConfig) {
	pc, err := cfg.GoPluginServeConfig()
	if err != nil {
		fmt.Fprintf(os.Stderr, "logbook plugin: %v\nThis is a bug in the plugin; report it to its author.\n", err)
		os.Exit(1)
	}
	plugin.Serve(pc)
}

// GoPluginServeConfig validates cfg and returns the go-plugin configuration
// Serve runs (with RPCMaxBytes from sdk.RPCMaxBytesEnv when the host set
// it): handshake, VersionedPlugins {sdk.ProtocolVersion: the served
// kinds plus InfoPluginName}, a gRPC server limited to RPCMaxBytes plus
// 1 MiB with the same codec, windows and buffer pool as GRPCDialOptions,
// and the logger. It is exported for tests and debuggers that run a
// plugin in process (set its Test field and call plugin.Serve); plugin mains
// call Serve.
func (c ServeConfig) GoPluginServeConfig() (*plugin.ServeConfig, error) {
	if v, ok := os.LookupEnv(sdk.RPCMaxBytesEnv); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, sdk.Errorf(sdk.CodeConfigInvalid, errOp, "%s = %q from the host is not a positive byte count", sdk.RPCMaxBytesEnv, v)
		}
		c.RPCMaxBytes = n
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	info := c.Info
	if len(info.ProtocolVersions) == 0 {
		info.ProtocolVersions = []int{sdk.ProtocolVersion}
	}
	maxBytes := rpcLimit(c.RPCMaxBytes)
	set := plugin.PluginSet{InfoPluginName: &infoPlugin{srv: &infoServer{info: info, configurable: c.Configurable}}}
	if c.Persistence != nil {
		set[string(sdk.KindPersistence)] = &persistencePlugin{impl: c.Persistence, maxBytes: maxBytes}
	}
	if c.Summarizer != nil {
		set[string(sdk.KindSummarizer)] = &summarizerPlugin{impl: c.Summarizer}
	}
	if c.Pruner != nil {
		set[string(sdk.KindPruner)] = &prunerPlugin{impl: c.Pruner}
	}
	if c.Projector != nil {
		set[string(sdk.KindProjection)] = &projectionPlugin{impl: c.Projector}
	}
	logger := c.Logger
	if logger == nil {
		logger = hclog.New(&hclog.LoggerOptions{
			Name:       info.Name,
			Level:      hclog.Trace,
			Output:     os.Stderr,
			JSONFormat: true,
		})
	}
	limit := grpcLimit(maxBytes)
	return &plugin.ServeConfig{
		HandshakeConfig:  Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{sdk.ProtocolVersion: set},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, grpc.MaxRecvMsgSize(limit), grpc.MaxSendMsgSize(limit),
				grpc.InitialWindowSize(flowWindow), grpc.InitialConnWindowSize(flowWindow), grpc.ForceServerCodecV2(newBatchCodec()), experimental.BufferPool(frameBuffers))
			return grpc.NewServer(opts...)
		},
		Logger: logger,
	}, nil
}

var pluginName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Validate checks cfg as Serve does and returns a CONFIG_INVALID *sdk.Error
// naming the first violation: the plugin name, Kinds that differ from the
// implementations given, protocol versions this build does not serve, empty
// or duplicate event types, "select-range" without an sdk.RangeSelector, or
// an RPCMaxBytes out of range.
func (c ServeConfig) Validate() error {
	invalid := func(format string, args ...any) error {
		return sdk.Errorf(sdk.CodeConfigInvalid, errOp, format, args...)
	}
	if !pluginName.MatchString(c.Info.Name) {
		return invalid("plugin name %s must match [a-z0-9][a-z0-9._-]{0,63}", strconv.Quote(c.Info.Name))
	}
	impls := map[sdk.Kind]bool{
		sdk.KindPersistence: c.Persistence != nil,
		sdk.KindSummarizer:  c.Summarizer != nil,
		sdk.KindPruner:      c.Pruner != nil,
		sdk.KindProjection:  c.Projector != nil,
	}
	if len(c.Info.Kinds) == 0 {
		return invalid("plugin %q declares no kinds; Info.Kinds must list the kinds served", c.Info.Name)
	}
	seen := map[sdk.Kind]bool{}
	for _, k := range c.Info.Kinds {
		has, known := impls[k]
		switch {
		case !known:
			return invalid("plugin %q declares unknown kind %q; kinds are persistence, summarizer, pruner, projection", c.Info.Name, k)
		case seen[k]:
			return invalid("plugin %q declares kind %q twice", c.Info.Name, k)
		case !has:
			return invalid("plugin %q declares kind %q but ServeConfig has no implementation for it", c.Info.Name, k)
		}
		seen[k] = true
	}
	for _, k := range []sdk.Kind{sdk.KindPersistence, sdk.KindSummarizer, sdk.KindPruner, sdk.KindProjection} {
		if impls[k] && !seen[k] {
			return invalid("plugin %q has a %s implementation but Info.Kinds does not declare %q", c.Info.Name, k, k)
		}
	}
	for _, v := range c.Info.ProtocolVersions {
		if v != sdk.ProtocolVersion {
			return invalid("plugin %q declares protocol version %d; this SDK serves only version %d", c.Info.Name, v, sdk.ProtocolVersion)
		}
	}
	types := map[string]bool{}
	for i, d := range c.Info.EventTypes {
		if d.Type == "" {
			return invalid("plugin %q declares an empty event type at index %d", c.Info.Name, i)
		}
		if types[d.Type] {
			return invalid("plugin %q declares event type %q twice", c.Info.Name, d.Type)
		}
		types[d.Type] = true
	}
	if slices.Contains(c.Info.Capabilities, capabilitySelectRange) {
		if _, ok := c.Summarizer.(sdk.RangeSelector); !ok {
			return invalid("plugin %q declares capability %q but its Summarizer does not implement sdk.RangeSelector", c.Info.Name, capabilitySelectRange)
		}
	}
	if slices.Contains(c.Info.Capabilities, sdk.CapabilityCopyPrefix) {
		if _, ok := c.Persistence.(sdk.PrefixCopier); !ok {
			return invalid("plugin %q declares capability %q but its Persistence does not implement sdk.PrefixCopier", c.Info.Name, sdk.CapabilityCopyPrefix)
		}
	}
	if slices.Contains(c.Info.Capabilities, sdk.CapabilityReadFrames) {
		if _, ok := c.Persistence.(sdk.FrameReader); !ok {
			return invalid("plugin %q declares capability %q but its Persistence does not implement sdk.FrameReader", c.Info.Name, sdk.CapabilityReadFrames)
		}
	}
	if slices.Contains(c.Info.Capabilities, sdk.CapabilityDelete) {
		if _, ok := c.Persistence.(sdk.Deleter); !ok {
			return invalid("plugin %q declares capability %q but its Persistence does not implement sdk.Deleter", c.Info.Name, sdk.CapabilityDelete)
		}
	}
	if slices.Contains(c.Info.Capabilities, sdk.CapabilityImport) {
		if _, ok := c.Persistence.(sdk.Importer); !ok {
			return invalid("plugin %q declares capability %q but its Persistence does not implement sdk.Importer", c.Info.Name, sdk.CapabilityImport)
		}
	}
	if slices.Contains(c.Info.Capabilities, sdk.CapabilityWatch) {
		if _, ok := c.Persistence.(sdk.Watcher); !ok {
			return invalid("plugin %q declares capability %q but its Persistence does not implement sdk.Watcher", c.Info.Name, sdk.CapabilityWatch)
		}
	}
	if slices.Contains(c.Info.Capabilities, sdk.CapabilityTenants) {
		if _, ok := c.Persistence.(sdk.Tenancy); !ok {
			return invalid("plugin %q declares capability %q but its Persistence does not implement sdk.Tenancy", c.Info.Name, sdk.CapabilityTenants)
		}
	}
	if c.RPCMaxBytes != 0 && (c.RPCMaxBytes < minRPCMaxBytes || c.RPCMaxBytes > sdk.MaxRPCMaxBytes) {
		return invalid("RPCMaxBytes = %d must be 0 (default %d) or in %d … %d", c.RPCMaxBytes, sdk.DefaultRPCMaxBytes, minRPCMaxBytes, sdk.MaxRPCMaxBytes)
	}
	return nil
}

// capabilitySelectRange is the Info capability of a summarizer that chooses
// its own span (sdk.RangeSelector).
const capabilitySelectRange = "select-range"
