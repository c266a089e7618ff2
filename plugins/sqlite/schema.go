package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/seed-e5e476df/logbook/sdk"
)

// The database identity of docs/storage.md: PRAGMA application_id ("LOGB") and
// PRAGMA user_version (the schema version).
const (
	ApplicationID = 1280264002 // 0x4C4F4742, "LOGB"
	UserVersion   = 3
)

// schema is the reference DDL of docs/storage.md, in creation order; since
// is the schema version (user_version) that added the table, and columns
// are the columns later versions added to it. An older database is
// migrated by creating the tables and adding the columns of the versions
// after its own (version 2: the audit and holds tables; version 3: the
// operation column of events).
var schema = []table{
	{name: "store_state", since: 1, ddl: `CREATE TABLE store_state(singleton INTEGER PRIMARY KEY CHECK (singleton = 1), store_id TEXT NOT NULL) STRICT`},
	{name: "sessions", since: 1, autoIndex: true, ddl: `CREATE TABLE sessions(
  id TEXT PRIMARY KEY, format_version INTEGER NOT NULL, created_at INTEGER NOT NULL,
  header TEXT NOT NULL,
  next_seq INTEGER NOT NULL, incarnation TEXT NOT NULL, revision INTEGER NOT NULL) STRICT`},
	{name: "events", since: 1, autoIndex: true, ddl: `CREATE TABLE events(
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, type TEXT NOT NULL, time INTEGER NOT NULL,
  data ANY NOT NULL,
  surface_op TEXT, source_event_seqs TEXT,
  ignorable INTEGER CHECK (ignorable IS NULL OR ignorable = 1),
  PRIMARY KEY(session_id, seq)) STRICT`,
		// 3: the operation member of the envelope (docs/format.md,
		// "Operation ids"), its canonical JSON or NULL.
		columns: []column{{since: 3, def: "operation TEXT"}}},
	// 2: the audit log and legal holds (docs/storage.md, "Deleting sessions").
	{name: "audit", since: 2, ddl: `CREATE TABLE audit(
  id INTEGER PRIMARY KEY, time_us INTEGER NOT NULL, op TEXT NOT NULL, session_id TEXT NOT NULL,
  events INTEGER NOT NULL, digest TEXT NOT NULL, reason TEXT NOT NULL, actor TEXT NOT NULL) STRICT`},
	{name: "holds", since: 2, autoIndex: true, ddl: `CREATE TABLE holds(
  session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE) STRICT`},
}

// table is one table of the reference schema.
type table struct {
	name, ddl string
	since     int64
	autoIndex bool // a non-integer primary key: SQLite makes sqlite_autoindex_<name>_1
	columns   []column
}

// column is a column a later schema version added to a table, with ALTER
// TABLE … ADD COLUMN def.
type column struct {
	since int64
	def   string
}

// constraints is where the table constraints of a reference DDL begin:
// SQLite records an added column before them.
const constraints = ",\n  PRIMARY KEY("

// ddlAt is the DDL of t in a database of schema version v, as sqlite_master
// holds it: the columns added up to v after the last column definition.
func (t table) ddlAt(v int64) string {
	var added string
	for _, c := range t.columns {
		if c.since <= v {
			added += ", " + c.def
		}
	}
	if added == "" {
		return t.ddl
	}
	i := strings.LastIndex(t.ddl, constraints)
	return t.ddl[:i] + added + t.ddl[i:]
}

// schemaObject is one row of sqlite_master.
type schemaObject struct {
	typ, name, table string
	sql              sql.NullString
}

func (o schemaObject) String() string { return o.typ + " " + strconv.Quote(o.name) }

// expectedObjects is sqlite_master of a database holding exactly the
// reference schema of the given version: its tables and the indexes SQLite
// makes for their non-integer primary keys. SQL text is compared after
// normalizeSQL.
func expectedObjects(version int64) []schemaObject {
	var want []schemaObject
	for _, t := range schema {
		if t.since > version {
			continue
		}
		want = append(want, schemaObject{typ: "table", name: t.name, table: t.name, sql: sql.NullString{String: t.ddlAt(version), Valid: true}})
		if t.autoIndex {
			want = append(want, schemaObject{typ: "index", name: "sqlite_autoindex_" + t.name + "_1", table: t.name})
		}
	}
	return want
}

// normalizeSQL makes DDL text comparable across formatting: comments
// dropped, whitespace runs collapsed, no space around punctuation, keywords
// and identifiers folded to lower case (SQLite's are case-insensitive;
// the reference DDL has no quoted strings whose case matters).
func normalizeSQL(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '-' && i+1 < len(s) && s[i+1] == '-' {
			for i+1 < len(s) && s[i+1] != '\n' {
				i++
			}
			c = ' '
		}
		switch {
		case c == '\t' || c == '\n' || c == '\r':
			c = ' '
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		if c == ' ' && (len(b) == 0 || b[len(b)-1] == ' ') {
			continue
		}
		b = append(b, c)
	}
	punct := func(c byte) bool { return c == '(' || c == ')' || c == ',' || c == '=' }
	out := b[:0]
	for i, c := range b {
		if c == ' ' && (len(out) == 0 || punct(out[len(out)-1]) || i+1 == len(b) || punct(b[i+1])) {
			continue
		}
		out = append(out, c)
	}
	return string(out)
}

// identity is what a database says about itself.
type identity struct {
	applicationID, userVersion int64
	objects                    []schemaObject // sqlite_master but statistics tables
}

func readIdentity(ctx context.Context, tx *sql.Tx) (identity, error) {
	var id identity
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id.applicationID); err != nil {
		return id, err
	}
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&id.userVersion); err != nil {
		return id, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_stat%' ESCAPE '\\' ORDER BY type, name")
	if err != nil {
		return id, err
	}
	defer rows.Close()
	for rows.Next() {
		var o schemaObject
		if err := rows.Scan(&o.typ, &o.name, &o.table, &o.sql); err != nil {
			return id, err
		}
		id.objects = append(id.objects, o)
	}
	return id, rows.Err()
}

// pristine reports a database nobody has used: docs/storage.md.
func (id identity) pristine() bool {
	return id.applicationID == 0 && id.userVersion == 0 && len(id.objects) == 0
}

// mismatch describes how id differs from a logbook database of the
// current version, or of an older version this build migrates, or returns
// "" when it is one.
func (id identity) mismatch() string {
	var diffs []string
	if id.applicationID != ApplicationID {
		diffs = append(diffs, fmt.Sprintf("application_id is %d (want %d)", id.applicationID, ApplicationID))
	}
	version := id.userVersion
	if version < 1 || version > UserVersion {
		diffs = append(diffs, fmt.Sprintf("user_version is %d (want 1 … %d)", id.userVersion, UserVersion))
		version = UserVersion
	}
	want := expectedObjects(version)
	for _, w := range want {
		i := slices.IndexFunc(id.objects, func(o schemaObject) bool { return o.typ == w.typ && o.name == w.name })
		switch {
		case i < 0:
			diffs = append(diffs, "missing "+w.String())
		case id.objects[i].table != w.table || id.objects[i].sql.Valid != w.sql.Valid ||
			normalizeSQL(id.objects[i].sql.String) != normalizeSQL(w.sql.String):
			diffs = append(diffs, fmt.Sprintf("%s differs from the reference DDL: found %s", w, strconv.Quote(id.objects[i].sql.String)))
		}
	}
	for _, o := range id.objects {
		if !slices.ContainsFunc(want, func(w schemaObject) bool { return o.typ == w.typ && o.name == w.name }) {
			diffs = append(diffs, "unexpected "+o.String())
		}
	}
	return strings.Join(diffs, "; ")
}

// initialize gives a pristine database the schema, its store id and its
// identity pragmas, inside tx (BEGIN IMMEDIATE), and returns the store id.
func initialize(ctx context.Context, tx *sql.Tx) (string, error) {
	if err := migrate(ctx, tx, 0); err != nil {
		return "", err
	}
	storeID := uuid.NewString()
	if _, err := tx.ExecContext(ctx, "INSERT INTO store_state(singleton, store_id) VALUES (1, ?)", storeID); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA application_id = "+strconv.Itoa(ApplicationID)); err != nil {
		return "", err
	}
	return storeID, nil
}

// migrate creates the tables added after version from and adds the
// columns added after it to the older tables, inside tx (BEGIN
// IMMEDIATE), and sets user_version to UserVersion.
func migrate(ctx context.Context, tx *sql.Tx, from int64) error {
	for _, t := range schema {
		if t.since > from {
			if _, err := tx.ExecContext(ctx, t.ddlAt(UserVersion)); err != nil {
				return err
			}
			continue
		}
		for _, c := range t.columns {
			if c.since <= from {
				continue
			}
			if _, err := tx.ExecContext(ctx, "ALTER TABLE "+t.name+" ADD COLUMN "+c.def); err != nil {
				return err
			}
		}
	}
	_, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(UserVersion))
	return err
}

// schemaMismatch is the SCHEMA_MISMATCH error for the database at path.
func schemaMismatch(path, what string) *sdk.Error {
	return sdk.Errorf(sdk.CodeSchemaMismatch, op, "%s is not a logbook database this build can use: %s; point path at a logbook database or at a new file", strconv.Quote(path), what)
}
