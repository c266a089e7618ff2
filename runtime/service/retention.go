package service

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/retention"
	"github.com/seed-e5e476df/logbook/sdk"
)

// RetentionDecision is what the retention policy does with one stored
// session older than its max_age.
type RetentionDecision struct {
	// ID is the session.
	ID string
	// LastActivity is the time of its last stored event (its creation when
	// it has none).
	LastActivity time.Time
	// Delete is true when the policy deletes it.
	Delete bool
	// Kept says why the policy keeps it when Delete is false ("held",
	// "live", "parent of …").
	Kept string
	// Record is the audit record of the deletion, once it was made.
	Record sdk.AuditRecord
	// Err is why the deletion or the look at the session failed.
	Err error
}

// GCOptions configure GC.
type GCOptions struct {
	// DryRun decides and deletes nothing.
	DryRun bool
	// Now is the time ages are measured at; default time.Now().
	Now time.Time
}

// CheckRetention refuses (CONFIG_INVALID) a configuration without a
// retention block, which GC needs, so a command line can check it before
// it starts anything.
func CheckRetention(cfg *config.Config) error {
	if cfg.Retention == nil {
		return sdk.Errorf(sdk.CodeConfigInvalid, "gc", `the configuration has no retention block; add one, such as retention { max_age = "90d" }`)
	}
	return nil
}

// policy returns the configuration's retention policy; without a
// retention block it is CONFIG_INVALID.
func (s *Service) policy() (retention.Policy, error) {
	if err := CheckRetention(s.cfg); err != nil {
		return retention.Policy{}, err
	}
	r := s.cfg.Retention
	return retention.Policy{MaxAge: r.MaxAge, KeepForkedParents: r.KeepForkedParents}, nil
}

// GC applies the configuration's retention block once (docs/operations.md,
// "Deleting sessions, holds and retention"): every stored session whose
// last activity is older than max_age is deleted as Delete would, with
// reason and by "retention", except one under a legal hold, one live here
// and, with keep_forked_parents, one another stored session names as its
// parent. It returns a decision for every session older than max_age,
// oldest first; a session it could not delete or read has Err set. Without
// a retention block GC is CONFIG_INVALID.
func (s *Service) GC(ctx context.Context, o GCOptions) ([]RetentionDecision, error) {
	p, err := s.policy()
	if err != nil {
		return nil, err
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	ds, err := retention.Plan(ctx, s.e.Store, p, o.Now)
	if err != nil {
		return nil, err
	}
	if !o.DryRun {
		retention.Apply(ctx, s.e.Store, ds)
	}
	out := make([]RetentionDecision, len(ds))
	for i, d := range ds {
		out[i] = RetentionDecision(d)
	}
	return out, nil
}

// retentionLoop applies the retention block, when there is one, to every
// tenant (Tenants, listed anew at each run), at once and then every hour
// until ctx ends, logging on log each deletion and each failure. It
// returns when ctx ends.
func (s *Service) retentionLoop(ctx context.Context, log hclog.Logger) {
	p, err := s.policy()
	if err != nil {
		return
	}
	retention.Loop(ctx, s.retentionTenants, p, retention.Interval, log)
}

// retentionTenants returns the store of every tenant that holds sessions.
func (s *Service) retentionTenants(ctx context.Context) ([]retention.Tenant, error) {
	names, err := s.Tenants(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]retention.Tenant, 0, len(names))
	for _, name := range names {
		t, err := s.Tenant(name)
		if err != nil {
			return out, err
		}
		out = append(out, retention.Tenant{Name: name, Store: t.e.Store})
	}
	return out, nil
}
