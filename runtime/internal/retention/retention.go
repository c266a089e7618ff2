// Package retention applies a retention policy to a store: it deletes the
// stored sessions whose last activity is older than the policy's maximum
// age, by the store's audited Delete, except those under a legal hold, live
// in the store, or (when the policy says so) parents of another stored
// session (docs/operations.md, "Deleting sessions, holds and retention").
package retention

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Policy is a retention policy (the config's retention block).
type Policy struct {
	// MaxAge is how long after its last activity a session is kept; > 0.
	MaxAge time.Duration
	// KeepForkedParents keeps a session while another stored session
	// names it as its parent.
	KeepForkedParents bool
}

// Reason is the audit reason of a retention deletion.
const Reason = "retention"

// Decision is what the policy does with one stored session older than
// MaxAge.
type Decision struct {
	// ID is the session.
	ID string
	// LastActivity is the time of its last stored event (its creation when
	// it has none).
	LastActivity time.Time
	// Delete is true when the policy deletes it; Kept says why not
	// otherwise ("held", "live", "parent of …").
	Delete bool
	Kept   string
	// Record is the audit record of the deletion, once Apply made it.
	Record sdk.AuditRecord
	// Err is why the deletion (Apply) or the look at the session failed.
	Err error
}

// Plan returns the decision for every stored session of st whose last
// activity is older than p.MaxAge at now, ordered by last activity (oldest
// first); it changes nothing. A session that cannot be read is left alone
// with Err set.
func Plan(ctx context.Context, st *store.Store, p Policy, now time.Time) ([]Decision, error) {
	if p.MaxAge <= 0 {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "retention", "max_age must be > 0; got %s", p.MaxAge)
	}
	entries, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	children := map[string]string{} // parent id → one stored child
	for _, e := range entries {
		if parent := e.Header.ParentSession; parent != "" && e.Err == nil {
			if _, seen := children[parent]; !seen || e.ID < children[parent] {
				children[parent] = e.ID
			}
		}
	}
	cutoff := now.Add(-p.MaxAge)
	var out []Decision
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e.Live {
			continue // written now: active
		}
		if e.Err != nil {
			out = append(out, Decision{ID: e.ID, Kept: "unreadable", Err: e.Err})
			continue
		}
		ms, err := st.LastActivity(ctx, e.ID)
		if errors.Is(err, sdk.CodeSessionNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			out = append(out, Decision{ID: e.ID, Kept: "unreadable", Err: err})
			continue
		}
		last := time.UnixMilli(ms).UTC()
		if !last.Before(cutoff) {
			continue
		}
		d := Decision{ID: e.ID, LastActivity: last, Delete: true}
		if child, ok := children[e.ID]; ok && p.KeepForkedParents {
			d.Delete, d.Kept = false, "parent of "+child
		} else if held, err := st.Held(ctx, e.ID); err != nil {
			d.Delete, d.Kept, d.Err = false, "unreadable", err
		} else if held {
			d.Delete, d.Kept = false, "held"
		}
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].LastActivity.Before(out[j].LastActivity) })
	return out, nil
}

// Apply deletes every decision of ds marked Delete through st.Delete
// (reason Reason, by sdk.ByRetention), filling Record, or Err and Delete
// false when the store refuses (a writer took the session meanwhile, a
// hold was set): those are kept, with Kept naming the refusal. It returns
// how many were deleted.
func Apply(ctx context.Context, st *store.Store, ds []Decision) int {
	n := 0
	for i := range ds {
		d := &ds[i]
		if !d.Delete {
			continue
		}
		rec, err := st.Delete(ctx, d.ID, sdk.AuditRequest{Reason: Reason, By: sdk.ByRetention})
		if err != nil && rec.Session == "" {
			d.Delete, d.Kept, d.Err = false, string(sdk.CodeOf(err)), err
			continue
		}
		d.Record, d.Err = rec, err // err: a mirror failed after the primary's deletion
		n++
	}
	return n
}
