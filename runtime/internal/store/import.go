package store

import (
	"bytes"
	"context"
	"errors"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// Import stores an exported session verbatim (docs/architecture.md): the
// header comes from the export, the events are validated by the restore
// pipeline and stored byte-identical on every backend, with no marker and
// no closers; the session is not left live.
//
// It is all or nothing on the primary (docs/storage.md, "Importing"): a
// backend that is an sdk.Importer stores the whole session in one step,
// so a failed or killed import leaves nothing under the id, and the
// import may be run again. Mirrors are imported after the primary; one
// that fails is caught up at the session's next open. An import whose
// session is already stored with the same header and the same events,
// byte for byte (an earlier run of it that completed), succeeds without
// writing; any other stored session under the id is
// SESSION_ALREADY_EXISTS. A header of an older format version is migrated
// first, so the session is stored at the current one, and its Tenant is
// the store's (Options.Tenant).
func (st *Store) Import(ctx context.Context, h sdk.Header, envelopes [][]byte) error {
	if err := sdk.ValidateSessionID(h.ID); err != nil {
		return err
	}
	// An export of an older format version is stored as the current one
	// (docs/format.md "Format versions"); its events are kept as they are.
	h, _, err := headerjson.Migrate(h, headerjson.Encode(h), "import")
	if err != nil {
		return err
	}
	// The session is the importing store's tenant's, whichever tenant
	// exported it.
	h.Tenant = st.opts.Tenant
	if err := st.checkFree(ctx, h.ID); err != nil {
		return st.unlessImported(ctx, err, h, envelopes)
	}
	s, err := session.Restore(ctx, st.sessionOptions(h, nil), session.RestoreOptions{Source: session.FromSeed}, envelopes)
	if err != nil {
		return err
	}
	events := s.Events().Slice()
	var created []*backend
	defer func() { st.closeBackends(created) }()
	for i, b := range st.opts.Backends {
		bk, err := st.importInto(ctx, b, h, events)
		if err != nil {
			if i == 0 {
				return st.unlessImported(ctx, err, h, envelopes)
			}
			return err
		}
		created = append(created, bk)
	}
	st.writeCheckpoints(ctx, s, created)
	return nil
}

// unlessImported returns err, or nil when err is SESSION_ALREADY_EXISTS
// and the primary holds exactly the import (header and events, byte for
// byte) with the session not live here.
func (st *Store) unlessImported(ctx context.Context, err error, h sdk.Header, envelopes [][]byte) error {
	if !errors.Is(err, sdk.CodeSessionAlreadyExists) {
		return err
	}
	if _, isLive := st.liveEntry(h.ID); isLive {
		return err
	}
	if same, cerr := st.holdsImport(ctx, h, envelopes); cerr != nil || !same {
		return err
	}
	return nil
}

// holdsImport reports whether the primary stores session h.ID with
// header h and exactly envelopes as its events.
func (st *Store) holdsImport(ctx context.Context, h sdk.Header, envelopes [][]byte) (bool, error) {
	p, ok := st.primary()
	if !ok {
		return false, nil
	}
	o, err := p.Persistence.Open(ctx, h.ID, sdk.AccessRead)
	if err != nil {
		return false, err
	}
	defer st.closeBackends([]*backend{{name: p.Name, p: p.Persistence, handle: o.Handle}})
	if !bytes.Equal(headerjson.Encode(o.Header), headerjson.Encode(h)) || o.NextSeq != sdk.Offset(len(envelopes)) {
		return false, nil
	}
	k := 0
	errDiffers := errors.New("differs")
	err = p.Persistence.Read(ctx, o.Handle, 0, -1, func(evs [][]byte) error {
		for _, ev := range evs {
			if k >= len(envelopes) || !bytes.Equal(ev, envelopes[k]) {
				return errDiffers
			}
			k++
		}
		return nil
	})
	switch {
	case errors.Is(err, errDiffers):
		return false, nil
	case err != nil:
		return false, err
	}
	return k == len(envelopes), nil
}

// importInto stores events as session h on backend b and returns its
// write handle there: in one step through the backend's import
// capability, or else, for a backend without it, by Create, Append and
// Flush, where a failure or a crash midway can leave a part of the
// import stored (docs/storage.md, "Importing").
func (st *Store) importInto(ctx context.Context, b Backend, h sdk.Header, events []session.Event) (*backend, error) {
	batches := func(yield func(batch [][]byte) error) error {
		return eachBatch(events, st.opts.RPCMaxBytes, func(_ sdk.Seq, part [][]byte) error { return yield(part) })
	}
	if imp, ok := capability(b.Persistence, importerAccessor.Importer); ok {
		o, err := imp.Import(ctx, h, batches)
		if err != nil {
			return nil, err
		}
		return &backend{name: b.Name, p: b.Persistence, handle: o.Handle}, nil
	}
	o, err := b.Persistence.Create(ctx, h)
	if err != nil {
		return nil, err
	}
	bk := &backend{name: b.Name, p: b.Persistence, handle: o.Handle}
	err = appendAll(ctx, bk, events, st.opts.RPCMaxBytes)
	if err == nil && len(events) == 0 {
		// Only a Flush materializes a session created without events; an
		// acknowledged Append is durable already.
		_, err = b.Persistence.Flush(ctx, o.Handle)
	}
	if err != nil {
		st.closeBackends([]*backend{bk})
		return nil, err
	}
	return bk, nil
}
