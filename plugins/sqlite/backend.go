package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"sync"

	"github.com/google/uuid"
	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// Name is the name Describe reports and the plugin's name.
const Name = "sqlite"

const (
	// A Read chunk ends after readChunkEvents events or once it holds
	// readChunkBytes bytes, whichever comes first (always ≥ 1 event).
	readChunkEvents = 512
	readChunkBytes  = 1 << 20
	// listPage is how many sessions rows List reads per query.
	listPage = 256
	// prepareMin is the fewest events for which Append prepares a batch on
	// other goroutines while inserting it.
	prepareMin = 128
)

// Backend is one instance of the SQLite backend: an sdk.Persistence and an
// sdk.Configurable. Every Backend configured with one database file in a
// process shares that database's connection and write claims; each has its
// own handles and its own unmaterialized creates (see the package
// documentation). All methods are safe for concurrent use.
type Backend struct {
	mu       sync.Mutex
	st       *store // nil until configured
	compress bool
	handles  *handles.Table[handle]
	pending  *handles.Claims[handle] // session id → create handle, until materialized
	shut     bool
}

// handle is an open handle of a Backend.
type handle struct {
	name  string
	id    string
	write bool
	ops   sync.Mutex // serializes Append and Flush on the handle

	// Guarded by Backend.mu.
	closed      bool
	pending     []byte     // canonical header of a create not yet stored; nil once stored
	header      sdk.Header // of a pending create
	incarnation string     // of the stored session a write handle owns
	floor       int64      // most events this handle has seen
	clampEnd    int64      // read handle of a torn log: end of its valid prefix; -1 none
	clampRev    string     // the revision clampEnd belongs to
	cache       [][]byte   // envelopes [0, len) the Open scan decoded, for the first Read; nil none
	cacheRev    string     // the revision cache belongs to
	cacheData   int64      // the PRAGMA data_version cache belongs to
}

// New returns an unconfigured Backend, as a plugin process serves it: the
// host calls Configure first, and every other call fails with
// CONFIG_INVALID until it has succeeded.
func New() *Backend {
	return &Backend{handles: handles.NewTable[handle](op), pending: handles.NewClaims[handle]()}
}

// Open returns a Backend over the database cfg names, opened and checked
// as docs/storage.md says (file safety, pragmas, schema). Release it with
// Shutdown.
func Open(ctx context.Context, cfg Config) (*Backend, error) {
	b := New()
	if err := b.configure(ctx, cfg); err != nil {
		return nil, err
	}
	return b, nil
}

// Configure implements sdk.Configurable: it parses config (ParseConfig)
// and opens the database. It may succeed once.
func (b *Backend) Configure(ctx context.Context, config []byte) error {
	cfg, err := ParseConfig(config)
	if err != nil {
		return err
	}
	return b.configure(ctx, cfg)
}

func (b *Backend) configure(ctx context.Context, cfg Config) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.st != nil || b.shut {
		return configErr("this sqlite backend is already configured (or shut down); Configure may succeed once")
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	b.st, b.compress = st, cfg.CompressData
	return nil
}

// Peer returns a second Backend over b's database, as another configuration
// of the same file in this process would be: it shares the connection and
// the write claims, and has its own handles and creates. For an in-memory
// database it is the only way to reach the same data twice. Release it
// with Shutdown.
func (b *Backend) Peer() (*Backend, error) {
	st, err := b.store()
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	st.refs++
	st.mu.Unlock()
	p := New()
	p.st, p.compress = st, b.compress
	return p, nil
}

// Shutdown closes every handle of b (releasing their claims) and, when b
// was the last Backend over its database in this process, closes the
// database. Later calls fail with CONFIG_INVALID. Shutdown is idempotent.
func (b *Backend) Shutdown() error {
	b.mu.Lock()
	st := b.st
	if b.shut || st == nil {
		b.shut = true
		b.mu.Unlock()
		return nil
	}
	b.shut = true
	hs := b.handles.Drain()
	for _, hd := range hs {
		hd.closed = true
	}
	b.pending = handles.NewClaims[handle]()
	b.mu.Unlock()
	for _, hd := range hs {
		if hd.write {
			st.release(hd.id, hd)
		}
	}
	return st.unref()
}

// store returns b's database, or CONFIG_INVALID before Configure and after
// Shutdown.
func (b *Backend) store() (*store, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.shut:
		return nil, configErr("this sqlite backend was shut down")
	case b.st == nil:
		return nil, configErr("this sqlite backend is not configured; Configure it with its path first")
	}
	return b.st, nil
}

// Describe reports the name "sqlite", format version 1, and compression
// "zstd" when this Backend compresses data.
func (b *Backend) Describe(ctx context.Context) (sdk.Description, error) {
	if err := handles.Ended(ctx, op, "describe"); err != nil {
		return sdk.Description{}, err
	}
	if _, err := b.store(); err != nil {
		return sdk.Description{}, err
	}
	d := sdk.Description{Name: Name, FormatVersion: sdk.FormatVersion}
	if b.compress {
		d.Compression = "zstd"
	}
	return d, nil
}

// Create takes the write claim on h.ID (the in-process claim table, then
// the flock of its lock file) and returns its write handle: from then on,
// until the handle closes, a Create of the id in any process is
// SESSION_ALREADY_EXISTS and an Open(write) ALREADY_OWNED. The session is
// stored, header and first batch in one transaction, at the first Append
// or Flush of the handle.
func (b *Backend) Create(ctx context.Context, h sdk.Header) (sdk.Opened, error) {
	if err := handles.Ended(ctx, op, "create"); err != nil {
		return sdk.Opened{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.Opened{}, err
	}
	h, hdr, err := handles.CheckCreate(op, h, st.path)
	if err != nil {
		return sdk.Opened{}, err
	}
	if b.pending.Holder(h.ID) != nil {
		return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "it was created in this instance and is not stored yet")
	}
	hd := &handle{name: b.handles.NewName(), id: h.ID, write: true, clampEnd: -1, pending: hdr, header: h}
	// A stored row answers without the claim: taking it, even for a
	// moment, would refuse a write open of that session elsewhere. Else the
	// claim comes before the look that counts: once it is held, no other
	// process can store the id, so the answer cannot go stale.
	if _, found, err := st.session(ctx, st.stmts.session, h.ID); err == nil && found {
		return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "it is stored")
	}
	if err := st.acquire(h.ID, hd); err != nil {
		if errors.Is(err, errClaimed) {
			return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "another handle holds its write claim ("+err.Error()+"): it is stored or being created")
		}
		return sdk.Opened{}, withSession(err, h.ID)
	}
	_, found, err := st.session(ctx, st.stmts.session, h.ID)
	if err == nil && found {
		err = handles.AlreadyExists(op, h.ID, "it is stored")
	} else if err != nil {
		err = st.dbErr(ctx, h.ID, "create", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil && b.shut {
		err = configErr("this sqlite backend was shut down")
	}
	if err != nil {
		st.release(h.ID, hd)
		return sdk.Opened{}, err
	}
	// No other create of the id is pending here, so the Take succeeds: a
	// pending create holds the store's claim until it is stored or its
	// handle closes, and this one holds it now.
	b.pending.Take(h.ID, hd)
	b.handles.Put(hd.name, hd)
	return sdk.Opened{Handle: hd.name, Header: h}, nil
}

// Open opens a stored session (docs/plugins.md, docs/storage.md). The format gate
// and the header check come first; AccessWrite then takes the write claim
// (ALREADY_OWNED when a handle of any process holds it). The rows are
// scanned for a torn tail: a read open reports it and leaves it alone; a
// write open saves the torn rows to <path>.torn/ and removes them.
func (b *Backend) Open(ctx context.Context, id string, access sdk.Access) (sdk.Opened, error) {
	if err := handles.Ended(ctx, op, "open"); err != nil {
		return sdk.Opened{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.Opened{}, err
	}
	if err := handles.CheckOpen(op, id, access); err != nil {
		return sdk.Opened{}, err
	}
	write := access == sdk.AccessWrite
	hd := &handle{name: b.handles.NewName(), id: id, write: write, clampEnd: -1}

	o, err := st.openSession(ctx, id, hd)
	if err != nil {
		if write {
			st.release(id, hd)
		}
		return sdk.Opened{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shut {
		if write {
			st.release(id, hd)
		}
		return sdk.Opened{}, configErr("this sqlite backend was shut down")
	}
	if !write && o.Torn != (sdk.Torn{}) {
		hd.clampEnd, hd.clampRev = int64(o.NextSeq), o.Revision
	}
	b.handles.Put(hd.name, hd)
	return o, nil
}

// Append stores events at firstSeq onwards in one BEGIN IMMEDIATE
// transaction under compare-and-set on next_seq, all or nothing
// (docs/storage.md). Checks run in this order: the context, HANDLE_CLOSED,
// READ_ONLY_HANDLE, INVALID_SEQ, ENVELOPE_INVALID and SEQ_NOT_CONTIGUOUS
// per event, then OWNERSHIP_LOST, and in the transaction SCHEMA_MISMATCH,
// SESSION_ALREADY_EXISTS (a create another instance stored first) and
// SEQ_CONFLICT. An empty batch is a compare-and-set probe that stores and
// materializes nothing.
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
	rows := prepareRows(events, firstSeq, hd.id, b.compress, st.codec)
	defer rows.wait()
	if !rows.parallel {
		if e := rows.firstErr(); e != nil {
			return sdk.Durable{}, e
		}
	}
	hd.ops.Lock()
	defer hd.ops.Unlock()
	d, err := b.commit(ctx, st, hd, firstSeq, rows, false)
	if err != nil {
		if e := rows.firstErr(); e != nil { // a bad event wins over any other failure
			return sdk.Durable{}, e
		}
		return sdk.Durable{}, err
	}
	return d, nil
}

// commit runs one append transaction for hd (materializing a pending
// create when rows is non-empty or materialize is set); hd.ops is held.
func (b *Backend) commit(ctx context.Context, st *store, hd *handle, firstSeq sdk.Seq, rows *batchRows, materialize bool) (sdk.Durable, error) {
	b.mu.Lock()
	closed, hdr, h, inc := hd.closed, hd.pending, hd.header, hd.incarnation
	b.mu.Unlock()
	if closed {
		return sdk.Durable{}, handles.HandleClosed(op, hd.name)
	}
	if hdr != nil {
		if firstSeq != 0 {
			return sdk.Durable{}, handles.SeqConflict(op, hd.id, int64(firstSeq), 0)
		}
		if rows.len() == 0 && !materialize {
			return sdk.Durable{}, nil
		}
	}
	if err := st.holds(hd.id, hd); err != nil {
		return sdk.Durable{}, err
	}
	d, inc, err := st.appendTx(ctx, hd.id, hdr, h, inc, firstSeq, rows)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil && hdr != nil {
		hd.pending, hd.incarnation = nil, inc
		b.pending.Release(hd.id, hd)
	}
	if err == nil {
		hd.floor = max(hd.floor, int64(d.NextSeq))
	}
	if hd.closed {
		st.release(hd.id, hd) // a Close that raced the append
	}
	if err != nil {
		return sdk.Durable{}, err
	}
	return d, nil
}

// Read calls fn with consecutive chunks of the events [offset,
// min(offset+length, end)); length -1 reads to the end. The end is the
// stored next_seq, or for a read handle opened on a torn log the end of the
// valid prefix until the tail has been cut. Each chunk is fresh and fn may
// keep it; fn runs while the backend holds nothing.
func (b *Backend) Read(ctx context.Context, handle string, offset sdk.Offset, length int64, fn func(events [][]byte) error) error {
	if err := handles.Ended(ctx, op, "read"); err != nil {
		return err
	}
	st, err := b.store()
	if err != nil {
		return err
	}
	hd, err := b.handles.Get(handle)
	if err != nil {
		return err
	}
	if err := handles.CheckRead(hd.id, offset, length); err != nil {
		return err
	}
	b.mu.Lock()
	cache, cacheRev, cacheData := hd.cache, hd.cacheRev, hd.cacheData
	hd.cache = nil // used by the first Read only
	b.mu.Unlock()
	end, r, err := b.end(ctx, st, hd, true)
	if err != nil || end == 0 {
		return err
	}
	stop := handles.ReadEnd(offset, length, end)
	if cache != nil && stop <= int64(len(cache)) && st.revision(r) == cacheRev {
		var dv int64
		if err := st.stmts.dataVersion.QueryRowContext(ctx).Scan(&dv); err != nil || dv != cacheData {
			cache = nil
		}
	}
	if cache != nil && stop <= int64(len(cache)) && st.revision(r) == cacheRev {
		// The rows are those the Open scan decoded: this connection has
		// not appended to or cut the session since (same revision), and
		// no other connection has committed anything (same data_version).
		for seq := int64(offset); seq < stop; {
			if err := handles.Ended(ctx, op, "read"); err != nil {
				return err
			}
			n, size := int64(0), 0
			for seq+n < stop && n < readChunkEvents && size < readChunkBytes {
				size += len(cache[seq+n])
				n++
			}
			chunk := cache[seq : seq+n : seq+n]
			if err := fn(chunk); err != nil {
				return err
			}
			seq += n
		}
		return nil
	}
	for seq := int64(offset); seq < stop; {
		if err := handles.Ended(ctx, op, "read"); err != nil {
			return err
		}
		chunk, err := st.readChunk(ctx, hd.id, seq, stop)
		if err != nil {
			return err
		}
		if err := fn(chunk); err != nil {
			return err
		}
		seq += int64(len(chunk))
	}
	return nil
}

// end returns how far hd may read, and its session's row: the stored
// next_seq, clamped for a read handle on a torn log while the revision is
// the one it was opened at. With advance it checks that the log did not
// shrink below what hd has seen (LOG_SHRANK) and records the new end. A
// pending create reads nothing.
func (b *Backend) end(ctx context.Context, st *store, hd *handle, advance bool) (int64, sessionRow, error) {
	b.mu.Lock()
	pending := hd.pending != nil
	b.mu.Unlock()
	if pending {
		return 0, sessionRow{}, nil
	}
	r, found, err := st.session(ctx, st.stmts.session, hd.id)
	if err != nil {
		return 0, r, st.dbErr(ctx, hd.id, "reading the session", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !found {
		if hd.floor > 0 {
			return 0, r, newErr(sdk.CodeLogShrank, hd.id, "this handle saw %d events; the session is no longer stored", hd.floor)
		}
		return 0, r, handles.NotFound(op, hd.id)
	}
	end := r.nextSeq
	if hd.clampEnd >= 0 {
		if st.revision(r) == hd.clampRev {
			end = min(end, hd.clampEnd)
		} else {
			hd.clampEnd = -1 // a write open has cut the torn tail since
		}
	}
	if !advance {
		return end, r, nil
	}
	if end < hd.floor {
		return 0, r, newErr(sdk.CodeLogShrank, hd.id, "this handle saw %d events; the stored log now has %d", hd.floor, end)
	}
	hd.floor = end
	return end, r, nil
}

// Flush materializes a pending create and reports the stored next seq and
// revision: every acknowledged append is already durable (synchronous =
// FULL). On a read handle it reports what the handle may read.
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
	if hd.write {
		hd.ops.Lock()
		defer hd.ops.Unlock()
		b.mu.Lock()
		pending := hd.pending != nil
		b.mu.Unlock()
		if pending {
			return b.commit(ctx, st, hd, 0, nil, true)
		}
		if err := st.holds(hd.id, hd); err != nil {
			return sdk.Durable{}, err
		}
	}
	end, r, err := b.end(ctx, st, hd, false)
	if err != nil {
		return sdk.Durable{}, err
	}
	b.mu.Lock()
	inc := hd.incarnation
	b.mu.Unlock()
	if hd.write && r.incarnation != inc {
		return sdk.Durable{}, newErr(sdk.CodeOwnershipLost, hd.id, "session %s was replaced since this handle opened it (incarnation %s, now %s)", strconv.Quote(hd.id), inc, r.incarnation)
	}
	return sdk.Durable{NextSeq: sdk.Offset(end), Revision: st.revision(r)}, nil
}

// Close releases the handle and its write claim. It is idempotent, never
// deletes stored data, and runs even when ctx has ended.
func (b *Backend) Close(_ context.Context, handle string) error {
	b.mu.Lock()
	hd, ok := b.handles.Remove(handle)
	if !ok {
		b.mu.Unlock()
		return nil
	}
	hd.closed = true
	b.pending.Release(hd.id, hd)
	st := b.st
	b.mu.Unlock()
	if hd.write {
		st.release(hd.id, hd)
	}
	return nil
}

// Stat describes a stored session from its sessions row: header,
// revision, format version and EventCount = next_seq, once the count and
// seq range of its rows (from the primary key's index, no event is read)
// show that they match next_seq; a session whose rows do not is damaged
// and its Stat an error (see checkRows). SizeBytes is -1: the schema keeps
// no size, and summing the rows would read every event.
func (b *Backend) Stat(ctx context.Context, id string) (sdk.Stat, error) {
	if err := handles.Ended(ctx, op, "stat"); err != nil {
		return sdk.Stat{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.Stat{}, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Stat{}, err
	}
	var r sessionRow
	var rs rowStats
	err = st.stmts.stat.QueryRowContext(ctx, id).Scan(&r.formatVersion, &r.header, &r.nextSeq, &r.incarnation, &r.revision, &rs.count, &rs.lo, &rs.hi)
	if err == sql.ErrNoRows {
		return sdk.Stat{}, handles.NotFound(op, id)
	}
	if err != nil {
		return sdk.Stat{}, st.dbErr(ctx, id, "stat", err)
	}
	h, err := st.header(r, id)
	if err != nil {
		return sdk.Stat{}, err
	}
	if err := st.checkRows(ctx, id, r.nextSeq, rs); err != nil {
		return sdk.Stat{}, err
	}
	return sdk.Stat{Header: h, Revision: st.revision(r), FormatVersion: h.FormatVersion, EventCount: r.nextSeq, SizeBytes: -1}, nil
}

// List calls fn, in id order, for every stored session and every
// unmaterialized create of this Backend. A session whose row does not pass
// the format gate or the header check, or whose rows do not match its
// next_seq (checkRows), yields an entry with Err set. fn runs
// while the backend holds nothing and may call b; an error from fn ends the
// listing and is returned as is.
func (b *Backend) List(ctx context.Context, fn func(sdk.ListEntry) error) error {
	if err := handles.Ended(ctx, op, "list"); err != nil {
		return err
	}
	st, err := b.store()
	if err != nil {
		return err
	}
	pend := b.pending.Pending(func(_ string, hd *handle) (sdk.Header, bool) { return hd.header, true })

	emit := func(e sdk.ListEntry) error {
		if err := handles.Ended(ctx, op, "list"); err != nil {
			return err
		}
		return fn(e)
	}
	after := ""
	for {
		page, err := st.sessions(ctx, after)
		if err != nil {
			return err
		}
		for _, s := range page {
			for len(pend) > 0 && pend[0].ID <= s.id {
				if pend[0].ID < s.id { // a create stored meanwhile is listed as stored
					if err := emit(pend[0]); err != nil {
						return err
					}
				}
				pend = pend[1:]
			}
			e := sdk.ListEntry{ID: s.id}
			if h, err := st.header(s.sessionRow, s.id); err != nil {
				e.Err = err
			} else if err := st.checkRows(ctx, s.id, s.nextSeq, s.rows); err != nil {
				e.Err = err
			} else {
				e.Header, e.Revision = h, st.revision(s.sessionRow)
			}
			if err := emit(e); err != nil {
				return err
			}
		}
		if len(page) < listPage {
			break
		}
		after = page[len(page)-1].id
	}
	for _, e := range pend {
		if err := emit(e); err != nil {
			return err
		}
	}
	return nil
}

// writable resolves an open write handle.
func (b *Backend) writable(name string) (*handle, error) {
	hd, err := b.handles.Get(name)
	if err != nil {
		return nil, err
	}
	if !hd.write {
		return nil, handles.ReadOnly(op, hd.id, name)
	}
	return hd, nil
}

// sessionRow is one row of the sessions table.
type sessionRow struct {
	formatVersion int64
	header        []byte
	nextSeq       int64
	incarnation   string
	revision      int64
}

// session reads the sessions row of id with stmt (st.stmts.session, or
// its form in a transaction).
func (s *store) session(ctx context.Context, stmt *sql.Stmt, id string) (sessionRow, bool, error) {
	var r sessionRow
	err := stmt.QueryRowContext(ctx, id).Scan(&r.formatVersion, &r.header, &r.nextSeq, &r.incarnation, &r.revision)
	if err == sql.ErrNoRows {
		return r, false, nil
	}
	return r, err == nil, err
}

// revision is docs/storage.md's <store_id>:<incarnation>:<revision>.
func (s *store) revision(r sessionRow) string {
	return s.id + ":" + r.incarnation + ":" + strconv.FormatInt(r.revision, 10)
}

// header applies the format gate of docs/format.md to sessions.format_version,
// then decodes the header column (its own version gate, identity and
// shape).
func (s *store) header(r sessionRow, id string) (sdk.Header, error) {
	if _, err := sdk.CheckFormatVersion(id, strconv.FormatInt(r.formatVersion, 10), s.path); err != nil {
		return sdk.Header{}, err
	}
	return headerjson.Decode(r.header, id, s.path)
}

// listed is one sessions row with its id and the statistics of its rows.
type listed struct {
	id string
	sessionRow
	rows rowStats
}

// sessions reads one page of sessions rows with ids after after, in id
// order, each with the statistics of its events rows.
func (s *store) sessions(ctx context.Context, after string) ([]listed, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT s.id, s.format_version, s.header, s.next_seq, s.incarnation, s.revision,
		count(e.seq), coalesce(min(e.seq), -1), coalesce(max(e.seq), -1)
		FROM (SELECT * FROM sessions WHERE id > ? ORDER BY id LIMIT ?) AS s LEFT JOIN events AS e ON e.session_id = s.id
		GROUP BY s.id ORDER BY s.id`, after, listPage)
	if err != nil {
		return nil, s.dbErr(ctx, "", "list", err)
	}
	defer rows.Close()
	var page []listed
	for rows.Next() {
		var l listed
		if err := rows.Scan(&l.id, &l.formatVersion, &l.header, &l.nextSeq, &l.incarnation, &l.revision, &l.rows.count, &l.rows.lo, &l.rows.hi); err != nil {
			return nil, s.dbErr(ctx, "", "list", err)
		}
		page = append(page, l)
	}
	if err := rows.Err(); err != nil {
		return nil, s.dbErr(ctx, "", "list", err)
	}
	return page, nil
}

// appendTx is the append transaction of docs/storage.md. hdr is the canonical
// header of a pending create (materialized here) or nil; inc the
// incarnation the handle owns. It returns the new durable state and the
// session's incarnation.
func (s *store) appendTx(ctx context.Context, id string, hdr []byte, h sdk.Header, inc string, firstSeq sdk.Seq, rows *batchRows) (d sdk.Durable, _ string, err error) {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return d, "", s.dbErr(ctx, id, "append", err)
	}
	defer tx.Rollback()
	fail := func(err error) (sdk.Durable, string, error) {
		return sdk.Durable{}, "", s.dbErr(ctx, id, "append", err)
	}
	if err := s.checkIdentity(ctx, tx); err != nil {
		return fail(err)
	}
	r, found, err := s.session(ctx, tx.StmtContext(ctx, s.stmts.session), id)
	if err != nil {
		return fail(err)
	}
	switch {
	case hdr != nil && found:
		return fail(handles.AlreadyExists(op, id, "another instance or process stored it first"))
	case hdr != nil:
		inc = uuid.NewString()
		if _, err := tx.StmtContext(ctx, s.stmts.insertSession).ExecContext(ctx, id, sdk.FormatVersion, h.CreatedAt, string(hdr), inc); err != nil {
			return fail(err)
		}
		r = sessionRow{incarnation: inc}
	case !found:
		return fail(newErr(sdk.CodeOwnershipLost, id, "session %s is no longer stored", strconv.Quote(id)))
	case r.incarnation != inc:
		return fail(newErr(sdk.CodeOwnershipLost, id, "session %s was replaced since this handle opened it (incarnation %s, now %s)", strconv.Quote(id), inc, r.incarnation))
	case int64(firstSeq) != r.nextSeq:
		return fail(handles.SeqConflict(op, id, int64(firstSeq), r.nextSeq))
	}
	if n := rows.len(); n > 0 {
		if err := s.insert(ctx, tx, id, rows); err != nil {
			if isConstraint(err) {
				return fail(newErr(sdk.CodeSeqConflict, id, "compare-and-set failed: rows for seqs %d … %d already exist beyond the stored next seq %d (written by another writer); open the session again to cut them",
					firstSeq, int64(firstSeq)+int64(n)-1, r.nextSeq).WithSeq(int64(firstSeq)))
			}
			return fail(err)
		}
		next := int64(firstSeq) + int64(n)
		if err := tx.StmtContext(ctx, s.stmts.advance).QueryRowContext(ctx, next, id).Scan(&r.revision); err != nil {
			return fail(err)
		}
		r.nextSeq = next
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return sdk.Durable{NextSeq: sdk.Offset(r.nextSeq), Revision: s.revision(r)}, inc, nil
}

// insert inserts the batch's rows with the prepared statements, insertRows
// at a time, each run as soon as its rows are prepared. A bad event stops
// it with that event's error.
func (s *store) insert(ctx context.Context, tx *sql.Tx, id string, rows *batchRows) error {
	var args []any
	bind := func(rows []row) []any {
		args = args[:0]
		for _, ev := range rows {
			args = append(args, id, ev.seq, ev.typ, ev.time, ev.dataValue(), nullText(ev.surfaceOp), nullText(ev.sources), ev.ignorableValue())
		}
		return args
	}
	var many, one *sql.Stmt
	for from := 0; from < rows.len(); {
		n := insertRows
		if rows.len()-from < insertRows {
			n = 1
		}
		if e := rows.ready(from + n); e != nil {
			return e
		}
		stmt := &many
		if n == 1 {
			stmt = &one
		}
		if *stmt == nil {
			src := s.stmts.insertEvents
			if n == 1 {
				src = s.stmts.insertEvent
			}
			*stmt = tx.StmtContext(ctx, src)
		}
		if _, err := (*stmt).ExecContext(ctx, bind(rows.rows[from:from+n])...); err != nil {
			return err
		}
		from += n
	}
	return nil
}

// readChunk reads the events [from, min(stop, from+readChunkEvents)) up to
// about readChunkBytes and returns their envelopes, fresh. A missing or
// undecodable row is CORRUPT_LOG naming its seq: it lies below next_seq,
// inside what was committed.
func (s *store) readChunk(ctx context.Context, id string, from, stop int64) ([][]byte, error) {
	rows, err := s.stmts.events.QueryContext(ctx, id, from, stop, readChunkEvents)
	if err != nil {
		return nil, s.dbErr(ctx, id, "read", err)
	}
	defer rows.Close()
	var (
		out  [][]byte
		size int
		raw  rawRow
		sc   scratch
	)
	want := from
	for size < readChunkBytes && rows.Next() {
		if err := scanRow(rows, &raw); err != nil {
			return nil, s.dbErr(ctx, id, "read", err)
		}
		if raw.seq != want {
			return nil, corruptAt(id, want, "the row of event %d is missing below next_seq", want)
		}
		r, rerr := s.codec.decode(&raw, &sc)
		if rerr != nil {
			return nil, corruptAt(id, want, "the row of event %d does not decode: %s", want, rerr.reason)
		}
		ev := r.appendEnvelope(make([]byte, 0, r.envelopeLen()))
		out = append(out, ev[:len(ev):len(ev)])
		size += len(ev)
		want++
	}
	if err := rows.Err(); err != nil {
		return nil, s.dbErr(ctx, id, "read", err)
	}
	if len(out) == 0 {
		return nil, corruptAt(id, want, "the row of event %d is missing below next_seq", want)
	}
	return out, nil
}

// isConstraint reports a constraint violation (here: a duplicate seq).
func isConstraint(err error) bool {
	var le *msqlite.Error
	return errors.As(err, &le) && le.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}

func corruptAt(id string, seq int64, format string, args ...any) *sdk.Error {
	return newErr(sdk.CodeCorruptLog, id, format, args...).WithSeq(seq)
}
