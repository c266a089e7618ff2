package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Read-only access to stored sessions. The read commands open the primary
// backend read-only (no ownership, no repair), so they work beside a running
// writer in another process and show the stored log as it is: through
// service.StoredLog for envelopes, through service.ReadStored for a
// restored session (the whole log, or the prefix [0, SEQ] of an --at view).

// boundaryError is INVALID_BOUNDARY for a seq past the end of a log of n
// events.
func boundaryError(id string, seq, n int64) error {
	last := "none"
	if n > 0 {
		last = strconv.FormatInt(n-1, 10)
	}
	return sdk.Errorf(sdk.CodeInvalidBoundary, "logbook", "seq %d is past the end of the log (last seq %s)", seq, last).WithSession(id).WithSeq(seq)
}

// storedView restores session id from the primary, read-only: the whole
// stored log when at is nil, else the prefix [0, *at] — the session as it
// was right after event *at. Nothing is added (no closers, no
// marker) and nothing is written; read command name warns when the stored
// log ends in a torn tail the view left out (warnTorn).
func (a *app) storedView(ctx context.Context, name, id string, at *sdk.Seq) (*service.Session, error) {
	svc, err := a.service(ctx)
	if err != nil {
		return nil, err
	}
	v, torn, err := svc.ReadStored(ctx, id, at)
	if err != nil {
		return nil, err
	}
	a.warnTorn(name, id, torn)
	return v, nil
}

// warnTorn tells, on stderr, that read command name shows session id
// without the torn tail its stored log ends in (nothing when t is zero):
// the tail is what an interrupted write left, and the next write open cuts
// it.
func (a *app) warnTorn(name, id string, t sdk.Torn) {
	if t.Bytes == 0 {
		return
	}
	fmt.Fprintf(a.stderr, "logbook %s: warning: session %q ends in a torn tail of %s from seq %d (left by an interrupted write); what is shown holds the %s before it, and the next write open (resume, append) cuts the tail and keeps it in a file\n",
		name, id, plural(t.Bytes, "byte"), t.FromSeq, plural(int64(t.FromSeq), "event"))
}

// countEvents returns how many valid events session id holds on the
// primary, and the torn tail a write open would cut when it is known: from
// Stat when the backend knows the count cheaply (no torn tail is known
// then), else from a read-only open.
func countEvents(ctx context.Context, svc *service.Service, id string) (int64, sdk.Torn, error) {
	st, err := svc.StatStored(ctx, id)
	if err != nil {
		return 0, sdk.Torn{}, err
	}
	if st.Events >= 0 {
		return st.Events, sdk.Torn{}, nil
	}
	l, err := svc.OpenStored(ctx, id)
	if err != nil {
		return 0, sdk.Torn{}, err
	}
	defer l.Close()
	return l.Len(), l.Torn(), nil
}

// isNotFound reports whether err says the session does not exist.
func isNotFound(err error) bool { return errors.Is(err, sdk.CodeSessionNotFound) }
