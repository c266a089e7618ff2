package pluginrpc

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/go-plugin"
	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// Client is the host's view of one connected plugin process: typed
// accessors over a go-plugin ClientProtocol. It is safe for concurrent use.
// Each accessor dispenses its kind once and returns the same adapter on
// later calls. Dispensing a kind the plugin does not serve succeeds, but its
// calls fail; check Info().Kinds first.
type Client struct {
	rpc plugin.ClientProtocol

	mu        sync.Mutex
	dispensed map[string]any
}

// NewClient wraps a connected go-plugin client, as returned by
// (*plugin.Client).Client() for a config built with NewClientConfig.
func NewClient(rpc plugin.ClientProtocol) *Client {
	return &Client{rpc: rpc, dispensed: map[string]any{}}
}

// Info asks the plugin to describe itself (PluginInfo.GetInfo).
func (c *Client) Info(ctx context.Context) (sdk.Info, error) {
	ic, err := dispense[*infoClient](c, InfoPluginName)
	if err != nil {
		return sdk.Info{}, err
	}
	return ic.getInfo(ctx)
}

// Configure passes the plugin block's config, a JSON object ("{}" when
// empty), to the plugin (PluginInfo.Configure). The host calls it once,
// after Info and before any other call.
func (c *Client) Configure(ctx context.Context, config []byte) error {
	ic, err := dispense[*infoClient](c, InfoPluginName)
	if err != nil {
		return err
	}
	_, err = ic.rpc.Configure(ctx, &logbookv1.ConfigureRequest{ConfigJson: config})
	return fromStatus(ctx, "info.Configure", err)
}

// Persistence returns the plugin's backend. Append keeps one long-lived
// gRPC stream per handle and splits batches larger than RPCMaxBytes into
// consecutive compare-and-set appends; see the package documentation. The
// value also implements sdk.SalvageReader and sdk.PrefixCopier; a plugin
// without the capability answers those calls with CONFIG_INVALID, so check
// Info().Capabilities for sdk.CapabilityCopyPrefix before relying on
// CopyPrefix (the host does). It is an sdk.FrameReader too,
// whose ReadFrames reports framed false for a plugin without the
// capability sdk.CapabilityReadFrames. It is an sdk.Tenancy as well,
// whose views a plugin without the capability sdk.CapabilityTenants
// answers with USAGE (and Tenants with CONFIG_INVALID).
func (c *Client) Persistence() (sdk.Persistence, error) {
	return dispense[*persistenceClient](c, string(sdk.KindPersistence))
}

// Summarizer returns the plugin's summarizer. The value also implements
// sdk.RangeSelector; a plugin without the "select-range" capability answers
// SelectRange with OK false.
func (c *Client) Summarizer() (sdk.Summarizer, error) {
	return dispense[*summarizerClient](c, string(sdk.KindSummarizer))
}

// Pruner returns the plugin's tool-result pruner.
func (c *Client) Pruner() (sdk.Pruner, error) {
	return dispense[*prunerClient](c, string(sdk.KindPruner))
}

// Projector returns the plugin's message projections.
func (c *Client) Projector() (sdk.Projector, error) {
	return dispense[*projectionClient](c, string(sdk.KindProjection))
}

// dispense returns the cached adapter of a plugin name, dispensing it first.
func dispense[T any](c *Client, name string) (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero T
	raw, ok := c.dispensed[name]
	if !ok {
		var err error
		raw, err = c.rpc.Dispense(name)
		if err != nil {
			return zero, &sdk.Error{Code: sdk.CodePluginUnavailable, Op: errOp,
				Detail: fmt.Sprintf("cannot dispense the %q plugin", name), Err: err}
		}
		c.dispensed[name] = raw
	}
	v, ok := raw.(T)
	if !ok {
		return zero, &sdk.Error{Code: sdk.CodePluginUnavailable, Op: errOp,
			Detail: fmt.Sprintf("the %q plugin dispensed %T; build the host's go-plugin config with pluginrpc.PluginSets", name, raw)}
	}
	return v, nil
}

type infoClient struct {
	rpc logbookv1.PluginInfoClient
}

func (c *infoClient) getInfo(ctx context.Context) (sdk.Info, error) {
	r, err := c.rpc.GetInfo(ctx, &logbookv1.GetInfoRequest{})
	if err != nil {
		return sdk.Info{}, fromStatus(ctx, "info.GetInfo", err)
	}
	info := sdk.Info{
		Name:         r.GetName(),
		Version:      r.GetVersion(),
		ConfigSchema: r.GetConfigSchema(),
		Capabilities: r.GetCapabilities(),
	}
	for _, k := range r.GetKinds() {
		info.Kinds = append(info.Kinds, sdk.Kind(k))
	}
	for _, v := range r.GetProtocolVersions() {
		info.ProtocolVersions = append(info.ProtocolVersions, int(v))
	}
	for _, d := range r.GetEventTypes() {
		info.EventTypes = append(info.EventTypes, sdk.EventTypeDecl{Type: d.GetType(), Ignorable: d.GetIgnorable()})
	}
	return info, nil
}

// Compile-time checks of the adapters.
var (
	_ sdk.Persistence   = (*persistenceClient)(nil)
	_ sdk.SalvageReader = (*persistenceClient)(nil)
	_ sdk.PrefixCopier  = (*persistenceClient)(nil)
	_ sdk.Summarizer    = (*summarizerClient)(nil)
	_ sdk.RangeSelector = (*summarizerClient)(nil)
	_ sdk.Pruner        = (*prunerClient)(nil)
	_ sdk.Projector     = (*projectionClient)(nil)
)
