package memory

import (
	"context"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// damage marks a stored log as damaged from one event on (Damage).
type damage struct {
	seq    int // the first damaged event
	reason string
}

func (d *damage) corrupt(id string) error {
	return sdk.Errorf(sdk.CodeCorruptLog, op, "session %s: event %d is damaged (%s) and intact events may follow; salvage the valid prefix into a new session",
		strconv.Quote(id), d.seq, d.reason).WithSession(id)
}

// ReadDamaged implements sdk.SalvageReader: it reads session id without
// claiming it and calls fn with the valid prefix (every event of an
// undamaged log, the events before the damage of one marked by Damage) in
// the chunks Read uses. A header that does not pass the format gate fails
// as Open does.
func (b *Backend) ReadDamaged(ctx context.Context, id string, fn func(events [][]byte) error) (sdk.Damaged, error) {
	if err := handles.Ended(ctx, op, "read damaged"); err != nil {
		return sdk.Damaged{}, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Damaged{}, err
	}
	b.st.mu.Lock()
	s, err := b.st.stored(id)
	if err != nil {
		b.st.mu.Unlock()
		return sdk.Damaged{}, err
	}
	h, err := b.st.decode(s, id)
	if err != nil {
		b.st.mu.Unlock()
		return sdk.Damaged{}, err
	}
	stored := s.events[:len(s.events):len(s.events)]
	d := sdk.Damaged{Header: h, ValidEvents: int64(len(stored))}
	if s.damage != nil {
		at := s.damage.seq
		d.ValidEvents, d.Corrupt = int64(at), true
		d.Damage = sdk.Damage{
			Offset:               int64(len(s.header)) + 1 + lineBytes(stored[:at]),
			IntactEventsExcluded: int64(len(stored) - at - 1),
			Reason:               s.damage.reason,
		}
		for _, ev := range stored[at:] {
			d.Damage.Tail = append(append(d.Damage.Tail, ev...), '\n')
		}
		d.Damage.Bytes = int64(len(d.Damage.Tail))
	}
	b.st.mu.Unlock()
	if err := emit(ctx, stored, 0, d.ValidEvents, fn); err != nil {
		return sdk.Damaged{}, err
	}
	return d, nil
}

// lineBytes is the size of events as JSONL lines.
func lineBytes(events [][]byte) int64 {
	var n int64
	for _, ev := range events {
		n += int64(len(ev)) + 1
	}
	return n
}

var _ sdk.SalvageReader = (*Backend)(nil)
