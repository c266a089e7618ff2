package pluginrpc

import (
	"context"
	"fmt"
	"math"

	"github.com/hashicorp/go-plugin"
	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/experimental"
)

// InfoPluginName is the go-plugin plugin name of the PluginInfo service that
// every plugin process serves besides its kinds, whose plugin names are the
// sdk.Kind strings.
const InfoPluginName = "info"

// grpcHeadroom is added to RPCMaxBytes for the gRPC message limits, so that a
// request of RPCMaxBytes plus its framing always passes (docs/architecture.md).
const grpcHeadroom = 1 << 20

// flowWindow is the HTTP/2 flow-control window of plugin connections: write-
// behind batches are megabytes, and gRPC's default 64 KiB window would make
// every batch wait for many window updates.
const flowWindow = 16 << 20

// readChunkBytes is the most event bytes (with framing) a ReadChunk
// carries, unless RPCMaxBytes is smaller: chunks of about a MiB keep a long
// Read streaming, so the host parses and folds one chunk while the next is
// on its way, and the first arrives soon after the Read starts.
const readChunkBytes = 1 << 20

// minRPCMaxBytes is the smallest RPCMaxBytes accepted.
const minRPCMaxBytes = 4 << 10

// Handshake returns the go-plugin handshake of docs/architecture.md: the magic cookie
// and sdk.ProtocolVersion. Host and plugin must use the same.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  sdk.ProtocolVersion,
		MagicCookieKey:   sdk.MagicCookieKey,
		MagicCookieValue: sdk.MagicCookieValue,
	}
}

// PluginSets returns the go-plugin VersionedPlugins a host puts in its
// plugin.ClientConfig: for sdk.ProtocolVersion, one entry per kind plus
// InfoPluginName. rpcMaxBytes is the host's RPCMaxBytes (0 means
// sdk.DefaultRPCMaxBytes); the Persistence adapter splits Append batches to
// stay under it. The map is fresh on every call.
func PluginSets(rpcMaxBytes int) map[int]plugin.PluginSet {
	n := rpcLimit(rpcMaxBytes)
	return map[int]plugin.PluginSet{
		sdk.ProtocolVersion: {
			InfoPluginName:              &infoPlugin{},
			string(sdk.KindPersistence): &persistencePlugin{maxBytes: n},
			string(sdk.KindSummarizer):  &summarizerPlugin{},
			string(sdk.KindPruner):      &prunerPlugin{},
			string(sdk.KindProjection):  &projectionPlugin{},
		},
	}
}

// GRPCDialOptions returns the dial options a host passes in
// plugin.ClientConfig.GRPCDialOptions: call send and receive limits of
// rpcMaxBytes (0 means sdk.DefaultRPCMaxBytes) plus 1 MiB of headroom, the
// batch codec (batchCodec), flow-control windows of flowWindow and the
// non-clearing buffer pool (framePool).
func GRPCDialOptions(rpcMaxBytes int) []grpc.DialOption {
	n := grpcLimit(rpcLimit(rpcMaxBytes))
	return []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(n), grpc.MaxCallSendMsgSize(n), grpc.ForceCodecV2(newBatchCodec())),
		grpc.WithInitialWindowSize(flowWindow), grpc.WithInitialConnWindowSize(flowWindow), experimental.WithBufferPool(frameBuffers)}
}

// NewClientConfig returns a go-plugin client configuration with every field
// the logbook protocol fixes: Handshake, PluginSets(rpcMaxBytes),
// AllowedProtocols gRPC only, AutoMTLS on and GRPCDialOptions(rpcMaxBytes).
// The host sets the rest (Cmd, SecureConfig, Logger, StartTimeout, …) before
// passing it to plugin.NewClient; for a Reattach config it must turn AutoMTLS
// off, as go-plugin requires.
func NewClientConfig(rpcMaxBytes int) *plugin.ClientConfig {
	return &plugin.ClientConfig{
		HandshakeConfig:  Handshake(),
		VersionedPlugins: PluginSets(rpcMaxBytes),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		GRPCDialOptions:  GRPCDialOptions(rpcMaxBytes),
	}
}

// rpcLimit resolves a configured RPCMaxBytes (0 = default).
func rpcLimit(n int) int {
	if n <= 0 {
		return sdk.DefaultRPCMaxBytes
	}
	return n
}

// grpcLimit is the gRPC message limit for an RPCMaxBytes.
func grpcLimit(n int) int {
	if n > math.MaxInt32-grpcHeadroom {
		return math.MaxInt32
	}
	return n + grpcHeadroom
}

// The go-plugin plugins. On the plugin side impl is set and GRPCServer
// registers the service; on the host side impl is nil and GRPCClient returns
// the adapter. go-plugin's in-process test connection uses one set for both.

type infoPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	srv *infoServer
}

func (p *infoPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.srv == nil {
		return fmt.Errorf("pluginrpc: the %q plugin has nothing to serve", InfoPluginName)
	}
	logbookv1.RegisterPluginInfoServer(s, p.srv)
	return nil
}

func (p *infoPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return &infoClient{rpc: logbookv1.NewPluginInfoClient(cc)}, nil
}

type persistencePlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl     sdk.Persistence
	maxBytes int
}

func (p *persistencePlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.impl == nil {
		return fmt.Errorf("pluginrpc: no %s implementation to serve", sdk.KindPersistence)
	}
	logbookv1.RegisterPersistenceServer(s, &persistenceServer{impl: p.impl, chunkBytes: min(readChunkBytes, rpcLimit(p.maxBytes)/2)})
	return nil
}

func (p *persistencePlugin) GRPCClient(done context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return newPersistenceClient(done, logbookv1.NewPersistenceClient(cc), rpcLimit(p.maxBytes)), nil
}

type summarizerPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl sdk.Summarizer
}

func (p *summarizerPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.impl == nil {
		return fmt.Errorf("pluginrpc: no %s implementation to serve", sdk.KindSummarizer)
	}
	logbookv1.RegisterSummarizerServer(s, &summarizerServer{impl: p.impl})
	return nil
}

func (p *summarizerPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return &summarizerClient{rpc: logbookv1.NewSummarizerClient(cc)}, nil
}

type prunerPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl sdk.Pruner
}

func (p *prunerPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.impl == nil {
		return fmt.Errorf("pluginrpc: no %s implementation to serve", sdk.KindPruner)
	}
	logbookv1.RegisterPrunerServer(s, &prunerServer{impl: p.impl})
	return nil
}

func (p *prunerPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return &prunerClient{rpc: logbookv1.NewPrunerClient(cc)}, nil
}

type projectionPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl sdk.Projector
}

func (p *projectionPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.impl == nil {
		return fmt.Errorf("pluginrpc: no %s implementation to serve", sdk.KindProjection)
	}
	logbookv1.RegisterProjectionServer(s, &projectionServer{impl: p.impl})
	return nil
}

func (p *projectionPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return &projectionClient{rpc: logbookv1.NewProjectionClient(cc)}, nil
}
