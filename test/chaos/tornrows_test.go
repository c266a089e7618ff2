package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"

	"github.com/jackc/pgx/v5"
)

// tornRows is torn-garbage on a row backend (SQLite, PostgreSQL), whose
// torn tail is rows past the session's next_seq (docs/storage.md, "Torn
// rows"): with serve down, an outside writer adds 1–3 rows of random
// bytes after the stored log of some of the writers' sessions. A
// read-only inspect must call them a torn tail; once the writers
// recovered (their resume cut the rows), it must find none, and the cut
// rows must be kept (PostgreSQL: a torn_rows row; SQLite: a file in
// <path>.torn/).
func tornRows(h *harness) {
	h.dwell()
	if err := h.server().Kill9(exitTimeout); err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	db := h.rowStore(ctx)
	defer db.close()
	var cut []*record
	for _, w := range h.writers {
		rec := w.session()
		if h.rng.IntN(3) == 0 {
			continue
		}
		next, found, err := db.nextSeq(ctx, rec.id)
		if err != nil {
			h.t.Fatal(err)
		}
		if !found {
			continue // not stored yet
		}
		rows := 1 + h.rng.IntN(3)
		for i := range rows {
			if err := db.addRow(ctx, rec.id, next+int64(i), h.garbage(false)); err != nil {
				h.t.Fatalf("torn-garbage: adding a row past %s's next seq %d: %v", rec.id, next, err)
			}
		}
		cut = append(cut, rec)
		if torn, err := h.tornBytes(rec.id); err != nil || torn <= 0 {
			h.problem(fmt.Errorf("torn-garbage: %d rows added past the log of %s: inspect says %d torn bytes (%v)", rows, rec.id, torn, err))
		}
	}
	h.start()
	if err := h.awaitRecovery(h.successes()); err != nil {
		h.t.Fatalf("torn-garbage: %v", err)
	}
	for _, rec := range cut {
		if rec.ackedCount() >= rotateEvents {
			continue // its writer may have moved on before resuming it
		}
		if torn, err := h.tornBytes(rec.id); err != nil || torn != 0 {
			h.problem(fmt.Errorf("torn-garbage: after serve resumed %s, inspect says %d torn bytes (%v)", rec.id, torn, err))
		}
		if kept, err := db.keptTorn(ctx, rec.id); err != nil || !kept {
			h.problem(fmt.Errorf("torn-garbage: the rows the resume of %s cut are not kept (%v)", rec.id, err))
		}
	}
}

// rowStore is a connection of the test's own to a row backend's storage.
type rowStore struct {
	h  *harness
	pg *pgx.Conn // PostgreSQL
	db *sql.DB   // SQLite
}

func (h *harness) rowStore(ctx context.Context) rowStore {
	s := rowStore{h: h}
	var err error
	if h.b.store == postgresStore {
		s.pg, err = pgx.Connect(ctx, h.pgDSN)
	} else {
		s.db, err = sql.Open("sqlite", "file:"+h.sqlitePath()+"?_pragma=busy_timeout(30000)")
	}
	if err != nil {
		h.t.Fatalf("torn-garbage: connecting to the %s storage: %v", h.b.name, err)
	}
	return s
}

func (h *harness) sqlitePath() string { return filepath.Join(h.dir, "sessions.db") }

func (s rowStore) close() {
	if s.pg != nil {
		s.pg.Close(context.Background())
		return
	}
	s.db.Close()
}

func (s rowStore) table(name string) string { return pgx.Identifier{s.h.schema, name}.Sanitize() }

// nextSeq reads the next seq of session id; found is false when it is not
// stored.
func (s rowStore) nextSeq(ctx context.Context, id string) (next int64, found bool, err error) {
	if s.pg != nil {
		err = s.pg.QueryRow(ctx, "SELECT next_seq FROM "+s.table("sessions")+" WHERE id = $1", id).Scan(&next)
	} else {
		err = s.db.QueryRowContext(ctx, "SELECT next_seq FROM sessions WHERE id = ?", id).Scan(&next)
	}
	if err == pgx.ErrNoRows || err == sql.ErrNoRows {
		return 0, false, nil
	}
	return next, err == nil, err
}

// addRow stores b as the row of event seq of session id, as an outside
// writer would: bytes that decode to no envelope.
func (s rowStore) addRow(ctx context.Context, id string, seq int64, b []byte) error {
	if s.pg != nil {
		_, err := s.pg.Exec(ctx, "INSERT INTO "+s.table("events")+"(session_id, seq, zstd, envelope) VALUES ($1, $2, false, $3)", id, seq, b)
		return err
	}
	_, err := s.db.ExecContext(ctx, "INSERT INTO events(session_id, seq, type, time, data) VALUES (?, ?, 'torn', 0, ?)", id, seq, b)
	return err
}

// keptTorn reports whether a cut of session id's torn rows is kept.
func (s rowStore) keptTorn(ctx context.Context, id string) (bool, error) {
	if s.pg != nil {
		var n int
		err := s.pg.QueryRow(ctx, "SELECT count(*) FROM "+s.table("torn_rows")+" WHERE session_id = $1", id).Scan(&n)
		return n > 0, err
	}
	kept, err := filepath.Glob(filepath.Join(s.h.sqlitePath()+".torn", id+".*.jsonl"))
	return len(kept) > 0, err
}
