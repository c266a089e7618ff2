package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// benchBatch is the ingest batch size of the persistence benchmarks.
const benchBatch = 256

// benchInputs is the corpus the ingest benchmarks write, as the inputs that
// append it, made once.
func benchInputs(b *testing.B, n int) []session.AppendInput {
	envs := corpus.Session(42, n)
	out := make([]session.AppendInput, len(envs))
	for i, e := range envs {
		out[i] = appendInputOf(parse(b, e))
	}
	return out
}

// resetTimer collects the garbage of a benchmark's setup, so that no
// collection it started runs inside the timed loop, then resets the timer.
func resetTimer(b *testing.B) {
	runtime.GC()
	b.ResetTimer()
}

func parse(tb testing.TB, env []byte) session.Event {
	ev, err := session.ParseEnvelope(env, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return ev
}

// appendInputOf turns a stored event back into the input that appends it.
func appendInputOf(ev session.Event) session.AppendInput {
	in := session.AppendInput{Type: ev.Type(), Data: ev.Data()}
	if op, ok := ev.SurfaceOp(); ok {
		in.SurfaceOp = &op
	}
	return in
}

func backendConfig(name, dir string) *config.Config {
	var conf []byte
	switch name {
	case "jsonl":
		conf, _ = json.Marshal(map[string]any{"root": dir, "compression": "zstd", "zstd_level": "default"})
	case "sqlite":
		conf, _ = json.Marshal(map[string]any{"path": filepath.Join(dir, "sessions.db")})
	}
	cfg := config.Headless(config.Overrides{})
	cfg.Persistence = []config.Persistence{{Name: name, Config: conf}}
	cfg.WriteWindow = time.Minute // only the benchmark's flushes write
	cfg.RetryMaxBackoff = time.Minute
	return cfg
}

// benchmarkIngest times durable ingest through the plugin subprocess: each
// batch of 256 corpus events is appended to the session outside the timer,
// then pushed by the store's write-behind to the plugin and made durable
// (Flush) inside it. ns/op is per event.
func benchmarkIngest(b *testing.B, backend string) {
	ctx := context.Background()
	e, err := Start(ctx, backendConfig(backend, b.TempDir()), Options{Executable: logbookBin})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	inputs := benchInputs(b, 20_000)
	var s *session.Session
	newSession := func() {
		if s != nil {
			_ = e.Store.Release(ctx, s)
		}
		if s, err = e.Store.Create(ctx, store.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	newSession()
	b.ReportAllocs()
	resetTimer(b)
	for done := 0; done < b.N; {
		b.StopTimer()
		n := min(benchBatch, b.N-done)
		if int(s.Len())+n > len(inputs) {
			newSession()
		}
		for i := range n {
			if _, err := s.Append(ctx, inputs[int(s.Len())%len(inputs)]); err != nil {
				b.Fatalf("append %d: %v", i, err)
			}
		}
		b.StartTimer()
		if _, err := e.Store.Flush(ctx, s); err != nil {
			b.Fatal(err)
		}
		done += n
	}
}

// BenchmarkJSONLIngest: durable ingest through the JSONL plugin subprocess,
// zstd, 256-event batches. go test runs benchmarks in source order, so each
// ingest benchmark is declared just before its raw limit: the two run back
// to back, and the machine's drift between them stays small.
func BenchmarkJSONLIngest(b *testing.B) { benchmarkIngest(b, "jsonl") }

// BenchmarkJSONLIngestInterleaved runs the JSONL ingest and its raw write
// path batch by batch under the same conditions: each iteration appends 256
// corpus events to a session (untimed, as in BenchmarkJSONLIngest), then
// times the Flush through the plugin subprocess and, right after, the raw
// write of the very same envelopes (compress with a reused encoder, write,
// fdatasync). BenchmarkJSONLRawLimit runs its loop back to back on hot
// caches; here both paths see the cache and scheduler state the appends
// leave behind, and the machine's drift hits both alike. It reports both
// per-event times and raw/ingest as a percentage; b.N counts batches, and
// ns/op is the two timed writes of one batch.
func BenchmarkJSONLIngestInterleaved(b *testing.B) {
	ctx := context.Background()
	e, err := Start(ctx, backendConfig("jsonl", b.TempDir()), Options{Executable: logbookBin})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	inputs := benchInputs(b, 20_000)
	w := newRawJSONL(b)
	defer w.f.Close()
	var s *session.Session
	var ingest, raw time.Duration
	batch := make([][]byte, 0, benchBatch)
	resetTimer(b)
	for range b.N {
		b.StopTimer()
		if s == nil || int(s.Len())+benchBatch > len(inputs) {
			if s != nil {
				_ = e.Store.Release(ctx, s)
			}
			if s, err = e.Store.Create(ctx, store.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		batch = batch[:0]
		for range benchBatch {
			ev, err := s.Append(ctx, inputs[int(s.Len())%len(inputs)])
			if err != nil {
				b.Fatal(err)
			}
			batch = append(batch, ev.Envelope())
		}
		b.StartTimer()
		t0 := time.Now()
		if _, err := e.Store.Flush(ctx, s); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		w.write(b, batch)
		ingest, raw = ingest+t1.Sub(t0), raw+time.Since(t1)
	}
	n := float64(b.N * benchBatch)
	b.ReportMetric(float64(ingest.Nanoseconds())/n, "ingest-ns/event")
	b.ReportMetric(float64(raw.Nanoseconds())/n, "raw-ns/event")
	b.ReportMetric(100*raw.Seconds()/ingest.Seconds(), "raw/ingest-%")
}

// canonicalBatches renders the benchmark corpus as the canonical envelopes a
// session would store, in batches of 256.
func canonicalBatches(b *testing.B) [][][]byte {
	envs := corpus.Session(42, 20_000)
	var out [][][]byte
	for i := 0; i < len(envs); i += benchBatch {
		out = append(out, envs[i:min(i+benchBatch, len(envs))])
	}
	return out
}

// BenchmarkJSONLRawLimit is the in-process limit of the JSONL write path:
// compress each batch with a reused encoder (SpeedDefault), write, fdatasync.
func BenchmarkJSONLRawLimit(b *testing.B) {
	batches := canonicalBatches(b)
	w := newRawJSONL(b)
	defer w.f.Close()
	resetTimer(b)
	for done, k := 0, 0; done < b.N; k++ {
		batch := batches[k%len(batches)]
		n := min(len(batch), b.N-done)
		w.write(b, batch[:n])
		done += n
	}
}

// rawJSONL is the raw JSONL write path: a reused zstd encoder (SpeedDefault,
// checksums) and an append-only file.
type rawJSONL struct {
	enc          *zstd.Encoder
	f            *os.File
	plain, frame []byte
}

func newRawJSONL(b *testing.B) *rawJSONL {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(true))
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "raw.jsonl.zst"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	return &rawJSONL{enc: enc, f: f}
}

// write stores batch as lines in one frame, written and fdatasynced.
func (w *rawJSONL) write(b *testing.B, batch [][]byte) {
	w.plain = w.plain[:0]
	for _, e := range batch {
		w.plain = append(append(w.plain, e...), '\n')
	}
	w.frame = w.enc.EncodeAll(w.plain, w.frame[:0])
	if _, err := w.f.Write(w.frame); err != nil {
		b.Fatal(err)
	}
	if err := unix.Fdatasync(int(w.f.Fd())); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSQLiteIngest: the same through the SQLite plugin (synchronous=FULL).
func BenchmarkSQLiteIngest(b *testing.B) { benchmarkIngest(b, "sqlite") }

// BenchmarkSQLiteRawLimit is the in-process limit of the SQLite write path:
// modernc.org/sqlite inserting the same rows the plugin stores, one
// transaction per batch, WAL and synchronous=FULL. As in the plugin (and as
// BenchmarkJSONLRawLimit compresses its frames), data of 256 bytes or more is
// compressed with a reused level-3 encoder and stored as a BLOB when that is
// smaller (docs/storage.md).
func BenchmarkSQLiteRawLimit(b *testing.B) {
	batches := rawRowBatches(b)
	db := rawDB(b, filepath.Join(b.TempDir(), "raw.db"))
	defer db.Close()
	enc := rawRowEncoder(b)
	var frame []byte
	seq := int64(0)
	resetTimer(b)
	for done, k := 0, 0; done < b.N; k++ {
		batch := batches[k%len(batches)]
		n := min(len(batch), b.N-done)
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		st, err := tx.Prepare("INSERT INTO events(session_id, seq, type, time, data, surface_op) VALUES ('s', ?, ?, ?, ?, ?)")
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range batch[:n] {
			var data any
			data, frame = r.stored(enc, frame)
			if _, err := st.Exec(seq, r.typ, r.time, data, sql.NullString{String: r.surfOp, Valid: r.surfOp != ""}); err != nil {
				b.Fatal(err)
			}
			seq++
		}
		st.Close()
		if _, err := tx.Exec("UPDATE sessions SET next_seq = ?, revision = revision + 1 WHERE id = 's'", seq); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		done += n
	}
}

// rawCompressMin is the data size from which docs/storage.md stores data
// compressed (when smaller) by default: compress_min_bytes.
const rawCompressMin = 256

// rawRow is the columns of one corpus event, as the raw SQLite benchmarks
// store them; data is also kept as bytes for the encoder.
type rawRow struct {
	time      int64
	typ, data string
	surfOp    string
	dataBytes []byte
}

// stored returns the value the data column stores (docs/storage.md): the text,
// or for data of rawCompressMin bytes or more its zstd frame when that is
// smaller. The frame is built in scratch, which is returned for reuse.
func (r rawRow) stored(enc *zstd.Encoder, scratch []byte) (any, []byte) {
	if len(r.dataBytes) < rawCompressMin {
		return r.data, scratch
	}
	if scratch = enc.EncodeAll(r.dataBytes, scratch[:0]); len(scratch) < len(r.dataBytes) {
		return scratch, scratch
	}
	return r.data, scratch
}

// rawRowBatches splits the ingest corpus into rows, in batches of 256.
func rawRowBatches(b *testing.B) [][]rawRow {
	batches := canonicalBatches(b)
	rows := make([][]rawRow, len(batches))
	for i, batch := range batches {
		for _, env := range batch {
			rows[i] = append(rows[i], rawRowOf(parse(b, env)))
		}
	}
	return rows
}

func rawRowOf(ev session.Event) rawRow {
	op := ""
	if _, ok := ev.SurfaceOp(); ok {
		op = `"append"`
	}
	return rawRow{ev.Time(), ev.Type(), string(ev.Data()), op, ev.Data()}
}

// rawRowEncoder is the zstd encoder of docs/storage.md: level 3 with checksums.
func rawRowEncoder(b *testing.B) *zstd.Encoder {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(3)), zstd.WithEncoderCRC(true))
	if err != nil {
		b.Fatal(err)
	}
	return enc
}

// rawDB opens a database with the events table and the pragmas of docs/storage.md.
func rawDB(b *testing.B, path string) *sql.DB {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=page_size(16384)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE TABLE sessions(id TEXT PRIMARY KEY, next_seq INTEGER NOT NULL, revision INTEGER NOT NULL) STRICT`,
		`INSERT INTO sessions VALUES ('s', 0, 0)`,
		`CREATE TABLE events(session_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, time INTEGER NOT NULL, data ANY NOT NULL,
		  surface_op TEXT, source_event_seqs TEXT, ignorable INTEGER, PRIMARY KEY(session_id, seq)) STRICT`,
	} {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	return db
}

// coldFixture stores a 100,000-event corpus session in a backend once per
// benchmark and returns the engine config, the session id and the canonical
// bytes stored.
func coldFixture(b testing.TB, backend string) (*config.Config, int64) {
	ctx := context.Background()
	cfg := backendConfig(backend, b.TempDir())
	e, err := Start(ctx, cfg, Options{Executable: logbookBin})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	envs := corpus.Session(99, 100_000)
	var h sdk.Header
	h.ID, h.FormatVersion, h.CreatedAt = "cold", sdk.FormatVersion, 1
	if err := e.Store.Import(ctx, h, envs); err != nil {
		b.Fatal(err)
	}
	total := int64(0)
	for _, x := range envs {
		total += int64(len(x))
	}
	return cfg, total
}

// benchmarkColdOpen times Open(read) + Read all + host restore validation of
// the stored 100,000-event session, through the plugin subprocess; MB/s is
// of canonical JSON.
func benchmarkColdOpen(b *testing.B, backend string) {
	ctx := context.Background()
	cfg, total := coldFixture(b, backend)
	e, err := Start(ctx, cfg, Options{Executable: logbookBin})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	b.SetBytes(total)
	resetTimer(b)
	for b.Loop() {
		s, _, err := e.Store.Inspect(ctx, "cold")
		if err != nil {
			b.Fatal(err)
		}
		if s.Len() < 100_000 { // plus the closers of the open turn the corpus ends in
			b.Fatalf("read %d events", s.Len())
		}
	}
}

// BenchmarkJSONLColdOpen100K: cold open of a 100,000-event session from JSONL+zstd.
func BenchmarkJSONLColdOpen100K(b *testing.B) { benchmarkColdOpen(b, "jsonl") }

// BenchmarkSQLiteColdOpen100K: the same through the SQLite plugin.
func BenchmarkSQLiteColdOpen100K(b *testing.B) { benchmarkColdOpen(b, "sqlite") }

// BenchmarkSQLiteRawRead is the in-process read limit: modernc.org/sqlite
// selecting the same 100,000 rows the plugin stores (data of 256 bytes or
// more as a compressed BLOB when smaller, 16 KiB pages), ordered by seq, and decompressing the
// BLOBs with a reused decoder — the mirror image of the raw write limit,
// which compresses them.
func BenchmarkSQLiteRawRead(b *testing.B) {
	envs := corpus.Session(99, 100_000)
	db := rawDB(b, filepath.Join(b.TempDir(), "raw.db"))
	defer db.Close()
	enc := rawRowEncoder(b)
	tx, _ := db.Begin()
	total := int64(0)
	for _, env := range envs {
		ev := parse(b, env)
		r := rawRowOf(ev)
		data, _ := r.stored(enc, nil)
		if _, err := tx.Exec("INSERT INTO events(session_id, seq, type, time, data) VALUES ('s', ?, ?, ?, ?)", int64(ev.Seq()), r.typ, r.time, data); err != nil {
			b.Fatal(err)
		}
		total += int64(len(env))
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		b.Fatal(err)
	}
	var out []byte
	b.SetBytes(total)
	resetTimer(b)
	for b.Loop() {
		rows, err := db.Query("SELECT seq, type, time, data, surface_op, source_event_seqs, ignorable FROM events WHERE session_id = 's' ORDER BY seq")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var seq, tm int64
			var typ string
			var data any
			var op, src sql.NullString
			var ign sql.NullInt64
			if err := rows.Scan(&seq, &typ, &tm, &data, &op, &src, &ign); err != nil {
				b.Fatal(err)
			}
			if blob, ok := data.([]byte); ok {
				if out, err = dec.DecodeAll(blob, out[:0]); err != nil {
					b.Fatal(err)
				}
			}
			n++
		}
		rows.Close()
		if n != len(envs) {
			b.Fatal("short read")
		}
	}
}
