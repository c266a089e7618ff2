package pluginhost

import (
	"context"
	"slices"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
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
// It is an sdk.PrefixCopier when the plugin declared the capability
// sdk.CapabilityCopyPrefix at its start, and an sdk.Watcher when it
// declared sdk.CapabilityWatch. It is always an sdk.Checkpointer and an
// sdk.FrameReader, which answer "none" for a plugin without them.
func (p *Plugin) Persistence() sdk.Persistence {
	caps := p.Info().Capabilities
	copies, watches := slices.Contains(caps, sdk.CapabilityCopyPrefix), slices.Contains(caps, sdk.CapabilityWatch)
	base := persistenceProxy{p}
	switch {
	case copies && watches:
		return watchingPrefixCopierProxy{prefixCopierProxy{base}, watchProxy{p}}
	case copies:
		return prefixCopierProxy{base}
	case watches:
		return watchingProxy{base, watchProxy{p}}
	}
	return base
}

// Summarizer returns a summarizer that follows the plugin across restarts;
// it also implements sdk.RangeSelector.
func (p *Plugin) Summarizer() sdk.Summarizer { return summarizerProxy{p} }

// Pruner returns a pruner that follows the plugin across restarts.
func (p *Plugin) Pruner() sdk.Pruner { return prunerProxy{p} }

// Projector returns a projector that follows the plugin across restarts.
func (p *Plugin) Projector() sdk.Projector { return projectorProxy{p} }

type persistenceProxy struct{ p *Plugin }

func (x persistenceProxy) get() (sdk.Persistence, error) {
	return adapter[sdk.Persistence](x.p, sdk.KindPersistence)
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

// AppendFlush is pluginrpc.AppendFlusher over the current plugin process.
func (x persistenceProxy) AppendFlush(ctx context.Context, h string, first sdk.Seq, evs [][]byte) (appended, flushed sdk.Durable, flushErr, err error) {
	c, err := adapter[pluginrpc.AppendFlusher](x.p, sdk.KindPersistence)
	if err != nil {
		return sdk.Durable{}, sdk.Durable{}, nil, err
	}
	appended, flushed, flushErr, err = c.AppendFlush(ctx, h, first, evs)
	return appended, flushed, x.p.observe(flushErr), x.p.observe(err)
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

// ReadDamaged is sdk.SalvageReader over the current plugin process (a
// plugin whose backend lacks it answers CONFIG_INVALID).
func (x persistenceProxy) ReadDamaged(ctx context.Context, id string, fn func([][]byte) error) (sdk.Damaged, error) {
	c, err := adapter[sdk.SalvageReader](x.p, sdk.KindPersistence)
	if err != nil {
		return sdk.Damaged{}, err
	}
	d, err := c.ReadDamaged(ctx, id, fn)
	return d, x.p.observe(err)
}

// prefixCopierProxy is the persistence proxy of a plugin that declared
// sdk.CapabilityCopyPrefix.
type prefixCopierProxy struct{ persistenceProxy }

// CopyPrefix is sdk.PrefixCopier over the current plugin process.
func (x prefixCopierProxy) CopyPrefix(ctx context.Context, source string, boundary sdk.Seq, child sdk.Header) (sdk.Opened, error) {
	c, err := adapter[sdk.PrefixCopier](x.p, sdk.KindPersistence)
	if err != nil {
		return sdk.Opened{}, err
	}
	o, err := c.CopyPrefix(ctx, source, boundary, child)
	return o, x.p.observe(err)
}

// watchProxy is sdk.Watcher over the current plugin process, for a plugin
// that declared sdk.CapabilityWatch. A watch does not outlive the plugin
// process it runs on: a restart ends it with PLUGIN_UNAVAILABLE, and the
// caller watches again.
type watchProxy struct{ p *Plugin }

// Watch is sdk.Watcher over the current plugin process.
func (x watchProxy) Watch(ctx context.Context, id string, from sdk.Offset, fn func(length sdk.Offset) error) error {
	c, err := adapter[sdk.Watcher](x.p, sdk.KindPersistence)
	if err != nil {
		return err
	}
	return x.p.observe(c.Watch(ctx, id, from, fn))
}

// watchingProxy is the persistence proxy of a plugin that declared
// sdk.CapabilityWatch but not sdk.CapabilityCopyPrefix.
type watchingProxy struct {
	persistenceProxy
	watchProxy
}

// watchingPrefixCopierProxy is the persistence proxy of a plugin that
// declared both sdk.CapabilityCopyPrefix and sdk.CapabilityWatch.
type watchingPrefixCopierProxy struct {
	prefixCopierProxy
	watchProxy
}

// WriteCheckpoint is sdk.Checkpointer over the current plugin process.
func (x persistenceProxy) WriteCheckpoint(ctx context.Context, handle string, events sdk.Offset, data []byte) error {
	c, err := adapter[sdk.Checkpointer](x.p, sdk.KindPersistence)
	if err != nil {
		return err
	}
	return x.p.observe(c.WriteCheckpoint(ctx, handle, events, data))
}

// ReadCheckpoint is sdk.Checkpointer over the current plugin process.
func (x persistenceProxy) ReadCheckpoint(ctx context.Context, handle string) (sdk.Offset, []byte, bool, error) {
	c, err := adapter[sdk.Checkpointer](x.p, sdk.KindPersistence)
	if err != nil {
		return 0, nil, false, err
	}
	events, data, found, err := c.ReadCheckpoint(ctx, handle)
	return events, data, found, x.p.observe(err)
}

// ReadFrames is sdk.FrameReader over the current plugin process; a plugin
// that did not declare sdk.CapabilityReadFrames at its start is not asked
// (framed false: the caller reads through Read).
func (x persistenceProxy) ReadFrames(ctx context.Context, handle string, off sdk.Offset, n int64, fn func([]sdk.Frame) error) (bool, error) {
	if !slices.Contains(x.p.Info().Capabilities, sdk.CapabilityReadFrames) {
		return false, nil
	}
	c, err := adapter[sdk.FrameReader](x.p, sdk.KindPersistence)
	if err != nil {
		return false, err
	}
	framed, err := c.ReadFrames(ctx, handle, off, n, fn)
	return framed, x.p.observe(err)
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

// The persistence proxy carries the optional capabilities the adapter has.
var (
	_ pluginrpc.AppendFlusher = persistenceProxy{}
	_ sdk.SalvageReader       = persistenceProxy{}
	_ sdk.PrefixCopier        = prefixCopierProxy{}
	_ sdk.Checkpointer        = persistenceProxy{}
	_ sdk.FrameReader         = persistenceProxy{}
	_ sdk.Watcher             = watchingProxy{}
	_ sdk.PrefixCopier        = watchingPrefixCopierProxy{}
	_ sdk.Watcher             = watchingPrefixCopierProxy{}
)
