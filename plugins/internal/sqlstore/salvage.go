package sqlstore

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// Scanned is a session as a backend's damage scan found it: its header
// (past the format gate and the header check) and the outcome of the
// scan of its rows in one snapshot.
type Scanned struct {
	// Header is the session's header.
	Header sdk.Header
	// Scan locates the valid prefix [0, Scan.End) and any damage; its
	// Events, when kept, serve the prefix, else Fetch reads it.
	Scan *Scan
}

// Salvager is a backend's store as ReadDamaged needs it.
type Salvager interface {
	// Salvage returns the store's damage scan and prefix read.
	Salvage() Salvage
}

// Salvage is what ReadDamaged and Record need of a backend.
type Salvage struct {
	// Op is the backend's Op.
	Op string
	// Scan reads the sessions row of the session and scans its rows in one
	// snapshot: SESSION_NOT_FOUND without a row, the format gate's and
	// the header check's errors as Open has them.
	Scan func(ctx context.Context, id string) (Scanned, error)
	// Fetch reads the envelopes of events [seq, stop) of the valid
	// prefix, at least one (ReadRange). Rows below the end of the valid
	// prefix never change (appends only add rows, a cut removes rows from
	// there on), so they may be read after the scan's snapshot.
	Fetch func(ctx context.Context, id string, seq, stop int64) ([][]byte, error)
}

// ReadDamaged implements sdk.SalvageReader.ReadDamaged, after ctx, the
// backend's store (open) and the session id are checked: fn gets the
// valid prefix in chunks (ReadRange), and the reply locates the damage by
// row: Offset is the seq of the first damaged row, Bytes the number of
// stored rows from there on, and Tail those rows as the JSON lines of a
// torn-row artifact. A session that loads (perhaps with torn rows) comes
// back with Corrupt false.
func ReadDamaged[S Salvager](ctx context.Context, op, id string, fn func(events [][]byte) error, open func() (S, error)) (sdk.Damaged, error) {
	if err := handles.Ended(ctx, op, "read damaged"); err != nil {
		return sdk.Damaged{}, err
	}
	st, err := open()
	if err != nil {
		return sdk.Damaged{}, err
	}
	s := st.Salvage()
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Damaged{}, err
	}
	sc, err := s.Scan(ctx, id)
	if err != nil {
		return sdk.Damaged{}, err
	}
	out := sdk.Damaged{Header: sc.Header, ValidEvents: sc.Scan.End}
	if sc.Scan.CommittedDamage() {
		out.Corrupt = true
		out.Damage = sdk.Damage{Offset: sc.Scan.Bad, Bytes: sc.Scan.Rows, IntactEventsExcluded: sc.Scan.Intact, Reason: sc.Scan.Reason, Tail: sc.Scan.Artifact()}
	}
	if err := s.prefix(ctx, id, "read damaged", sc, fn); err != nil {
		return sdk.Damaged{}, err
	}
	return out, nil
}

// Record returns the audit record of o on the stored session id: the
// length of its valid prefix and the digest of its plain JSONL form (the
// header JSON and the envelopes of the valid prefix, each followed by a
// newline; handles.Digest).
func (s Salvage) Record(ctx context.Context, id string, o sdk.AuditOp, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	sc, err := s.Scan(ctx, id)
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	d := handles.NewDigest()
	d.Line(headerjson.Encode(sc.Header))
	err = s.prefix(ctx, id, "digest", sc, func(events [][]byte) error {
		for _, ev := range events {
			d.Line(ev)
		}
		return nil
	})
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	return handles.Record(o, id, sdk.Offset(sc.Scan.End), d.String(), r), nil
}

// prefix hands the valid prefix of sc to fn: the kept envelopes, else
// what Fetch reads.
func (s Salvage) prefix(ctx context.Context, id, what string, sc Scanned, fn func(events [][]byte) error) error {
	fetch := func(seq, stop int64) ([][]byte, error) { return s.Fetch(ctx, id, seq, stop) }
	if kept := sc.Scan.Events; kept != nil && int64(len(kept)) >= sc.Scan.End {
		fetch = func(seq, stop int64) ([][]byte, error) { return kept[seq:stop], nil }
	}
	return ReadRange(ctx, s.Op, what, 0, sc.Scan.End, fetch, fn)
}
