package sqlstore

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Tx is a transaction of the delete capability: *sql.Tx and pgx.Tx behind
// a backend's adapter.
type Tx interface {
	// Exec runs a statement in the transaction.
	Exec(ctx context.Context, query string, args ...any) error
	// QueryRow runs a query in the transaction and returns its first row.
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Lifecycle is the delete capability (sdk.Deleter) of a backend whose
// tables are sessions (tenant, id), holds (tenant, session_id) and an
// audit log, each row carrying its tenant: Delete,
// SetHold, Held and Audit are written once here, and the backend supplies
// its transactions, its audit columns and how it claims a session. A
// record is inserted in the transaction that makes the change it records,
// so the log never misses a change and never records one that did not
// happen.
type Lifecycle struct {
	// Begin begins a write transaction (and makes any check the backend
	// needs before a change); commit and rollback end it.
	Begin func(ctx context.Context) (tx Tx, commit func() error, rollback func(), err error)
	// Lock reads the sessions row of id of the dialect's tenant in tx,
	// locking it where the backend needs that to order a hold and a
	// delete of one session; found is false without a row.
	Lock func(ctx context.Context, tx Tx, id string) (found bool, err error)
	// InsertAudit is the statement that inserts rec into the audit log
	// with the dialect's tenant, and its arguments.
	InsertAudit func(rec sdk.AuditRecord) (query string, args []any)
	// Audit reads the audit log of the dialect's tenant in insertion
	// order.
	Audit func(ctx context.Context) ([]sdk.AuditRecord, error)
	// Purge names the tables whose rows of a session (columns tenant and
	// session_id) a Delete removes before the sessions row, beside what the schema
	// cascades.
	Purge []string
}

// Lifecycler is a backend's store as the delete capability needs it: its
// dialect spells and runs the statements and maps their errors, its
// salvage reads the valid prefix a record's digest covers.
type Lifecycler interface {
	Dialect
	Salvager
	// Lifecycle returns the store's delete capability.
	Lifecycle() Lifecycle
}

// Delete implements sdk.Deleter.Delete: after ctx and the request are
// checked, claim returns the backend's store with the session's write
// claim taken (release gives it up); then the audit record, and in one
// transaction the check that no hold is on the session, the record and
// the deletion of its rows.
func Delete[S Lifecycler](ctx context.Context, op, id string, r sdk.AuditRequest, claim func() (st S, release func(), err error)) (sdk.AuditRecord, error) {
	if err := checkLifecycle(ctx, op, "delete", id, r); err != nil {
		return sdk.AuditRecord{}, err
	}
	st, release, err := claim()
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	defer release()
	l := st.Lifecycle()
	rec, err := st.Salvage().Record(ctx, id, sdk.AuditDelete, r)
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	d := Dialect(st)
	err = l.tx(ctx, d, id, "delete", func(tx Tx) error {
		held, err := l.held(ctx, d, tx, id)
		if err != nil {
			return err
		}
		if held {
			return handles.Held(op, id)
		}
		if err := l.insert(ctx, tx, rec); err != nil {
			return err
		}
		for _, t := range l.Purge {
			if err := tx.Exec(ctx, "DELETE FROM "+d.Table(t)+" WHERE "+Scope(d, "", 1)+" AND session_id = "+d.Param(2), d.Tenant(), id); err != nil {
				return err
			}
		}
		return tx.Exec(ctx, "DELETE FROM "+d.Table("sessions")+" WHERE "+Scope(d, "", 1)+" AND id = "+d.Param(2), d.Tenant(), id)
	})
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	return rec, nil
}

// SetHold implements sdk.Deleter.SetHold beside a writer: the record and
// the holds row change in one transaction, and nothing changes (changed
// false) when the hold already is as asked. open returns the backend's
// store.
func SetHold[S Lifecycler](ctx context.Context, op, id string, held bool, r sdk.AuditRequest, open func() (S, error)) (sdk.AuditRecord, bool, error) {
	if err := checkLifecycle(ctx, op, "hold", id, r); err != nil {
		return sdk.AuditRecord{}, false, err
	}
	st, err := open()
	if err != nil {
		return sdk.AuditRecord{}, false, err
	}
	l := st.Lifecycle()
	o := sdk.AuditHold
	if !held {
		o = sdk.AuditReleaseHold
	}
	rec, err := st.Salvage().Record(ctx, id, o, r)
	if err != nil {
		return sdk.AuditRecord{}, false, err
	}
	d := Dialect(st)
	changed := false
	err = l.tx(ctx, d, id, "hold", func(tx Tx) error {
		now, err := l.held(ctx, d, tx, id)
		if err != nil || now == held {
			return err
		}
		if err := l.insert(ctx, tx, rec); err != nil {
			return err
		}
		q := "INSERT INTO " + d.Table("holds") + "(tenant, session_id) VALUES (" + d.Param(1) + ", " + d.Param(2) + ")"
		if !held {
			q = "DELETE FROM " + d.Table("holds") + " WHERE " + Scope(d, "", 1) + " AND session_id = " + d.Param(2)
		}
		err = tx.Exec(ctx, q, d.Tenant(), id)
		changed = err == nil
		return err
	})
	if err != nil || !changed {
		return sdk.AuditRecord{}, false, err
	}
	return rec, true, nil
}

// Held implements sdk.Deleter.Held: whether the stored session id has a
// holds row, SESSION_NOT_FOUND when it is not stored. open returns the
// backend's store.
func Held[S Dialect](ctx context.Context, op, id string, open func() (S, error)) (bool, error) {
	if err := handles.Ended(ctx, op, "held"); err != nil {
		return false, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return false, err
	}
	d, err := open()
	if err != nil {
		return false, err
	}
	var stored, held bool
	err = d.QueryRow(ctx, "SELECT EXISTS(SELECT 1 FROM "+d.Table("sessions")+" WHERE "+Scope(d, "", 1)+" AND id = "+d.Param(2)+"), EXISTS(SELECT 1 FROM "+d.Table("holds")+" WHERE "+Scope(d, "", 1)+" AND session_id = "+d.Param(2)+")", d.Tenant(), id).Scan(&stored, &held)
	if err != nil {
		return false, DBErr(ctx, d, id, "held", err)
	}
	if !stored {
		return false, handles.NotFound(op, id)
	}
	return held, nil
}

// Audit implements sdk.Deleter.Audit: fn gets every record of the audit
// log in insertion order, after the log has been read (fn runs while the
// backend holds nothing). open returns the backend's store.
func Audit[S Lifecycler](ctx context.Context, op string, fn func(sdk.AuditRecord) error, open func() (S, error)) error {
	if err := handles.Ended(ctx, op, "audit"); err != nil {
		return err
	}
	st, err := open()
	if err != nil {
		return err
	}
	l := st.Lifecycle()
	recs, err := l.Audit(ctx)
	if err != nil {
		return DBErr(ctx, st, "", "reading the audit log", err)
	}
	for _, r := range recs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// checkLifecycle is the check every change of the capability starts with:
// ctx, then the session id and the request.
func checkLifecycle(ctx context.Context, op, what, id string, r sdk.AuditRequest) error {
	if err := handles.Ended(ctx, op, what); err != nil {
		return err
	}
	return handles.CheckLifecycle(id, r)
}

// held locks the sessions row of id (SESSION_NOT_FOUND without one) and
// reports whether the session is held.
func (l Lifecycle) held(ctx context.Context, d Dialect, tx Tx, id string) (bool, error) {
	found, err := l.Lock(ctx, tx, id)
	if err == nil && !found {
		err = handles.NotFound(d.Op(), id)
	}
	if err != nil {
		return false, err
	}
	var held bool
	err = tx.QueryRow(ctx, "SELECT EXISTS(SELECT 1 FROM "+d.Table("holds")+" WHERE "+Scope(d, "", 1)+" AND session_id = "+d.Param(2)+")", d.Tenant(), id).Scan(&held)
	return held, err
}

// insert inserts rec into the audit log in tx.
func (l Lifecycle) insert(ctx context.Context, tx Tx, rec sdk.AuditRecord) error {
	q, args := l.InsertAudit(rec)
	return tx.Exec(ctx, q, args...)
}

// tx runs fn in a transaction of Begin and commits it when fn succeeds;
// every error comes back mapped (DBErr), naming what.
func (l Lifecycle) tx(ctx context.Context, d Dialect, id, what string, fn func(Tx) error) error {
	tx, commit, rollback, err := l.Begin(ctx)
	if err != nil {
		return DBErr(ctx, d, id, what, err)
	}
	defer rollback()
	if err := fn(tx); err != nil {
		return DBErr(ctx, d, id, what, err)
	}
	return DBErr(ctx, d, id, what, commit())
}
