package postgres

import (
	"context"
	"errors"
	"strconv"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/envelope"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// row is one event as Append stores it.
type row struct {
	seq    int64
	zstd   bool
	stored []byte
}

// prepare checks a batch (every element a canonical envelope with seq
// firstSeq + index) and turns it into rows, compressing envelopes of
// compressMin bytes or more when that is smaller.
func (s space) prepare(id string, firstSeq sdk.Seq, events [][]byte, compressMin int) ([]row, int64, error) {
	rows := make([]row, len(events))
	var size int64
	var c envelope.Checker
	for i, ev := range events {
		p, err := c.Split(op, ev)
		if err != nil {
			return nil, 0, sdk.ErrorOf(err).WithSession(id).WithIndex(i)
		}
		if want := int64(firstSeq) + int64(i); p.Seq != want {
			return nil, 0, newErr(sdk.CodeSeqNotContiguous, id, "batch event %d has seq %d; expected %d (firstSeq %d + %d)", i, p.Seq, want, firstSeq, i).WithSeq(p.Seq).WithIndex(i)
		}
		r := row{seq: p.Seq, stored: ev}
		if compressMin > 0 && len(ev) >= compressMin {
			if frame := s.enc.EncodeAll(ev, make([]byte, 0, len(ev)/2)); len(frame) < len(ev) {
				r.zstd, r.stored = true, frame
			}
		}
		rows[i] = r
		size += int64(len(r.stored))
	}
	return rows, size, nil
}

// Append stores events at firstSeq onwards in one transaction under
// compare-and-set on next_seq and the owner epoch, all or nothing; the
// commit returns once PostgreSQL has flushed it to its WAL
// (synchronous_commit on). Checks run in this order: the context,
// HANDLE_CLOSED, READ_ONLY_HANDLE, INVALID_SEQ, ENVELOPE_INVALID and
// SEQ_NOT_CONTIGUOUS per event, then in the transaction OWNERSHIP_LOST (the
// advisory lock is no longer held by this backend's ownership connection,
// or another host has taken the session over since), SESSION_ALREADY_EXISTS
// (a create another host stored first) and SEQ_CONFLICT. An empty batch is
// a compare-and-set probe that stores and materializes nothing.
func (b *Backend) Append(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte) (sdk.Durable, error) {
	if err := handles.Ended(ctx, op, "append"); err != nil {
		return sdk.Durable{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.Durable{}, err
	}
	hd, err := b.writable(handle)
	if err != nil {
		return sdk.Durable{}, err
	}
	if err := handles.CheckAppend(hd.id, firstSeq); err != nil {
		return sdk.Durable{}, err
	}
	rows, size, err := st.prepare(hd.id, firstSeq, events, b.compressMin)
	if err != nil {
		return sdk.Durable{}, err
	}
	hd.ops.Lock()
	defer hd.ops.Unlock()
	return b.commit(ctx, st, hd, firstSeq, rows, size, false)
}

// claimState is what an append transaction checks the write claim by.
type claimState struct {
	pending []byte
	header  sdk.Header
	oc      *ownerConn
	epoch   int64
	inc     string
	anySeq  bool // a Flush's probe: the claim only, whatever next_seq is
}

// commit runs one append transaction for hd, materializing a pending
// create when rows is non-empty or for a flush; a flush of a stored
// session only checks the claim. hd.ops is held.
func (b *Backend) commit(ctx context.Context, st space, hd *handle, firstSeq sdk.Seq, rows []row, size int64, flush bool) (sdk.Durable, error) {
	b.mu.Lock()
	closed := hd.closed
	cs := claimState{pending: hd.pending, header: hd.header, oc: hd.oc, epoch: hd.epoch, inc: hd.incarnation, anySeq: flush}
	hook := b.beforeCAS
	b.mu.Unlock()
	if closed {
		return sdk.Durable{}, handles.HandleClosed(op, hd.name)
	}
	if cs.pending != nil {
		if firstSeq != 0 {
			return sdk.Durable{}, handles.SeqConflict(op, hd.id, int64(firstSeq), 0)
		}
		if len(rows) == 0 && !flush {
			return sdk.Durable{}, nil
		}
	}
	r, err := st.appendTx(ctx, hd, cs, firstSeq, rows, size, hook)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		return sdk.Durable{}, err
	}
	if cs.pending != nil {
		hd.pending, hd.incarnation, hd.epoch = nil, r.incarnation, r.epoch
		b.pending.Release(hd.id, hd)
	}
	hd.view.Saw(r.nextSeq)
	return sdk.Durable{NextSeq: sdk.Offset(r.nextSeq), Revision: st.rev(r)}, nil
}

// appendTx is the append transaction of docs/storage.md.
func (s space) appendTx(ctx context.Context, hd *handle, cs claimState, firstSeq sdk.Seq, rows []row, size int64, hook func()) (sessionRow, error) {
	id := hd.id
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return sessionRow{}, s.dbErr(ctx, id, "append", err)
	}
	defer tx.Rollback(context.Background())
	fail := func(err error) (sessionRow, error) { return sessionRow{}, s.dbErr(ctx, id, "append", err) }
	if hook != nil {
		hook()
	}
	hi, lo := keyHalves(hd.key)
	pid := int64(cs.oc.pid)
	var r sessionRow
	if cs.pending != nil {
		if r, err = s.materialize(ctx, tx, hd, cs); err != nil {
			return fail(err)
		}
		cs.epoch, cs.inc = r.epoch, r.incarnation
	}
	if len(rows) == 0 && cs.pending == nil {
		// A probe: the claim and the compare-and-set, nothing written.
		r, err := s.checkClaim(ctx, tx, hd, cs)
		if err == nil && r.nextSeq != int64(firstSeq) && !cs.anySeq {
			err = handles.SeqConflict(op, id, int64(firstSeq), r.nextSeq)
		}
		if err != nil {
			return fail(err)
		}
		return r, nil
	}
	if len(rows) > 0 {
		next := int64(firstSeq) + int64(len(rows))
		err := tx.QueryRow(ctx, "UPDATE "+s.q()+".sessions SET next_seq = $3, revision = revision + 1, size_bytes = size_bytes + $4, last_activity = now() "+
			"WHERE tenant = $10 AND id = $1 AND next_seq = $2 AND owner_epoch = $5 AND incarnation = $6 AND "+heldSQL("$7", "$8", "$9")+
			" RETURNING "+sessionCols,
			id, int64(firstSeq), next, size, cs.epoch, cs.inc, pid, hi, lo, s.tenant).Scan(
			&r.header, &r.nextSeq, &r.incarnation, &r.revision, &r.sizeBytes, &r.epoch, &r.host, &r.activity)
		if errors.Is(err, pgx.ErrNoRows) {
			r, err := s.checkClaim(ctx, tx, hd, cs)
			if err == nil {
				err = handles.SeqConflict(op, id, int64(firstSeq), r.nextSeq)
			}
			return fail(err)
		}
		if err != nil {
			return fail(err)
		}
	}
	if len(rows) > 0 {
		if err := s.insert(ctx, tx, id, rows); err != nil {
			if isUniqueViolation(err) {
				return fail(newErr(sdk.CodeSeqConflict, id, "compare-and-set failed: rows for seqs %d … %d already exist beyond the stored next seq %d (written by another writer); open the session again to cut them",
					firstSeq, int64(firstSeq)+int64(len(rows))-1, firstSeq).WithSeq(int64(firstSeq)))
			}
			return fail(err)
		}
	}
	// Watches of the session, on any host, learn of the batch when it
	// commits (docs/storage.md, "Following a session written elsewhere").
	if _, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", s.channel(), s.payload(id)); err != nil {
		return fail(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fail(err)
	}
	return r, nil
}

// materialize inserts the sessions row of the pending create hd (epoch
// 1, this host as the owner), only while hd's claim is held:
// SESSION_ALREADY_EXISTS when another host stored the id first,
// OWNERSHIP_LOST when the claim is gone.
func (s space) materialize(ctx context.Context, tx pgx.Tx, hd *handle, cs claimState) (sessionRow, error) {
	hi, lo := keyHalves(hd.key)
	r := sessionRow{header: cs.pending, incarnation: uuid.NewString(), epoch: 1, host: s.host, sizeBytes: int64(len(cs.pending))}
	tag, err := tx.Exec(ctx, "INSERT INTO "+s.q()+".sessions(tenant, id, header, created_at, next_seq, incarnation, revision, size_bytes, owner_epoch, owner_host, last_activity) "+
		"SELECT $9, $1, $2, $3, 0, $4, 0, octet_length($2), 1, $5, now() WHERE "+heldSQL("$6", "$7", "$8"),
		hd.id, string(cs.pending), cs.header.CreatedAt, r.incarnation, s.host, int64(cs.oc.pid), hi, lo, s.tenant)
	switch {
	case isUniqueViolation(err):
		return r, handles.AlreadyExists(op, hd.id, "another host stored it first")
	case err != nil:
		return r, err
	case tag.RowsAffected() == 0:
		return r, lostErr(hd.id, "the ownership connection that held it is gone")
	}
	return r, nil
}

// checkClaim reads hd's sessions row and checks hd's claim on it:
// OWNERSHIP_LOST when the session is gone or was replaced, another owner
// took over (a higher owner epoch), or the advisory lock is no longer
// held by the ownership connection hd's claim is on.
func (s space) checkClaim(ctx context.Context, q querier, hd *handle, cs claimState) (sessionRow, error) {
	hi, lo := keyHalves(hd.key)
	var r sessionRow
	var held bool
	err := scanSession(q.QueryRow(ctx, "SELECT "+sessionCols+", "+heldSQL("$2", "$3", "$4")+" FROM "+s.q()+".sessions WHERE tenant = $5 AND id = $1",
		hd.id, int64(cs.oc.pid), hi, lo, s.tenant), &r, &held)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return r, lostErr(hd.id, "the session is no longer stored")
	case err != nil:
		return r, err
	case r.incarnation != cs.inc:
		return r, lostErr(hd.id, "the session was replaced since this handle opened it (incarnation "+cs.inc+", now "+r.incarnation+")")
	case r.epoch != cs.epoch:
		return r, lostErr(hd.id, "host "+strconv.Quote(r.host)+" has owned it since (owner epoch "+strconv.FormatInt(r.epoch, 10)+", this handle's "+strconv.FormatInt(cs.epoch, 10)+")")
	case !held:
		return r, lostErr(hd.id, "the ownership connection (server process "+strconv.FormatInt(int64(cs.oc.pid), 10)+") that held its advisory lock is gone")
	}
	return r, nil
}

// insert stores the batch's rows with one multi-row INSERT over arrays.
func (s space) insert(ctx context.Context, tx pgx.Tx, id string, rows []row) error {
	seqs := make([]int64, len(rows))
	zs := make([]bool, len(rows))
	envs := make([][]byte, len(rows))
	for i, r := range rows {
		seqs[i], zs[i], envs[i] = r.seq, r.zstd, r.stored
	}
	_, err := tx.Exec(ctx, "INSERT INTO "+s.q()+".events(tenant, session_id, seq, zstd, envelope) SELECT $5, $1, * FROM unnest($2::bigint[], $3::boolean[], $4::bytea[])", id, seqs, zs, envs, s.tenant)
	return err
}

// Flush materializes a pending create and reports the stored next seq and
// revision: every acknowledged append is already durable. On a write
// handle it checks the claim as an append does (OWNERSHIP_LOST); on a read
// handle it reports what the handle may read.
func (b *Backend) Flush(ctx context.Context, handle string) (sdk.Durable, error) {
	if err := handles.Ended(ctx, op, "flush"); err != nil {
		return sdk.Durable{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.Durable{}, err
	}
	hd, err := b.handles.Get(handle)
	if err != nil {
		return sdk.Durable{}, err
	}
	if !hd.write {
		end, r, err := b.end(ctx, st, hd, false)
		if err != nil {
			return sdk.Durable{}, err
		}
		return sdk.Durable{NextSeq: sdk.Offset(end), Revision: st.rev(r)}, nil
	}
	hd.ops.Lock()
	defer hd.ops.Unlock()
	return b.commit(ctx, st, hd, 0, nil, 0, true)
}
