package pluginhost

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
)

// adapter returns the plugin's current adapter of kind k as T.
func adapter[T any](p *Plugin, k sdk.Kind) (T, error) {
	var zero T
	a, err := p.current(k)
	if err != nil {
		return zero, err
	}
	return a.(T), nil
}

// Persistence returns a backend that follows the plugin across restarts.
// Its optional capabilities are reported by one accessor each —
// Watcher, PrefixCopier, Importer, Checkpointer, FrameReader, SalvageReader
// and Deleter, each returning (capability, bool) — by what the plugin
// declared at its start (sdk.Info.Capabilities); the value itself
// implements none of the capability interfaces but sdk.Tenancy, whose
// Tenant works only when the plugin declared sdk.CapabilityTenants and
// returns a view with the same accessors that follows the plugin across
// restarts too.
func (p *Plugin) Persistence() sdk.Persistence { return persistenceProxy{p: p} }

// Summarizer returns a summarizer that follows the plugin across restarts;
// it also implements sdk.RangeSelector.
func (p *Plugin) Summarizer() sdk.Summarizer { return summarizerProxy{p} }

// Pruner returns a pruner that follows the plugin across restarts.
func (p *Plugin) Pruner() sdk.Pruner { return prunerProxy{p} }

// Projector returns a projector that follows the plugin across restarts.
func (p *Plugin) Projector() sdk.Projector { return projectorProxy{p} }

// persistenceProxy is the backend of a persistence plugin that follows it
// across restarts: the implicit tenant's when tenant is "", else the view
// of the named tenant.
type persistenceProxy struct {
	p      *Plugin
	tenant string
}

func (x persistenceProxy) get() (sdk.Persistence, error) {
	return view[sdk.Persistence](x.p, x.tenant)
}

func (x persistenceProxy) Describe(ctx context.Context) (sdk.Description, error) {
	c, err := x.get()
	if err != nil {
		return sdk.Description{}, err
	}
	d, err := c.Describe(ctx)
	return d, x.p.observe(err)
}

func (x persistenceProxy) Create(ctx context.Context, h sdk.Header) (sdk.Opened, error) {
	c, err := x.get()
	if err != nil {
		return sdk.Opened{}, err
	}
	o, err := c.Create(ctx, h)
	return o, x.p.observe(err)
}

func (x persistenceProxy) Open(ctx context.Context, id string, a sdk.Access) (sdk.Opened, error) {
	c, err := x.get()
	if err != nil {
		return sdk.Opened{}, err
	}
	o, err := c.Open(ctx, id, a)
	return o, x.p.observe(err)
}

func (x persistenceProxy) Append(ctx context.Context, h string, first sdk.Seq, evs [][]byte) (sdk.Durable, error) {
	c, err := x.get()
	if err != nil {
		return sdk.Durable{}, err
	}
	d, err := c.Append(ctx, h, first, evs)
	return d, x.p.observe(err)
}

func (x persistenceProxy) Read(ctx context.Context, h string, off sdk.Offset, n int64, fn func([][]byte) error) error {
	c, err := x.get()
	if err != nil {
		return err
	}
	return x.p.observe(c.Read(ctx, h, off, n, fn))
}

func (x persistenceProxy) Flush(ctx context.Context, h string) (sdk.Durable, error) {
	c, err := x.get()
	if err != nil {
		return sdk.Durable{}, err
	}
	d, err := c.Flush(ctx, h)
	return d, x.p.observe(err)
}

func (x persistenceProxy) Close(ctx context.Context, h string) error {
	c, err := x.get()
	if err != nil {
		return err
	}
	return x.p.observe(c.Close(ctx, h))
}

func (x persistenceProxy) Stat(ctx context.Context, id string) (sdk.Stat, error) {
	c, err := x.get()
	if err != nil {
		return sdk.Stat{}, err
	}
	s, err := c.Stat(ctx, id)
	return s, x.p.observe(err)
}

func (x persistenceProxy) List(ctx context.Context, fn func(sdk.ListEntry) error) error {
	c, err := x.get()
	if err != nil {
		return err
	}
	return x.p.observe(c.List(ctx, fn))
}

type summarizerProxy struct{ p *Plugin }

func (x summarizerProxy) Summarize(ctx context.Context, r sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
	c, err := adapter[sdk.Summarizer](x.p, sdk.KindSummarizer)
	if err != nil {
		return sdk.SummarizeReply{}, err
	}
	out, err := c.Summarize(ctx, r)
	return out, x.p.observe(err)
}

func (x summarizerProxy) SelectRange(ctx context.Context, r sdk.SelectRangeRequest) (sdk.SelectRangeReply, error) {
	c, err := adapter[sdk.Summarizer](x.p, sdk.KindSummarizer)
	if err != nil {
		return sdk.SelectRangeReply{}, err
	}
	rs, ok := c.(sdk.RangeSelector)
	if !ok {
		return sdk.SelectRangeReply{}, nil
	}
	out, err := rs.SelectRange(ctx, r)
	return out, x.p.observe(err)
}

type prunerProxy struct{ p *Plugin }

func (x prunerProxy) Prune(ctx context.Context, id string, nodes []sdk.PruneNode, b sdk.PruneBudget) ([]sdk.PruneReplacement, error) {
	c, err := adapter[sdk.Pruner](x.p, sdk.KindPruner)
	if err != nil {
		return nil, err
	}
	out, err := c.Prune(ctx, id, nodes, b)
	return out, x.p.observe(err)
}

type projectorProxy struct{ p *Plugin }

func (x projectorProxy) Declare(ctx context.Context) ([]string, error) {
	c, err := adapter[sdk.Projector](x.p, sdk.KindProjection)
	if err != nil {
		return nil, err
	}
	out, err := c.Declare(ctx)
	return out, x.p.observe(err)
}

func (x projectorProxy) Project(ctx context.Context, r sdk.ProjectRequest) ([]sdk.ProjectTarget, error) {
	c, err := adapter[sdk.Projector](x.p, sdk.KindProjection)
	if err != nil {
		return nil, err
	}
	out, err := c.Project(ctx, r)
	return out, x.p.observe(err)
}
