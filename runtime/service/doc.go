// Package service is the session service every door of logbook calls: the
// embedder's package logbook, the /v1 JSON API and the Connect service of
// `logbook serve`, and the logbook CLI. It owns a running engine (the
// configured plugins and the store) and the sessions it made live, and it
// is the only public package of runtime/: the engine room (session, store,
// compaction, engine, pluginhost, host, transfer, search, provenance,
// retention, metrics and the servers) lives under runtime/internal.
//
// Each operation is written once here: create, resume if not live, append
// at an expected seq, append a group, flush on request, release, compact,
// fork, the derived views, delete and hold, and the operator's commands.
// A door only translates its wire format into these calls and their
// results back.
package service
