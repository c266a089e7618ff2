package service

import (
	"context"
	"fmt"

	"github.com/seed-e5e476df/logbook/runtime/internal/rpcsize"
	"github.com/seed-e5e476df/logbook/runtime/internal/transfer"
)

// MigrateOptions report a migration's progress; both are optional.
type MigrateOptions struct {
	// Listed is called once the primary has listed its sessions, with how
	// many Migrate will copy.
	Listed func(sessions int)
	// Done is called after each session with its id and the error that
	// failed it (nil when it was copied or already complete).
	Done func(id string, err error)
}

// Migrated is the outcome of Migrate.
type Migrated struct {
	Sessions int   // the sessions the primary listed
	Copied   int   // sessions that got events or were created
	Complete int   // sessions the target already held in full
	Failed   int   // sessions that failed
	Events   int64 // events appended, over all sessions
}

// Migrate copies every session of the primary to the persistence block
// called to, resumably: a session the target already holds in full is
// only verified, one it holds in part gets the rest, and a target whose
// events are not the primary's prefix is MIRROR_DIVERGED and left as it
// is. Every copy is read back and compared. A session that fails does not
// stop the others; the error is the first failure (with how many failed),
// or ctx's. Run it again to resume.
func (s *Service) Migrate(ctx context.Context, to string, o MigrateOptions) (Migrated, error) {
	dst, err := s.backend(to)
	if err != nil {
		return Migrated{}, err
	}
	res, err := transfer.Migrate(ctx, s.primary(), dst, transfer.MigrateOptions{
		BatchBytes: rpcsize.MaxCopyBatchBytes(int(s.cfg.RPCMaxBytes)),
		Listed:     o.Listed,
		Done:       o.Done,
	})
	return Migrated(res), err
}

// VerifyStatus is the outcome of comparing one session on the primary and
// a mirror.
type VerifyStatus string

// The statuses of a Comparison. Every status but VerifyOK is a difference.
// A comparison whose outcome the service cannot name is VerifyError.
const (
	VerifyOK            VerifyStatus = "ok"             // same header, same events
	VerifyMissing       VerifyStatus = "missing"        // the mirror does not hold the session
	VerifyHeaderDiffers VerifyStatus = "header-differs" // the session headers differ
	VerifyDiverged      VerifyStatus = "diverged"       // an event differs (Seq names the first)
	VerifyBehind        VerifyStatus = "behind"         // the mirror holds a prefix of the primary's events
	VerifyAhead         VerifyStatus = "ahead"          // the mirror holds the primary's events and more
	VerifyError         VerifyStatus = "error"          // a backend failed (Detail says how)
)

// Comparison is one session of the primary compared with one mirror. Its
// JSON form is what `logbook verify --json` prints.
type Comparison struct {
	// Session is the id of the session compared.
	Session string `json:"session"`
	// Mirror is the name of the mirror's persistence block.
	Mirror string `json:"mirror"`
	// Status is the outcome.
	Status       VerifyStatus `json:"status"`
	Events       int64        `json:"events"`           // the primary's stored events
	MirrorEvents int64        `json:"mirrorEvents"`     // the mirror's stored events
	Seq          *int64       `json:"seq,omitempty"`    // VerifyDiverged: the first differing seq
	Detail       string       `json:"detail,omitempty"` // VerifyError: the error
}

// Mirrors returns the names of the mirrors: every persistence block after
// the first, in the configuration's order.
func (s *Service) Mirrors() []string {
	var names []string
	for _, p := range s.cfg.Persistence[1:] {
		names = append(names, p.Name)
	}
	return names
}

// Verify compares each session of ids on the primary with each mirror,
// both read-only, event by event: one Comparison per session and mirror,
// sessions in the order given, mirrors in the configuration's order for
// each. Done, when set, is called after each comparison. Verify stops
// early, returning what it compared, when ctx ends.
func (s *Service) Verify(ctx context.Context, ids []string, done func(Comparison)) []Comparison {
	var mirrors []transfer.Mirror
	for _, name := range s.Mirrors() {
		p, _ := s.backend(name) // every configured block runs
		mirrors = append(mirrors, transfer.Mirror{Name: name, Persistence: p})
	}
	var report func(transfer.Comparison)
	if done != nil {
		report = func(c transfer.Comparison) { done(comparison(c)) }
	}
	results := transfer.Verify(ctx, s.primary(), mirrors, ids, report)
	out := make([]Comparison, len(results))
	for i, c := range results {
		out[i] = comparison(c)
	}
	return out
}

// comparison converts transfer's comparison to the service's. A status
// the service does not know becomes VerifyError, its Detail naming it.
func comparison(c transfer.Comparison) Comparison {
	out := Comparison{Session: c.Session, Mirror: c.Mirror, Events: c.Events, MirrorEvents: c.MirrorEvents, Seq: c.Seq, Detail: c.Detail}
	var ok bool
	if out.Status, ok = verifyStatus(c.Status); !ok {
		out.Detail = fmt.Sprintf("unknown comparison status %q", c.Status)
		if c.Detail != "" {
			out.Detail += ": " + c.Detail
		}
	}
	return out
}

// verifyStatus maps transfer's status to the service's; ok is false, and
// the status VerifyError, for one it has no mapping for.
func verifyStatus(s transfer.Status) (_ VerifyStatus, ok bool) {
	switch s {
	case transfer.StatusOK:
		return VerifyOK, true
	case transfer.StatusMissing:
		return VerifyMissing, true
	case transfer.StatusHeaderDiffers:
		return VerifyHeaderDiffers, true
	case transfer.StatusDiverged:
		return VerifyDiverged, true
	case transfer.StatusBehind:
		return VerifyBehind, true
	case transfer.StatusAhead:
		return VerifyAhead, true
	case transfer.StatusError:
		return VerifyError, true
	}
	return VerifyError, false
}
