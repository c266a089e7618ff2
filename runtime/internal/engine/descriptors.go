package engine

import (
	"context"
	"strconv"

	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// descriptorHeadroom is how many file descriptors a persistence plugin
// keeps spare beyond those it had open at start and those of its live
// sessions: the short-lived ones of reads, stats, lists and connections.
const descriptorHeadroom = 32

// checkDescriptors refuses (CONFIG_INVALID) a max_live_sessions that a
// persistence plugin's file descriptor limit cannot hold: each live
// session keeps the backend's DescriptorsPerSession open in it. A backend
// that keeps none per session, or whose limit is unknown, passes.
func checkDescriptors(ctx context.Context, maxLive int64, backends []store.Backend) error {
	for _, b := range backends {
		d, err := b.Persistence.Describe(ctx)
		if err != nil {
			return err
		}
		if d.DescriptorsPerSession <= 0 || d.DescriptorLimit <= 0 {
			continue
		}
		per := int64(d.DescriptorsPerSession)
		need := d.DescriptorsOpen + descriptorHeadroom + maxLive*per
		if need <= d.DescriptorLimit {
			continue
		}
		fits := max(0, (d.DescriptorLimit-d.DescriptorsOpen-descriptorHeadroom)/per)
		e := sdk.Errorf(sdk.CodeConfigInvalid, "engine",
			"max_live_sessions = %d needs %d file descriptors in plugin %s (%d per live session, %d open, %d spare), above its limit of %d; raise the limit (ulimit -n %d or more) or lower max_live_sessions to %d or less",
			maxLive, need, b.Name, per, d.DescriptorsOpen, descriptorHeadroom, d.DescriptorLimit, need, fits)
		e.Meta = map[string]string{"max_live_sessions": strconv.FormatInt(maxLive, 10), "limit": strconv.FormatInt(d.DescriptorLimit, 10)}
		return e
	}
	return nil
}
