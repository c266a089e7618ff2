package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/klauspost/compress/zstd"

	"github.com/seed-e5e476df/logbook/sdk"
)

// maxDecoded bounds what one compressed envelope may expand to: the
// largest MaxEventBytes allowed. A frame claiming more is damage.
const maxDecoded = sdk.MaxMaxEventBytes

// store is one Backend's database: its pool, its schema's names and its
// codec. Each Backend has its own (two Backends over one database behave
// like two hosts).
type store struct {
	dsn    string
	schema string
	host   string
	pool   *pgxpool.Pool
	id     string // schema_version.store_id: the first part of every revision
	enc    *zstd.Encoder
	dec    *zstd.Decoder
}

// openStore connects the pool (synchronous_commit on, so that a commit is
// flushed to the WAL before it returns) and brings the schema up to date.
func openStore(ctx context.Context, cfg Config) (*store, error) {
	pc, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, &sdk.Error{Code: sdk.CodeConfigInvalid, Op: op, Detail: "dsn does not parse as a PostgreSQL connection string", Err: redact(err, cfg.DSN)}
	}
	pc.MaxConns = int32(cfg.MaxConns)
	pc.MinConns = 0
	runtimeParams(pc.ConnConfig, appName("logbook "+cfg.HostName))
	s := &store{dsn: cfg.DSN, schema: cfg.Schema, host: cfg.HostName}
	if s.pool, err = pgxpool.NewWithConfig(ctx, pc); err != nil {
		return nil, s.dbErr(ctx, "", "connecting to the database", err)
	}
	if err := s.pool.Ping(ctx); err != nil {
		s.pool.Close()
		return nil, s.dbErr(ctx, "", "connecting to the database", err)
	}
	if s.id, err = s.ensureSchema(ctx); err != nil {
		s.pool.Close()
		return nil, err
	}
	if s.enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(3)), zstd.WithEncoderCRC(true)); err == nil {
		s.dec, err = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxDecoded))
	}
	if err != nil {
		s.close()
		return nil, sdk.Wrap(sdk.CodeIOError, op, err)
	}
	return s, nil
}

// runtimeParams sets what every connection of this package runs with:
// synchronous_commit on whatever the server's default, and an
// application_name that says what the connection is for.
func runtimeParams(c *pgx.ConnConfig, name string) {
	c.RuntimeParams["synchronous_commit"] = "on"
	c.RuntimeParams["application_name"] = name
}

func (s *store) close() {
	if s.enc != nil {
		s.enc.Close()
	}
	if s.dec != nil {
		s.dec.Close()
	}
	s.pool.Close()
}

// appName clips an application_name to the 63 bytes PostgreSQL keeps.
func appName(name string) string {
	if len(name) > 63 {
		name = name[:63]
	}
	return name
}

// q is the quoted schema name, for statements.
func (s *store) q() string { return pgx.Identifier{s.schema}.Sanitize() }

// revision is docs/storage.md's <store_id>:<incarnation>:<revision>.
func (s *store) revision(incarnation string, rev int64) string {
	return s.id + ":" + incarnation + ":" + strconv.FormatInt(rev, 10)
}

// where names the session's place in errors: the schema (never the DSN).
func (s *store) where() string { return "schema " + strconv.Quote(s.schema) }
