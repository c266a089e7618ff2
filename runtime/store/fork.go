package store

import (
	"context"

	"github.com/seed-e5e476df/logbook/runtime/session"
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
	var src *session.Session
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
		src = ls.s
	default:
		if s, ok := st.Get(r.SourceID); ok {
			src = s
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
	return st.createFrom(ctx, h, func(o session.Options) (*session.Session, error) {
		return session.Fork(ctx, o, src, b, now)
	})
}
