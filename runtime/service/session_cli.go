package service

import (
	"context"
	"errors"
	"os"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/compaction"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// WriteOptions say how OpenWrite opens a session.
type WriteOptions struct {
	// Create makes and stores an absent session (its cwd the process's
	// working directory) instead of refusing it with SESSION_NOT_FOUND.
	Create bool
	// Expected, when set, is the seq the caller's first event must get:
	// the stored length plus what the open itself appends (the repair
	// batch; none for an absent or empty session, or a continued turn),
	// as expectedSeq means over the API. Another seq is SEQ_CONFLICT
	// before anything is written: not even a torn tail is cut.
	Expected *sdk.Offset
	// Continue goes on with the turn the stored log ends in: no closers
	// and no lifecycle marker, unless a torn tail was cut (the previous
	// writer crashed), when the normal repair runs.
	Continue bool
}

// WriteReport says what OpenWrite did to the stored session.
type WriteReport struct {
	// Torn is the torn tail the write open cut and where its bytes were
	// kept; zero when none.
	Torn sdk.Torn
	// Closers counts the closer events appended for an interrupted turn.
	Closers int
	// Continued is set when WriteOptions.Continue was honoured: nothing
	// was appended and the open turn goes on.
	Continued bool
	// Written are the events the open itself appended and stored (the
	// repair batch: session/recovered after a cut, the closers and the
	// lifecycle marker); none for a new or a continued session.
	Written []events.Event
}

// OpenWrite opens session id for write, as `logbook append` and `logbook
// resume` do: a stored session is resumed (torn tail cut, interrupted
// turn closed, lifecycle marker, all stored before it returns), an absent
// one created with o.Create, else SESSION_NOT_FOUND. The session stays
// live until its Release (or the service's Close), which flushes and
// releases it.
func (s *Service) OpenWrite(ctx context.Context, id string, o WriteOptions) (*Session, WriteReport, error) {
	// The store checks Expected under the write claim, from the one read
	// the open makes, and writes nothing on a mismatch (OpenAt).
	sess, rep, err := s.e.Store.OpenWith(ctx, id, store.OpenOptions{Expect: o.Expected, Continue: o.Continue})
	if errors.Is(err, sdk.CodeSessionNotFound) && o.Create {
		// An absent session holds no events and its create appends none.
		if o.Expected != nil && *o.Expected != 0 {
			return nil, WriteReport{}, store.FirstSeqConflict(id, *o.Expected, 0, 0)
		}
		dir, err := os.Getwd()
		if err != nil {
			return nil, WriteReport{}, err
		}
		sess, err := s.Create(ctx, CreateRequest{ID: id, Header: events.CreateOptions{CWD: dir}, Stored: true})
		return sess, WriteReport{}, err
	}
	if err != nil {
		return nil, WriteReport{}, err
	}
	live := sess.FirstLiveSeq()
	return &Session{svc: s, s: sess}, WriteReport{Torn: rep.Torn, Closers: rep.Closers, Continued: rep.Continued,
		Written: host.Shared(sess.Events().Range(live-sdk.Offset(rep.Appended), live).Slice())}, nil
}

// Pruned says what Prune did.
type Pruned struct {
	// ToolResults counts the tool results it rewrote.
	ToolResults int
	// CharsRemoved is how many characters the rewrites removed.
	CharsRemoved int64
}

// Prune rewrites the oversized tool results on the surface of s with the
// configured pruner (docs/compaction.md). Without a compaction block in
// the configuration it is CONFIG_INVALID.
func (s *Session) Prune(ctx context.Context) (Pruned, error) {
	c := s.svc.e.Compactor
	if c == nil {
		return Pruned{}, sdk.Errorf(sdk.CodeConfigInvalid, "prune", "the configuration has no compaction block (a headless profile)")
	}
	res, err := c.Prune(ctx, s.s)
	if err != nil {
		return Pruned{}, err
	}
	return Pruned{ToolResults: len(res.Pruned), CharsRemoved: res.CharsRemoved}, nil
}

// SurfaceTokens returns the token estimate of the surface: what the
// compaction policy measures (docs/compaction.md).
func (s *Session) SurfaceTokens() (int64, error) {
	m, err := compaction.Measure(s.s)
	return m.TotalTokens, err
}

// InheritedEvents returns how many events a fork inherited from its
// parent; 0 for a session that is no fork.
func (s *Session) InheritedEvents() int64 { return int64(s.s.InheritedEventCount()) }
