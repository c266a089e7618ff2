package sqlite

import (
	"context"
	"database/sql"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

var _ sdk.SalvageReader = (*Backend)(nil)

// ReadDamaged reads the stored session id as salvage needs it, without a
// claim and without changing anything: fn gets the longest valid prefix
// (the rows before the first damaged one), and the reply locates the
// damage by row: Offset is the seq of the first damaged row, Bytes the
// number of stored rows from there on, and Tail those rows as the
// canonical JSON lines a torn-row artifact holds. A session that loads
// (perhaps with torn rows) comes back with Corrupt false and its valid
// prefix. A sessions row that fails the format gate or the header check
// is refused as Open refuses it.
func (b *Backend) ReadDamaged(ctx context.Context, id string, fn func(events [][]byte) error) (sdk.Damaged, error) {
	if err := handles.Ended(ctx, op, "read damaged"); err != nil {
		return sdk.Damaged{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.Damaged{}, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Damaged{}, err
	}
	h, sc, err := st.scanDamaged(ctx, id)
	if err != nil {
		return sdk.Damaged{}, err
	}
	out := sdk.Damaged{Header: h, ValidEvents: sc.End}
	if sc.CommittedDamage() {
		out.Corrupt = true
		out.Damage = sdk.Damage{Offset: sc.Bad, Bytes: sc.Rows, IntactEventsExcluded: sc.Intact, Reason: sc.Reason, Tail: sc.Artifact()}
	}
	// Rows below the end of the valid prefix never change (appends only
	// add rows, a cut removes rows from there on), so they may be read
	// after the scan's transaction.
	for seq := int64(0); seq < sc.End; {
		if err := handles.Ended(ctx, op, "read damaged"); err != nil {
			return sdk.Damaged{}, err
		}
		chunk, err := st.readChunk(ctx, id, seq, sc.End)
		if err != nil {
			return sdk.Damaged{}, err
		}
		if err := fn(chunk); err != nil {
			return sdk.Damaged{}, err
		}
		seq += int64(len(chunk))
	}
	return out, nil
}

// scanDamaged reads the sessions row of id and scans its rows in one read
// transaction.
func (s *store) scanDamaged(ctx context.Context, id string) (sdk.Header, scanned, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return sdk.Header{}, scanned{}, s.dbErr(ctx, id, "read damaged", err)
	}
	defer tx.Rollback()
	r, found, err := s.session(ctx, tx.StmtContext(ctx, s.stmts.session), id)
	if err != nil {
		return sdk.Header{}, scanned{}, s.dbErr(ctx, id, "read damaged", err)
	}
	if !found {
		return sdk.Header{}, scanned{}, handles.NotFound(op, id)
	}
	h, err := s.header(r, id)
	if err != nil {
		return sdk.Header{}, scanned{}, err
	}
	sc, err := s.scan(ctx, tx, id, r.nextSeq, false)
	if err != nil {
		return sdk.Header{}, scanned{}, err
	}
	if err := tx.Rollback(); err != nil {
		return sdk.Header{}, scanned{}, s.dbErr(ctx, id, "read damaged", err)
	}
	return h, sc, nil
}
