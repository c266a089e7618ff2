package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/seed-e5e476df/logbook/runtime/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Read-only access to stored sessions. The read commands open the primary
// backend read-only (no ownership, no repair), so they work beside a running
// writer in another process and show the stored log as it is. The store has
// no read-only open of a prefix, so the --at views are restored here from
// the primary's envelopes [0, SEQ].

// readChunk is how many events one Read of a bulk copy or comparison asks
// for, so memory stays bounded by the chunk, not the session.
const readChunk = 1024

// backend returns the running persistence plugin of the persistence block
// called name.
func (a *app) backend(ctx context.Context, name string) (sdk.Persistence, error) {
	e, err := a.engine(ctx)
	if err != nil {
		return nil, err
	}
	pl, ok := e.Plugins[name]
	if !ok {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "logbook", "no persistence block %q is configured", name)
	}
	return pl.Persistence(), nil
}

// primary returns the primary backend: the first persistence block.
func (a *app) primary(ctx context.Context) (sdk.Persistence, error) {
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	return a.backend(ctx, cfg.Persistence[0].Name)
}

// storedLog is a stored session opened read-only on one backend.
type storedLog struct {
	p sdk.Persistence
	o sdk.Opened
}

// openStored opens session id read-only on p.
func openStored(ctx context.Context, p sdk.Persistence, id string) (*storedLog, error) {
	if err := sdk.ValidateSessionID(id); err != nil {
		return nil, err
	}
	o, err := p.Open(ctx, id, sdk.AccessRead)
	if err != nil {
		return nil, err
	}
	return &storedLog{p: p, o: o}, nil
}

// close releases the read handle; a read handle holds nothing worth an
// error, so a failure to close it is ignored.
func (l *storedLog) close() {
	_ = l.p.Close(context.Background(), l.o.Handle)
}

// len returns the number of valid stored events.
func (l *storedLog) len() int64 { return int64(l.o.NextSeq) }

// read calls fn with the envelopes [from, to) in consecutive chunks.
func (l *storedLog) read(ctx context.Context, from, to int64, fn func([][]byte) error) error {
	if to <= from {
		return nil
	}
	return l.p.Read(ctx, l.o.Handle, sdk.Offset(from), to-from, fn)
}

// readAll returns the envelopes [from, to).
func (l *storedLog) readAll(ctx context.Context, from, to int64) ([][]byte, error) {
	var out [][]byte
	err := l.read(ctx, from, to, func(c [][]byte) error {
		out = append(out, c...)
		return nil
	})
	return out, err
}

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
// was right after event *at (store.View). Nothing is added (no closers, no
// marker) and nothing is written; read command name warns when the stored
// log ends in a torn tail the view left out (warnTorn).
func (a *app) storedView(ctx context.Context, name, id string, at *sdk.Seq) (*session.Session, error) {
	e, err := a.engine(ctx)
	if err != nil {
		return nil, err
	}
	v, torn, err := e.Store.View(ctx, id, at)
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

// countEvents returns how many valid events session id holds on p, and the
// torn tail a write open would cut when it is known: from Stat when the
// backend knows the count cheaply (no torn tail is known then), else from
// a read-only open.
func countEvents(ctx context.Context, p sdk.Persistence, id string) (int64, sdk.Torn, error) {
	st, err := p.Stat(ctx, id)
	if err != nil {
		return 0, sdk.Torn{}, err
	}
	if st.EventCount >= 0 {
		return st.EventCount, sdk.Torn{}, nil
	}
	l, err := openStored(ctx, p, id)
	if err != nil {
		return 0, sdk.Torn{}, err
	}
	defer l.close()
	return l.len(), l.o.Torn, nil
}

// isNotFound reports whether err says the session does not exist.
func isNotFound(err error) bool { return errors.Is(err, sdk.ErrSessionNotFound) }
