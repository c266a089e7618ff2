package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

var _ sdk.SalvageReader = (*Backend)(nil)

// ReadDamaged implements sdk.SalvageReader: it reads the stored session
// id without a claim and without changing anything, in one snapshot. fn
// gets the longest valid prefix (the rows before the first damaged one),
// and the reply locates the damage by row: Offset is the seq of the first
// damaged row, Bytes the number of stored rows from there on, and Tail
// those rows as the JSON lines a torn_rows artifact holds. A session that
// loads (perhaps with torn rows) comes back with Corrupt false. A
// sessions row that fails the format gate or the header check is refused
// as Open refuses it.
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
	tx, err := st.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return sdk.Damaged{}, st.dbErr(ctx, id, "read damaged", err)
	}
	defer tx.Rollback(context.Background())
	r, found, err := st.session(ctx, tx, id, false)
	if err != nil {
		return sdk.Damaged{}, err
	}
	if !found {
		return sdk.Damaged{}, handles.NotFound(op, id)
	}
	h, err := st.header(r, id)
	if err != nil {
		return sdk.Damaged{}, err
	}
	sc, err := st.scan(ctx, tx, id, r.nextSeq, true)
	if err != nil {
		return sdk.Damaged{}, err
	}
	if err := tx.Commit(ctx); err != nil {
		return sdk.Damaged{}, st.dbErr(ctx, id, "read damaged", err)
	}
	out := sdk.Damaged{Header: h, ValidEvents: sc.End}
	if sc.CommittedDamage() {
		out.Corrupt = true
		out.Damage = sdk.Damage{Offset: sc.Bad, Bytes: sc.Rows, IntactEventsExcluded: sc.Intact, Reason: sc.Reason, Tail: sc.Artifact()}
	}
	// The valid prefix never changes (appends add rows, a cut removes rows
	// from its end on), so it may be read after the snapshot when the
	// scan kept too much to hold.
	for seq := int64(0); seq < sc.End; {
		chunk := sc.events
		if chunk == nil {
			if chunk, err = st.readRows(ctx, id, seq, min(sc.End, seq+readQueryEvents)); err != nil {
				return sdk.Damaged{}, err
			}
		} else {
			sc.events = nil
		}
		if err := fn(chunk); err != nil {
			return sdk.Damaged{}, err
		}
		seq += int64(len(chunk))
	}
	return out, nil
}
