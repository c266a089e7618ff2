package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// store is one database opened by this process, shared by every Backend
// configured with it: one *sql.DB per path per process.
//
// The *sql.DB has exactly one connection (SetMaxOpenConns(1)), kept for the
// life of the store. SQLite admits one writer per database anyway, and with
// one connection no two calls of this process ever wait on each other's
// locks (only another process can make a call wait, up to busy_timeout),
// the connection-scoped pragmas set after the schema check (journal_mode)
// cannot be missing on a second connection, and an in-memory database is
// one database, not one per connection. Calls of this process take turns
// on the connection; a Read holds it for one chunk at a time, never while
// its callback runs.
type store struct {
	key     string // registry key; "" for an in-memory database
	path    string // absolute path, or MemoryPath
	memory  bool
	journal string
	busy    time.Duration
	db      *sql.DB
	id      string // store_state.store_id: the first part of every revision
	codec   *codec
	stmts   statements

	mu      sync.Mutex
	refs    int // Backends using the store
	claims  map[claimKey]*claim
	tornDir string // where torn rows go; for memory, made on first use
}

// registry holds the stores of this process by file identity, so that every
// Backend configured with one database file (under any path) shares its
// *sql.DB and its claim table. It is the one piece of process-wide state of
// this package, and exists because a database file must be opened once per
// process for the in-process claim table to mean anything.
var registry = struct {
	sync.Mutex
	stores map[string]*store
}{stores: map[string]*store{}}

// openStore returns the store for cfg's database, opening it (file safety,
// pragmas, schema) when this process has not yet, and counts one more user.
func openStore(ctx context.Context, cfg Config) (*store, error) {
	if cfg.memory() {
		s := &store{path: MemoryPath, memory: true, journal: "memory", busy: cfg.BusyTimeout}
		if err := s.connect(ctx); err != nil {
			return nil, err
		}
		s.refs = 1
		return s, nil
	}
	path, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, configErr("the database path %s cannot be made absolute: %v", strconv.Quote(cfg.Path), err)
	}
	fid, err := prepareFile(path)
	if err != nil {
		return nil, err
	}
	// The registry stays locked while a new store connects (up to
	// busy_timeout when another process holds the write lock), so that one
	// file is never opened twice; opening a database is rare.
	registry.Lock()
	defer registry.Unlock()
	if s, ok := registry.stores[fid.String()]; ok {
		if s.journal != cfg.JournalMode || s.busy != cfg.BusyTimeout {
			return nil, configErr("%s is already open in this process with journal_mode %s and busy_timeout %d ms; this config asks for %s and %d ms; use the same settings for one database",
				strconv.Quote(path), s.journal, s.busy.Milliseconds(), cfg.JournalMode, cfg.BusyTimeout.Milliseconds())
		}
		s.mu.Lock()
		s.refs++
		s.mu.Unlock()
		return s, nil
	}
	s := &store{key: fid.String(), path: path, journal: cfg.JournalMode, busy: cfg.BusyTimeout, tornDir: path + ".torn"}
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	// The file checked before the open must be the file SQLite opened.
	fi, err := checkFile(path, "database")
	if err == nil && (fi == nil || idOf(fi) != fid) {
		err = unsafeErr("the database %s was replaced while it was being opened", strconv.Quote(path))
	}
	if err != nil {
		s.closeDB()
		return nil, err
	}
	s.refs = 1
	registry.stores[s.key] = s
	return s, nil
}

// unref drops one user and closes the store after the last.
func (s *store) unref() error {
	registry.Lock()
	defer registry.Unlock()
	s.mu.Lock()
	s.refs--
	last := s.refs == 0
	s.mu.Unlock()
	if !last {
		return nil
	}
	if s.key != "" {
		delete(registry.stores, s.key)
	}
	return s.closeDB()
}

func (s *store) closeDB() error {
	s.stmts.close()
	if s.codec != nil {
		s.codec.close()
	}
	return s.db.Close()
}

// pageSize is the page size of a database this backend creates: with
// rows of a few hundred bytes (compressed data), 16 KiB pages leave about
// 1% of a page unused where 4 KiB pages leave 7%, and cost one page
// header per 16 KiB. An existing database keeps its page size.
const pageSize = 16384

// dsn is the data source name: a file: URI (so that any path character is
// escaped, not parsed) with the connection-scoped pragmas of docs/storage.md
// that change nothing in the file (page_size only takes effect in a
// database that has no page yet). journal_mode is set only after the
// database has proven to be a logbook database, so a foreign file is never
// converted to WAL.
func (s *store) dsn() string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(s.busy.Milliseconds(), 10)+")")
	q.Add("_pragma", "trusted_schema(OFF)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "page_size("+strconv.Itoa(pageSize)+")")
	q.Set("_txlock", "immediate")
	name := s.path
	if !s.memory {
		var b strings.Builder
		for i := 0; i < len(name); i++ {
			if c := name[i]; c == '%' || c == '?' || c == '#' || c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, "%%%02X", c)
			} else {
				b.WriteByte(c)
			}
		}
		name = b.String()
	}
	return "file:" + name + "?" + q.Encode()
}

// connect opens the database, reads back every pragma, checks or creates the
// schema inside BEGIN IMMEDIATE, sets the journal mode and prepares the
// statements.
func (s *store) connect(ctx context.Context) (err error) {
	s.claims = map[claimKey]*claim{}
	s.db, err = sql.Open("sqlite", s.dsn())
	if err != nil {
		return s.dbErr(ctx, "", "opening the database", err)
	}
	s.db.SetMaxOpenConns(1)
	s.db.SetMaxIdleConns(1)
	s.db.SetConnMaxLifetime(0)
	s.db.SetConnMaxIdleTime(0)
	defer func() {
		if err != nil {
			s.closeDB()
		}
	}()
	if err := s.checkPragma(ctx, "trusted_schema", "0"); err != nil {
		return err
	}
	if err := s.checkPragma(ctx, "foreign_keys", "1"); err != nil {
		return err
	}
	if err := s.checkPragma(ctx, "busy_timeout", strconv.FormatInt(s.busy.Milliseconds(), 10)); err != nil {
		return err
	}
	if s.id, err = s.ensureSchema(ctx); err != nil {
		return err
	}
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode = "+s.journal).Scan(&mode); err != nil {
		return s.dbErr(ctx, "", "setting journal_mode", err)
	}
	if !strings.EqualFold(mode, s.journal) {
		return sdk.Errorf(sdk.CodeIOError, op, "PRAGMA journal_mode = %s on %s left journal_mode %s; the file system may not support it", s.journal, strconv.Quote(s.path), mode)
	}
	if err := s.checkPragma(ctx, "synchronous", "2"); err != nil {
		return err
	}
	if s.codec, err = newCodec(); err != nil {
		return sdk.Wrap(sdk.CodeIOError, op, err)
	}
	return s.stmts.prepare(ctx, s)
}

// checkPragma reads PRAGMA name back and requires want.
func (s *store) checkPragma(ctx context.Context, name, want string) error {
	var got string
	if err := s.db.QueryRowContext(ctx, "PRAGMA "+name).Scan(&got); err != nil {
		return s.dbErr(ctx, "", "reading PRAGMA "+name, err)
	}
	if got != want {
		return sdk.Errorf(sdk.CodeIOError, op, "PRAGMA %s on %s reads back %s; want %s", name, strconv.Quote(s.path), got, want)
	}
	return nil
}

// ensureSchema checks the database's identity inside BEGIN IMMEDIATE,
// initializing a pristine database, and returns the store id.
func (s *store) ensureSchema(ctx context.Context) (string, error) {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return "", s.dbErr(ctx, "", "starting the schema check", err)
	}
	defer tx.Rollback()
	id, err := readIdentity(ctx, tx)
	if err != nil {
		return "", s.dbErr(ctx, "", "reading the schema", err)
	}
	var storeID string
	if id.pristine() {
		if storeID, err = initialize(ctx, tx); err != nil {
			return "", s.dbErr(ctx, "", "creating the schema", err)
		}
	} else {
		if m := id.mismatch(); m != "" {
			return "", schemaMismatch(s.path, m)
		}
		if id.userVersion < UserVersion {
			if err := migrate(ctx, tx, id.userVersion); err != nil {
				return "", s.dbErr(ctx, "", "migrating the schema from version "+strconv.FormatInt(id.userVersion, 10), err)
			}
		}
		err := tx.QueryRowContext(ctx, "SELECT store_id FROM store_state WHERE singleton = 1").Scan(&storeID)
		if err == sql.ErrNoRows || (err == nil && storeID == "") {
			return "", schemaMismatch(s.path, "store_state has no store id")
		}
		if err != nil {
			return "", s.dbErr(ctx, "", "reading the store id", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return "", s.dbErr(ctx, "", "committing the schema check", err)
	}
	return storeID, nil
}

// checkIdentity re-checks application_id and user_version inside a write
// transaction (docs/storage.md).
func (s *store) checkIdentity(ctx context.Context, tx *sql.Tx) error {
	var app, ver int64
	if err := tx.StmtContext(ctx, s.stmts.identity).QueryRowContext(ctx).Scan(&app, &ver); err != nil {
		return err
	}
	if app != ApplicationID || ver != UserVersion {
		return schemaMismatch(s.path, fmt.Sprintf("application_id is %d (want %d), user_version is %d (want %d)", app, ApplicationID, ver, UserVersion))
	}
	return nil
}

// shrinkWAL checkpoints the WAL into the database and truncates it to
// zero bytes, best effort: the checkpoint runs with busy_timeout 0 and
// leaves the WAL as it is when another connection holds a lock it needs.
// Close calls it when a writer lets go of a session, so that a database
// nobody writes to takes only its own pages on disk, even when the process
// then ends without closing the database (SQLite checkpoints and removes
// the WAL only when the last connection closes).
func (s *store) shrinkWAL() {
	if s.journal != "wal" {
		return
	}
	ctx := context.Background()
	c, err := s.db.Conn(ctx)
	if err != nil {
		return
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		return
	}
	_, _ = c.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	if _, err := c.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.FormatInt(s.busy.Milliseconds(), 10)); err != nil {
		_ = c.Raw(func(any) error { return driver.ErrBadConn }) // never reuse a connection without its busy_timeout
	}
}

// tornDirectory returns the directory for the torn-row artifacts of s's
// tenant, creating it: the store's torn-row directory, or the tenant's
// directory in it.
func (s space) tornDirectory() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.memory && s.tornDir == "" {
		dir, err := os.MkdirTemp("", "logbook-sqlite-memory-*.torn")
		if err != nil {
			return "", sdk.Wrap(sdk.CodeIOError, op, err)
		}
		s.tornDir = dir
	} else if err := secureDir(s.tornDir, "torn-row directory"); err != nil {
		return "", err
	}
	dir := s.dir(s.tornDir)
	if dir == s.tornDir {
		return dir, nil
	}
	return dir, secureDir(dir, "torn-row directory of tenant "+strconv.Quote(s.tenant))
}

// tornDirOf is the directory of s's tenant's torn-row artifacts, "" when
// none was made yet.
func (s space) tornDirOf() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tornDir == "" {
		return ""
	}
	return s.dir(s.tornDir)
}
