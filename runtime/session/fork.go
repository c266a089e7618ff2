package session

import (
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// ForkSeed builds the seed of a fork child (docs/architecture.md):
// the byte-identical prefix events[0..boundary], a session/end-seed
// {inherited: true} marker stamped with the boundary event's time (now when
// the prefix is empty), and the forked closers of an open cut. It returns the
// seed and the child's inheritedEventCount. events must start at seq 0.
// boundary nil means the last event.
func ForkSeed(events []Event, boundary *sdk.Seq, now int64) (seed []Event, inherited int64, err error) {
	n := int64(len(events))
	var b int64
	switch {
	case boundary == nil && n == 0:
		b = -1
	case boundary == nil:
		b = n - 1
		if events[b].r.seq != sdk.Seq(b) {
			return nil, 0, sdk.Errorf(sdk.CodeInvalidBoundary, "fork", "the last event at position %d has seq %d; the source log must start at seq 0", b, events[b].r.seq)
		}
	case *boundary < 0 || *boundary > sdk.MaxSeq:
		return nil, 0, sdk.Errorf(sdk.CodeInvalidBoundary, "fork", "boundary %d is outside 0 … 2^53−1", *boundary)
	case int64(*boundary) >= n:
		last := "none"
		if n > 0 {
			last = strconv.FormatInt(n-1, 10)
		}
		return nil, 0, sdk.Errorf(sdk.CodeInvalidBoundary, "fork", "boundary %d is past the last seq (%s)", *boundary, last)
	default:
		b = int64(*boundary)
		if events[b].r.seq != sdk.Seq(b) {
			return nil, 0, sdk.Errorf(sdk.CodeInvalidBoundary, "fork", "event at position %d has seq %d", b, events[b].r.seq)
		}
	}
	seed = make([]Event, 0, b+8)
	seed = append(seed, events[:b+1]...)
	markerTime := now
	if b >= 0 {
		markerTime = events[b].r.time
	}
	seed = append(seed, mustEvent(sdk.Seq(b+1), markerTime, TypeSessionEndSeed, []byte(`{"inherited":true}`), nil))
	seed = append(seed, OpenTurnClosers(seed, Forked)...)
	return seed, b + 1, nil
}

// ForkHeader returns the header of a fork child (docs/architecture.md step 4).
func ForkHeader(source sdk.Header, childID string, inherited int64, now int64) sdk.Header {
	return sdk.Header{
		FormatVersion:       sdk.FormatVersion,
		ID:                  childID,
		CreatedAt:           now,
		CWD:                 source.CWD,
		ParentSession:       source.ID,
		IsSeeded:            true,
		InheritedEventCount: inherited,
	}
}

// SeedWithMarker checks a caller's replay seed for Create (docs/architecture.md): it
// must not contain an {inherited: true} marker (that is Fork's), and gets a
// session/end-seed {} stamped now unless it already ends with one. The seed's
// own rules are checked when it is restored.
func SeedWithMarker(seed []Event, now int64) ([]Event, error) {
	for i, e := range seed {
		if e.r.typ == TypeSessionEndSeed {
			if b, _ := e.r.dataView().Get("inherited").Bool(); b {
				return nil, sdk.Errorf(sdk.CodeSeedInvalid, "create", "a replay seed must not contain an {inherited: true} session/end-seed; use Fork").
					WithSeq(int64(e.r.seq)).WithIndex(i)
			}
		}
	}
	out := append(make([]Event, 0, len(seed)+1), seed...)
	if len(seed) > 0 && seed[len(seed)-1].r.typ == TypeSessionEndSeed {
		return out, nil
	}
	return append(out, mustEvent(sdk.Seq(len(seed)), now, TypeSessionEndSeed, []byte(`{}`), nil)), nil
}

// ResumeBatch returns what Store.Open appends to a stored log as one batch
// (docs/architecture.md): session/recovered when the open cut a torn tail
// (torn.Bytes > 0), the interrupted closers, then a session/end-seed {}
// unless the log then ends with one (always after a session/recovered, and
// at seq 0 for an empty log).
func ResumeBatch(stored []Event, torn sdk.Torn, now int64) []Event {
	log := stored
	var batch []Event
	if torn.Bytes > 0 {
		b := []byte(`{"tornBytes":` + strconv.FormatInt(torn.Bytes, 10) + `,"tornFromSeq":` + strconv.FormatInt(int64(torn.FromSeq), 10))
		if torn.Artifact != "" {
			b = append(b, `,"artifact":`...)
			b = jsonv.AppendString(b, torn.Artifact)
		}
		b = append(b, '}')
		rec := mustEvent(sdk.Seq(len(stored)), now, TypeSessionRecovered, b, nil)
		batch = append(batch, rec)
		log = append(append(make([]Event, 0, len(stored)+1), stored...), rec)
	}
	closers := InterruptedTurnClosers(log)
	batch = append(batch, closers...)
	total := len(stored) + len(batch)
	if total > 0 {
		var last Event
		if len(batch) > 0 {
			last = batch[len(batch)-1]
		} else {
			last = stored[len(stored)-1]
		}
		if last.r.typ == TypeSessionEndSeed {
			return batch
		}
	}
	return append(batch, mustEvent(sdk.Seq(total), now, TypeSessionEndSeed, []byte(`{}`), nil))
}
