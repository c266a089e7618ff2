package sqlstore

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Dialect is what a backend supplies to the shared code: its name in
// errors, how its driver's errors map to codes, how its SQL is spelled
// and run, and the tenant its statements address. A backend's view of one
// tenant implements it; the shared code calls it from any goroutine, so it
// must be safe for concurrent use.
type Dialect interface {
	Errors
	// Table is the name of the table t as a statement writes it
	// (qualified by a schema where the backend has one).
	Table(t string) string
	// Param is the placeholder of the n-th argument of a statement, from 1
	// ("?1", "$1").
	Param(n int) string
	// Tenant is the tenant whose sessions the statements address: the
	// value of the tenant column of every row they read or write ("" the
	// implicit tenant). Every statement of the shared code is scoped by
	// it (Scope), so a dialect is one tenant's view of the database.
	Tenant() string
	// QueryRow runs a query outside any transaction and returns its first
	// row.
	QueryRow(ctx context.Context, query string, args ...any) Row
	// Query runs a query outside any transaction and returns its rows
	// and done, which closes them; with an error, rows and done are nil.
	Query(ctx context.Context, query string, args ...any) (rows Rows, done func(), err error)
}

// Errors is the part of a Dialect that maps a driver's errors (DBErr):
// a backend's store has it whatever the tenant.
type Errors interface {
	// Op is the Op of every *sdk.Error the shared code returns for the
	// backend ("sqlite", "postgres").
	Op() string
	// Classify maps an error of the driver to a code and a detail that
	// starts with what; ok is false for an error it does not know, which
	// becomes IO_ERROR (Failed).
	Classify(err error, what string) (code sdk.Code, detail string, ok bool)
	// Failed is the detail of an IO_ERROR of what: it names the database.
	Failed(what string) string
	// Cause is what the *sdk.Error of a driver error wraps: err, or err
	// with secrets blanked out of its text.
	Cause(err error) error
}

// Row is one row of a query: *sql.Row and pgx.Row both are. Scan reports
// a query without rows with the driver's own error.
type Row interface {
	// Scan copies the row's columns into dest.
	Scan(dest ...any) error
}

// Rows are the rows of a query: *sql.Rows and pgx.Rows both are. The
// caller closes them, as its driver says.
type Rows interface {
	// Next advances to the next row; false at the end or on an error.
	Next() bool
	// Scan copies the current row's columns into dest.
	Scan(dest ...any) error
	// Err is the error that ended Next, or nil.
	Err() error
}

// Collect scans every row of rows with scan, in order. The caller still
// closes rows.
func Collect[T any](rows Rows, scan func(Row) (T, error)) ([]T, error) {
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Scope is the condition that scopes a statement to d's tenant: the
// tenant column of the table alias prefix (with its dot, or "") equal to
// the placeholder of argument n, whose value is d.Tenant().
func Scope(d Dialect, prefix string, n int) string {
	return prefix + "tenant = " + d.Param(n)
}
