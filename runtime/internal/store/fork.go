package store

import (
	"context"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// ForkRequest names the source and the inclusive boundary of a fork (docs/architecture.md).
type ForkRequest struct {
	Source   *session.Session // exactly one of Source / SourceID
	SourceID string
	Boundary *sdk.Seq // inclusive; nil = the source's last event
	ChildID  string   // "" = generated
}

// Fork creates a live child session from a stable prefix of a live or stored
// source (docs/architecture.md): the byte-identical prefix, an {inherited: true} marker
// and forked closers for an open cut. Nothing is created on failure.
func (st *Store) Fork(ctx context.Context, r ForkRequest) (*session.Session, error) {
	child := r.ChildID
	if child == "" {
		child = st.opts.NewID()
	}
	if err := sdk.ValidateSessionID(child); err != nil {
		return nil, err
	}
	if err := st.checkFree(ctx, child); err != nil {
		return nil, err
	}
	sl, err := st.takeSlot("fork", child)
	if err != nil {
		return nil, err
	}
	defer sl.done()
	var (
		src     *session.Session
		srcLive *live // the source's live entry; nil when it was read from storage
	)
	switch {
	case (r.Source == nil) == (r.SourceID == ""):
		return nil, sdk.Errorf(sdk.CodeSessionNotFound, "fork", "name exactly one of Source and SourceID")
	case r.Source != nil:
		ls, err := st.liveOf(r.Source, "fork")
		if err != nil {
			if _, live := st.Get(r.Source.ID()); !live {
				return nil, &sdk.Error{Code: sdk.CodeSessionNotFound, Op: "fork", SessionID: r.Source.ID(), Detail: "the source session is not live"}
			}
			return nil, err
		}
		src, srcLive = ls.s, ls
	default:
		if ls, ok := st.liveEntry(r.SourceID); ok {
			src, srcLive = ls.s, ls
		} else if p, ok := st.primary(); ok {
			v, _, err := st.readStored(ctx, p, r.SourceID, nil)
			if err != nil {
				return nil, err
			}
			src = v
		} else {
			return nil, &sdk.Error{Code: sdk.CodeSessionNotFound, Op: "fork", SessionID: r.SourceID, Detail: "no such session"}
		}
	}
	now := st.now()
	b, err := session.ForkBoundary(src.Events(), r.Boundary)
	if err != nil {
		return nil, err
	}
	h := session.ForkHeader(src.Header(), child, b+1, now)
	return st.createFrom(ctx, h, st.prefixCopy(ctx, src, srcLive, b), func(o session.Options) (*session.Session, error) {
		return session.Fork(ctx, o, src, b, now)
	})
}

// prefixCopy is what a fork's backends may copy inside themselves: the
// source's events [0, boundary], on each backend whose stored log holds
// them byte for byte. That is every backend of a live source whose queue
// is attached and has written the prefix (a queue behind it is drained
// first: the fork makes the prefix durable there), and the primary of a
// source just read from it. nil for an empty prefix.
func (st *Store) prefixCopy(ctx context.Context, src *session.Session, srcLive *live, boundary int64) *prefixSource {
	if boundary < 0 {
		return nil
	}
	pc := &prefixSource{id: src.ID(), boundary: sdk.Seq(boundary), holds: make([]bool, len(st.opts.Backends))}
	if srcLive == nil {
		pc.holds[0] = true
		return pc
	}
	for i, q := range srcLive.queues {
		if q.holds(sdk.Cursor(boundary)) {
			pc.holds[i] = true
			continue
		}
		if q.drain(ctx) == nil {
			pc.holds[i] = q.holds(sdk.Cursor(boundary))
		}
	}
	return pc
}

// prefixSource names a stored prefix a new session may be copied from:
// the source's events [0, boundary], held byte for byte by the backends
// whose holds entry (configuration order) is set.
type prefixSource struct {
	id       string
	boundary sdk.Seq
	holds    []bool
}

// copyPrefix creates h on backend b by copying pc's prefix inside it
// when b implements sdk.PrefixCopier and holds the prefix; it reports
// whether it did. A backend that cannot copy this prefix (it lacks the
// source, or the prefix, or the capability after all) gets a plain Create
// instead: nothing was created by the failed copy.
//
// The calls run under a context of their own, without the caller's
// cancellation and bounded by CallTimeout: a backend may store the child
// whatever the caller's context does (a plugin finishes a copy whose
// caller gave up, and a copy is stored when it returns), so the store
// waits for the answer. A child stored on a backend is then always one
// the store knows of, and goes on to hold the whole fork; never a prefix
// without its marker under an error (docs/architecture.md, "Fork and
// salvage": all or nothing).
func (st *Store) copyPrefix(ctx context.Context, pc *prefixSource, i int, b Backend, h sdk.Header) (sdk.Opened, bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st.opts.CallTimeout)
	defer cancel()
	cp, ok := capability(b.Persistence, prefixCopierAccessor.PrefixCopier)
	if pc == nil || !pc.holds[i] || !ok {
		o, err := b.Persistence.Create(ctx, h)
		return o, false, err
	}
	o, err := cp.CopyPrefix(ctx, pc.id, pc.boundary, h)
	switch sdk.CodeOf(err) {
	case "":
		if err == nil {
			return o, true, nil
		}
	case sdk.CodeSessionNotFound, sdk.CodeInvalidBoundary, sdk.CodeConfigInvalid:
		st.log.Warn("backend could not copy the fork's prefix; appending it instead", "backend", b.Name, "session", h.ID, "source", pc.id, "error", err)
		o, err := b.Persistence.Create(ctx, h)
		return o, false, err
	}
	return o, false, err
}
