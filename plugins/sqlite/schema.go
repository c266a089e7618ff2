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
	UserVersion   = 4
)

// schema is the reference DDL of docs/storage.md at UserVersion, in
// creation order. Version 4 added the tenant column (” the implicit
// tenant) to every table keyed by session and made it the first column
// of their keys: (tenant, id), (tenant, session_id, seq), (tenant,
// session_id); audit rows carry it too.
var schema = []table{
	{name: "store_state", ddl: `CREATE TABLE store_state(singleton INTEGER PRIMARY KEY CHECK (singleton = 1), store_id TEXT NOT NULL) STRICT`},
	{name: "sessions", autoIndex: true, ddl: `CREATE TABLE sessions(
  tenant TEXT NOT NULL DEFAULT '', id TEXT NOT NULL, format_version INTEGER NOT NULL, created_at INTEGER NOT NULL,
  header TEXT NOT NULL,
  next_seq INTEGER NOT NULL, incarnation TEXT NOT NULL, revision INTEGER NOT NULL,
  PRIMARY KEY(tenant, id)) STRICT`},
	{name: "events", autoIndex: true, ddl: `CREATE TABLE events(
  tenant TEXT NOT NULL DEFAULT '', session_id TEXT NOT NULL,
  seq INTEGER NOT NULL, type TEXT NOT NULL, time INTEGER NOT NULL,
  data ANY NOT NULL,
  surface_op TEXT, source_event_seqs TEXT,
  ignorable INTEGER CHECK (ignorable IS NULL OR ignorable = 1),
  operation TEXT,
  PRIMARY KEY(tenant, session_id, seq),
  FOREIGN KEY(tenant, session_id) REFERENCES sessions(tenant, id) ON DELETE CASCADE) STRICT`},
	{name: "audit", ddl: `CREATE TABLE audit(
  id INTEGER PRIMARY KEY, tenant TEXT NOT NULL DEFAULT '', time_us INTEGER NOT NULL, op TEXT NOT NULL, session_id TEXT NOT NULL,
  events INTEGER NOT NULL, digest TEXT NOT NULL, reason TEXT NOT NULL, actor TEXT NOT NULL) STRICT`},
	{name: "holds", autoIndex: true, ddl: `CREATE TABLE holds(
  tenant TEXT NOT NULL DEFAULT '', session_id TEXT NOT NULL,
  PRIMARY KEY(tenant, session_id),
  FOREIGN KEY(tenant, session_id) REFERENCES sessions(tenant, id) ON DELETE CASCADE) STRICT`},
}

// legacy is the reference DDL of the schema versions before tenants (1 to
// 3), in creation order; since is the version that added the table, and
// columns are the columns later versions added to it (version 2: the
// audit and holds tables; version 3: the operation column of events). A
// database of one of them is brought to version 3 by creating the tables
// and adding the columns of the versions after its own, then to version 4
// by rebuilding its tables (migrate).
var legacy = []table{
	{name: "store_state", since: 1, ddl: schema[0].ddl},
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

// lastLegacy is the last schema version before tenants.
const lastLegacy = 3

// rebuilt are the tables version 4 rebuilds, children after their parent,
// each with the columns its rows are copied with: the legacy table's
// columns, and ” for the tenant of every copied row.
var rebuilt = []struct{ name, columns string }{
	{"sessions", "id, format_version, created_at, header, next_seq, incarnation, revision"},
	{"events", "session_id, seq, type, time, data, surface_op, source_event_seqs, ignorable, operation"},
	{"audit", "id, time_us, op, session_id, events, digest, reason, actor"},
	{"holds", "session_id"},
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
	tables := schema
	if version <= lastLegacy {
		tables = legacy
	}
	var want []schemaObject
	for _, t := range tables {
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
	for _, t := range schema {
		if _, err := tx.ExecContext(ctx, t.ddl); err != nil {
			return "", err
		}
	}
	storeID := uuid.NewString()
	if _, err := tx.ExecContext(ctx, "INSERT INTO store_state(singleton, store_id) VALUES (1, ?)", storeID); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA application_id = "+strconv.Itoa(ApplicationID)); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(UserVersion)); err != nil {
		return "", err
	}
	return storeID, nil
}

// migrate brings a database of schema version from (1 … 3) to
// UserVersion inside tx (BEGIN IMMEDIATE), so that a crash or a failure
// anywhere leaves it as it was: first to version 3 (the tables and
// columns added after from), then to version 4 by rebuilding the tables
// keyed by session, since SQLite cannot change a primary key in place.
// The legacy tables are renamed away (SQLite renames the references of
// their children with them), the reference tables created, every row
// copied with the tenant ” (the implicit tenant), and the legacy tables
// dropped, children first, so that no ON DELETE CASCADE fires on a copied
// row. user_version is set last.
func migrate(ctx context.Context, tx *sql.Tx, from int64) error {
	exec := func(q string) error {
		_, err := tx.ExecContext(ctx, q)
		return err
	}
	for _, t := range legacy {
		if t.since > from {
			if err := exec(t.ddlAt(lastLegacy)); err != nil {
				return err
			}
			continue
		}
		for _, c := range t.columns {
			if c.since > from {
				if err := exec("ALTER TABLE " + t.name + " ADD COLUMN " + c.def); err != nil {
					return err
				}
			}
		}
	}
	for _, r := range rebuilt {
		if err := exec("ALTER TABLE " + r.name + " RENAME TO " + r.name + "_v3"); err != nil {
			return err
		}
	}
	for _, r := range rebuilt {
		i := slices.IndexFunc(schema, func(t table) bool { return t.name == r.name })
		if err := exec(schema[i].ddl); err != nil {
			return err
		}
	}
	for _, r := range rebuilt {
		if err := exec("INSERT INTO " + r.name + "(tenant, " + r.columns + ") SELECT '', " + r.columns + " FROM " + r.name + "_v3"); err != nil {
			return err
		}
	}
	for _, name := range []string{"holds", "events", "audit", "sessions"} {
		if err := exec("DROP TABLE " + name + "_v3"); err != nil {
			return err
		}
	}
	return exec("PRAGMA user_version = " + strconv.Itoa(UserVersion))
}

// schemaMismatch is the SCHEMA_MISMATCH error for the database at path.
func schemaMismatch(path, what string) *sdk.Error {
	return sdk.Errorf(sdk.CodeSchemaMismatch, op, "%s is not a logbook database this build can use: %s; point path at a logbook database or at a new file", strconv.Quote(path), what)
}
