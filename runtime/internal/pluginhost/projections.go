package pluginhost

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Projections is the registry of message-projection definitions served by
// projection plugins (docs/plugins.md), in the form runtime/internal/session consumes. Safe
// for concurrent use; Remove models unloading a plugin.
type Projections struct {
	mu   sync.RWMutex
	defs map[string]*definition
}

type definition struct {
	typ      string
	identity string
	p        sdk.Projector
}

// Register asks a projection plugin for the types it serves and registers a
// definition for each: every type must be projection:<plugin name>/<name>,
// not registered by another plugin (PROJECTION_DUPLICATE).
func (r *Projections) Register(ctx context.Context, p *Plugin) error {
	info := p.Info()
	types, err := p.Projector().Declare(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.defs == nil {
		r.defs = map[string]*definition{}
	}
	for _, t := range types {
		if !strings.HasPrefix(t, session.ProjectionPrefix+info.Name+"/") {
			return sdk.Errorf(sdk.CodeProjectionInvalid, "plugin", "plugin %q declares %q; its projection types must be projection:%s/<name>", info.Name, t, info.Name)
		}
		if d, dup := r.defs[t]; dup {
			return sdk.Errorf(sdk.CodeProjectionDuplicate, "plugin", "projection type %q is already served by %s", t, d.identity)
		}
	}
	for _, t := range types {
		r.defs[t] = &definition{typ: t, identity: info.Name + "@v" + strconv.Itoa(sdk.ProtocolVersion) + "/" + info.Version, p: p.Projector()}
	}
	return nil
}

// Remove unregisters every type of the named plugin.
func (r *Projections) Remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for t := range r.defs {
		if strings.HasPrefix(t, session.ProjectionPrefix+name+"/") {
			delete(r.defs, t)
		}
	}
}

// Lookup implements session.Projections.
func (r *Projections) Lookup(eventType string) (session.Projection, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.defs[eventType]
	if !ok {
		return nil, false
	}
	return d, true
}

// Identity names the serving plugin and version.
func (d *definition) Identity() string { return d.identity }

// Project calls the plugin (docs/plugins.md step 3).
func (d *definition) Project(ctx context.Context, in session.ProjectInput) ([]session.ProjectTarget, error) {
	req := sdk.ProjectRequest{SessionID: in.SessionID, Event: in.Event.Envelope(), Nodes: in.Nodes}
	for _, t := range in.Targets {
		req.Targets = append(req.Targets, sdk.ProjectTarget{Seq: t.Seq, EventType: t.EventType, Message: t.Message})
	}
	out, err := d.p.Project(ctx, req)
	if err != nil {
		return nil, err
	}
	res := make([]session.ProjectTarget, len(out))
	for i, t := range out {
		res[i] = session.ProjectTarget{Seq: t.Seq, EventType: t.EventType, Message: t.Message}
	}
	return res, nil
}
