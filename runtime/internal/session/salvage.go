package session

import (
	"context"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Salvaged is what a session/salvaged event records: the damaged source a
// child was salvaged from and what of the source's stored log the child
// leaves out.
type Salvaged struct {
	// From is the source session's id.
	From string
	// DamagedAtOffset is where the damage starts in the source's storage
	// (a byte offset, or a row position for a row backend).
	DamagedAtOffset int64
	// DamagedBytes is the size of the damaged region and everything after
	// it, all of which the child leaves out.
	DamagedBytes int64
	// IntactEventsExcluded counts the events after the damage that were
	// still intact but are not in the child, whose log is a contiguous
	// prefix.
	IntactEventsExcluded int64
	// Artifact is the file that keeps the left-out bytes.
	Artifact string
}

// SalvageSeed builds the seed of a child salvaged from a damaged log whose
// valid prefix is prefix (starting at seq 0, possibly empty): exactly the
// fork seed of the prefix at its last event (ForkSeed with no boundary: the
// byte-identical prefix, the {inherited: true} marker, forked closers for an
// open cut), then one session/salvaged event stamped now. An empty prefix
// gives the marker at seq 0, as a fork of an empty log does, then the
// salvaged event. It returns the seed and the child's inheritedEventCount.
func SalvageSeed(prefix []Event, info Salvaged, now int64) (seed []Event, inherited int64, err error) {
	seed, inherited, err = ForkSeed(prefix, nil, now)
	if err != nil {
		return nil, 0, err
	}
	return append(seed, mustEvent(sdk.Seq(len(seed)), now, TypeSessionSalvaged, salvagedData(info), nil)), inherited, nil
}

// SalvageFork builds the live child of a salvage in memory from source, a
// session restored from the valid prefix of a damaged log: what Fork makes
// of source at its last event (the prefix shared and folded, not validated
// again), then the session/salvaged event stamped now — SalvageSeed's
// events. opts.Header is the child's (ForkHeader with inheritedEventCount
// source.Len()).
func SalvageFork(ctx context.Context, opts Options, source *Session, info Salvaged, now int64) (*Session, error) {
	return fork(ctx, opts, source, int64(source.Len())-1, now, func(next sdk.Seq) []Event {
		return []Event{mustEvent(next, now, TypeSessionSalvaged, salvagedData(info), nil)}
	})
}

// salvagedData renders the payload of a session/salvaged event.
func salvagedData(info Salvaged) []byte {
	b := []byte(`{"salvagedFrom":`)
	b = jsonv.AppendString(b, info.From)
	b = append(b, `,"damagedAtOffset":`...)
	b = strconv.AppendInt(b, info.DamagedAtOffset, 10)
	b = append(b, `,"damagedBytes":`...)
	b = strconv.AppendInt(b, info.DamagedBytes, 10)
	b = append(b, `,"intactEventsExcluded":`...)
	b = strconv.AppendInt(b, info.IntactEventsExcluded, 10)
	b = append(b, `,"artifact":`...)
	b = jsonv.AppendString(b, info.Artifact)
	return append(b, '}')
}
