package retention

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Interval is how often Loop applies the policy.
const Interval = time.Hour

// Tenant is one tenant's store, which Loop applies the policy to.
type Tenant struct {
	// Name is the tenant's name, logged beside every decision but the
	// default tenant's.
	Name  string
	Store *store.Store
}

// Loop applies p at once and then every interval until ctx ends to the
// store of every tenant that tenants returns at that time, one after the
// other, logging on log each deletion (info), each session it could not
// delete or read (warn), and a run that failed as a whole (error). A
// tenants that fails is logged and the run skipped. It returns when ctx
// ends.
func Loop(ctx context.Context, tenants func(context.Context) ([]Tenant, error), p Policy, interval time.Duration, log hclog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ts, err := tenants(ctx)
		if err != nil && ctx.Err() == nil {
			log.Error("retention: listing the tenants failed", "error", err)
		}
		for _, tn := range ts {
			l := log
			if tn.Name != sdk.DefaultTenant {
				l = log.With("tenant", tn.Name)
			}
			RunOnce(ctx, tn.Store, p, time.Now(), l)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// RunOnce plans and applies p once, logging as Loop does, and returns the
// decisions.
func RunOnce(ctx context.Context, st *store.Store, p Policy, now time.Time, log hclog.Logger) []Decision {
	ds, err := Plan(ctx, st, p, now)
	if err != nil {
		if ctx.Err() == nil {
			log.Error("retention: the run failed", "error", err)
		}
		return nil
	}
	n := Apply(ctx, st, ds)
	for _, d := range ds {
		switch {
		case d.Record.Session != "":
			log.Info("retention: deleted", "session", d.ID, "last_activity", d.LastActivity.Format(time.RFC3339), "events", int64(d.Record.Events), "digest", d.Record.Digest)
			if d.Err != nil {
				log.Warn("retention: a mirror did not delete", "session", d.ID, "error", d.Err)
			}
		case d.Err != nil:
			log.Warn("retention: kept", "session", d.ID, "why", d.Kept, "error", d.Err)
		}
	}
	log.Info("retention: run done", "deleted", n, "older_than_max_age", len(ds), "max_age", p.MaxAge.String())
	return ds
}
