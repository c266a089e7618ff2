// Package service is logbook's session service: the embedder's package
// logbook and the logbook CLI call it, and the /v1 JSON API and the
// Connect service of `logbook serve` share its implementation. It owns a running engine (the
// configured plugins and the store) and the sessions it made live, and it
// is the only public package of runtime/: the engine room (session, store,
// compaction, engine, pluginhost, host, transfer, search, provenance,
// retention, metrics and the servers) lives under runtime/internal.
//
// Each session operation is written once: create, resume if not live,
// append at an expected seq, append a group, flush on request, the report
// of a partial failure (the events appended and the first one's seq),
// release, compact, fork, the derived views, delete and hold. Their one
// implementation is the engine room's host, beneath this package, which
// the servers' /v1 and Connect handlers call directly (the servers are
// started from here, so they cannot import this package); this package
// gives the same operations their public types for package logbook and
// the CLI, and adds the operator's commands. A door only translates its
// wire format into these calls and their results back.
package service
