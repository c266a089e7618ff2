package postgres_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/klauspost/compress/zstd"

	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/plugins/postgres"
	"github.com/seed-e5e476df/logbook/sdk"
)

// benchBatch is the ingest batch size of the benchmarks.
const benchBatch = 256

// rawTables makes the tables the raw limits write in schema: the events
// table the plugin has, and a sessions row whose next_seq each batch
// moves, as the plugin's compare-and-set does.
func rawTables(b *testing.B, c *pgx.Conn, schema string) {
	b.Helper()
	for _, q := range []string{
		"CREATE SCHEMA " + schema,
		"CREATE TABLE " + schema + ".sessions(id text PRIMARY KEY, next_seq bigint NOT NULL, revision bigint NOT NULL)",
		"CREATE TABLE " + schema + ".events(session_id text NOT NULL, seq bigint NOT NULL, zstd boolean NOT NULL, envelope bytea NOT NULL, PRIMARY KEY (session_id, seq))",
		"INSERT INTO " + schema + ".sessions VALUES ('s', 0, 0)",
	} {
		if _, err := c.Exec(context.Background(), q); err != nil {
			b.Fatal(err)
		}
	}
}

// rawWriter is the in-process limit of the append path: pgx on one
// connection, synchronous_commit on, one transaction per batch that moves
// next_seq and inserts the batch's rows, envelopes of 256 bytes or more
// stored as a zstd frame (level 3, reused encoder) when smaller.
type rawWriter struct {
	c      *pgx.Conn
	schema string
	enc    *zstd.Encoder
	seq    int64
	copy   bool // COPY instead of the plugin's INSERT … unnest
}

func newRawWriter(b *testing.B, dsn string) *rawWriter {
	b.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		b.Fatal(err)
	}
	cfg.RuntimeParams["synchronous_commit"] = "on"
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close(context.Background()) })
	schema := pgtest.Schema(b, dsn)
	rawTables(b, c, schema)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(3)), zstd.WithEncoderCRC(true))
	if err != nil {
		b.Fatal(err)
	}
	return &rawWriter{c: c, schema: schema, enc: enc}
}

func (w *rawWriter) write(b *testing.B, batch [][]byte) {
	ctx := context.Background()
	seqs, zs, envs := make([]int64, len(batch)), make([]bool, len(batch)), make([][]byte, len(batch))
	for i, ev := range batch {
		seqs[i], envs[i] = w.seq+int64(i), ev
		if len(ev) >= postgres.DefaultCompressMinBytes {
			if f := w.enc.EncodeAll(ev, make([]byte, 0, len(ev)/2)); len(f) < len(ev) {
				zs[i], envs[i] = true, f
			}
		}
	}
	tx, err := w.c.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	next := w.seq + int64(len(batch))
	if _, err := tx.Exec(ctx, "UPDATE "+w.schema+".sessions SET next_seq = $2, revision = revision + 1 WHERE id = 's' AND next_seq = $1", w.seq, next); err != nil {
		b.Fatal(err)
	}
	if w.copy {
		_, err = tx.CopyFrom(ctx, pgx.Identifier{w.schema, "events"}, []string{"session_id", "seq", "zstd", "envelope"},
			pgx.CopyFromSlice(len(batch), func(i int) ([]any, error) { return []any{"s", seqs[i], zs[i], envs[i]}, nil }))
	} else {
		_, err = tx.Exec(ctx, "INSERT INTO "+w.schema+".events(session_id, seq, zstd, envelope) SELECT 's', * FROM unnest($1::bigint[], $2::boolean[], $3::bytea[])", seqs, zs, envs)
	}
	if err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	w.seq = next
}

// ingestBatches is the corpus workload in batches of 256, seqs from 0.
func ingestBatches() [][][]byte {
	envs := corpus.Session(42, 20_480)
	var out [][][]byte
	for i := 0; i < len(envs); i += benchBatch {
		out = append(out, envs[i:min(i+benchBatch, len(envs))])
	}
	return out
}

// BenchmarkPostgresIngest times durable ingest through the plugin
// subprocess (`logbook plugin postgres`, gRPC, AutoMTLS): each iteration
// appends one 256-event batch of the corpus workload and, right after, the
// raw limit (rawWriter, same rows, same insert method) writes the same
// batch, so both see the same machine. It reports both per-event times and
// ingest throughput as a percentage of the raw limit's; b.N counts
// batches.
func BenchmarkPostgresIngest(b *testing.B) {
	dsn := pgtest.DSN(b)
	p := startPlugin(b, configJSON(b, where{dsn, pgtest.Schema(b, dsn)}, nil))
	w := newRawWriter(b, dsn)
	batches := ingestBatches()
	ctx := context.Background()
	var handle string
	var ingest, raw time.Duration
	runtime.GC()
	b.ResetTimer()
	for i := range b.N {
		k := i % len(batches)
		if k == 0 {
			if handle != "" {
				p.Close(ctx, handle)
			}
			o, err := p.Create(ctx, sdk.Header{ID: fmt.Sprintf("s%d", i), CreatedAt: 1})
			if err != nil {
				b.Fatal(err)
			}
			handle = o.Handle
		}
		batch := batches[k]
		t0 := time.Now()
		if _, err := p.Append(ctx, handle, sdk.Seq(k*benchBatch), batch); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		w.write(b, batch)
		ingest, raw = ingest+t1.Sub(t0), raw+time.Since(t1)
	}
	n := float64(b.N * benchBatch)
	b.ReportMetric(float64(ingest.Nanoseconds())/n, "ingest-ns/event")
	b.ReportMetric(float64(raw.Nanoseconds())/n, "raw-ns/event")
	b.ReportMetric(100*raw.Seconds()/ingest.Seconds(), "ingest/raw-%")
}

// BenchmarkPostgresRawLimit is the raw limit alone: pgx in process writing
// the corpus batches as BenchmarkPostgresIngest's rawWriter does.
func BenchmarkPostgresRawLimit(b *testing.B) {
	w := newRawWriter(b, pgtest.DSN(b))
	batches := ingestBatches()
	b.ResetTimer()
	for i := range b.N {
		w.write(b, batches[i%len(batches)])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/event")
}

// BenchmarkPostgresInsertMethod compares the plugin's insert (one INSERT
// … SELECT FROM unnest over arrays) with COPY for 256-event batches,
// alternating batch by batch; it reports unnest's time as a percentage of
// COPY's.
func BenchmarkPostgresInsertMethod(b *testing.B) {
	dsn := pgtest.DSN(b)
	un, cp := newRawWriter(b, dsn), newRawWriter(b, dsn)
	cp.copy = true
	batches := ingestBatches()
	var tu, tc time.Duration
	b.ResetTimer()
	for i := range b.N {
		batch := batches[i%len(batches)]
		t0 := time.Now()
		un.write(b, batch)
		t1 := time.Now()
		cp.write(b, batch)
		tu, tc = tu+t1.Sub(t0), tc+time.Since(t1)
	}
	n := float64(b.N * benchBatch)
	b.ReportMetric(float64(tu.Nanoseconds())/n, "unnest-ns/event")
	b.ReportMetric(float64(tc.Nanoseconds())/n, "copy-ns/event")
	b.ReportMetric(100*tu.Seconds()/tc.Seconds(), "unnest/copy-%")
}

// BenchmarkPostgresColdOpen100K times a cold read of a stored
// 100,000-event corpus session through the plugin subprocess (Open(read),
// whose scan checks every row, and Read of all events), alternating with
// the raw limit: pgx in process selecting the same rows ordered by seq and
// decompressing the frames with a reused decoder. It reports both rates
// and the plugin's as a percentage of the raw one; MB/s is of canonical
// JSON through the plugin.
func BenchmarkPostgresColdOpen100K(b *testing.B) {
	ctx := context.Background()
	dsn := pgtest.DSN(b)
	w := where{dsn, pgtest.Schema(b, dsn)}
	p := startPlugin(b, configJSON(b, w, nil))
	envs := corpus.Session(99, 100_000)
	o, err := p.Create(ctx, sdk.Header{ID: "cold", CreatedAt: 1})
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for i := 0; i < len(envs); i += 2048 {
		if _, err := p.Append(ctx, o.Handle, sdk.Seq(i), envs[i:min(i+2048, len(envs))]); err != nil {
			b.Fatal(err)
		}
	}
	for _, e := range envs {
		total += int64(len(e))
	}
	p.Close(ctx, o.Handle)
	c := pgtest.Conn(b, dsn)
	dec, err := zstd.NewReader(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer dec.Close()
	var plugin, raw time.Duration
	b.SetBytes(total)
	runtime.GC()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		r, err := p.Open(ctx, "cold", sdk.AccessRead)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if err := p.Read(ctx, r.Handle, 0, -1, func(evs [][]byte) error { n += len(evs); return nil }); err != nil {
			b.Fatal(err)
		}
		p.Close(ctx, r.Handle)
		if n != len(envs) {
			b.Fatalf("read %d events", n)
		}
		t1 := time.Now()
		rows, err := c.Query(ctx, "SELECT seq, zstd, envelope FROM "+w.schema+".events WHERE session_id = 'cold' ORDER BY seq")
		if err != nil {
			b.Fatal(err)
		}
		m := 0
		var seq int64
		var z bool
		var env, out []byte
		for rows.Next() {
			if err := rows.Scan(&seq, &z, &env); err != nil {
				b.Fatal(err)
			}
			if z {
				if out, err = dec.DecodeAll(env, out[:0]); err != nil {
					b.Fatal(err)
				}
			}
			m++
		}
		if rows.Err() != nil || m != len(envs) {
			b.Fatalf("raw read %d rows: %v", m, rows.Err())
		}
		plugin, raw = plugin+t1.Sub(t0), raw+time.Since(t1)
	}
	mb := float64(total) * float64(b.N) / 1e6
	b.ReportMetric(mb/plugin.Seconds(), "plugin-MB/s")
	b.ReportMetric(mb/raw.Seconds(), "raw-MB/s")
	b.ReportMetric(100*raw.Seconds()/plugin.Seconds(), "plugin/raw-%")
}
