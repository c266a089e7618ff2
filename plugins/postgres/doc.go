// Package postgres is logbook's PostgreSQL persistence backend, served as
// the bundled plugin "postgres" (cmd/logbook-postgres stand-alone). It
// keeps every session of a host, or of many hosts, in one schema of one
// database, with one writer per session across all of them.
//
// # Schema
//
// The schema (Config.Schema, default "logbook") is created when missing
// and migrated in one transaction under a transaction advisory lock, so
// hosts starting together migrate it once. schema_version records the
// version and the store id (the first part of every revision); a version
// newer than this build knows, or a schema holding other tables, is
// SCHEMA_MISMATCH and nothing changes. Version 1:
//
//	sessions(id text PRIMARY KEY, header text,  -- canonical header JSON, as the JSONL header line
//	         created_at bigint, next_seq bigint, incarnation text, revision bigint,
//	         size_bytes bigint,                 -- header and stored envelopes, for Stat
//	         owner_epoch bigint, owner_host text, last_activity timestamptz)
//	events(session_id text REFERENCES sessions ON DELETE CASCADE, seq bigint,
//	       zstd boolean, envelope bytea,        -- the canonical envelope, or a zstd frame of it
//	       PRIMARY KEY (session_id, seq))
//	torn_rows(cut_id bigint identity, session_id text, cut_at timestamptz, lines bytea)
//
// Version 2 adds checkpoints(session_id, incarnation, events, digest,
// data): the host's checkpoint, bound to the session's incarnation and to
// a SHA-256 the server computes over the covered rows. Version 3 adds
// audit and holds. Version 4 adds tenant text (empty for the implicit tenant) to
// every table keyed by session, first in its key ((tenant, id), (tenant,
// session_id, seq), …), and to torn_rows and audit: a Backend is one
// tenant's view, and Tenant returns the others' (sdk.Tenancy; space.go),
// each with its own advisory lock keys and notification payloads.
//
// An envelope is stored byte for byte as the host appended it; one of
// Config.CompressMinBytes or more is stored as a zstd frame (level 3, with
// checksum) when that is smaller. Every row read is checked: the frame
// decodes and its checksum holds, the envelope is canonical
// (sdk/envelope) and its seq is the row's; a row that fails below next_seq
// is CORRUPT_LOG naming its seq, unless no later row is intact, when it
// starts a torn tail as in docs/storage.md. The revision is
// <store id>:<incarnation>:<revision>, the last part counting the
// session's appends and cuts; ownership changes leave it alone.
//
// # Append
//
// One transaction per batch: an UPDATE of the sessions row that is the
// compare-and-set (next_seq, owner epoch, incarnation and the claim, all
// in its WHERE), then one multi-row INSERT of the events over arrays, then
// COMMIT with synchronous_commit on, so an acknowledged batch is in
// PostgreSQL's WAL on disk. A create is materialized by the first Append or
// Flush: its sessions row is inserted in the same transaction as its
// first batch.
//
// # Ownership and fencing
//
// A write claim (Create, Open for writing) is a session-level advisory
// lock, pg_try_advisory_lock on the first 64 bits of SHA-256 over the
// schema and the session id, taken on the Backend's ownership connection:
// one connection outside the pool that holds every claim of the Backend,
// so a host may write far more sessions than it has pooled connections.
// The lock lives as long as that connection. Open for writing then bumps
// the session's owner_epoch and records owner_host (Config.HostName); a
// second host's Open(write) or Create meanwhile is ALREADY_OWNED (or
// SESSION_ALREADY_EXISTS) naming the owner host.
//
// Every append and flush checks, inside its own transaction, that the
// advisory lock is still granted to the ownership connection's server
// process (pg_locks) and that the owner epoch is still the one its open
// set. So when the ownership connection dies (the server terminated it,
// the network dropped it) the next append fails with OWNERSHIP_LOST,
// which is final: the handle never writes again, and the host re-opens the
// session if nobody else has. And once another host has taken the session
// over (a higher epoch, committed), no transaction of the old owner can
// commit, however late: the epoch is compared under the sessions row's
// lock, which the takeover's update also takes.
package postgres
