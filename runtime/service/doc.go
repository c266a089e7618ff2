// Package service is logbook's session service: the embedder's package
// logbook and the logbook CLI call it, and it starts the servers of
// `logbook serve`. It owns a running engine (the configured plugins and
// the store) and its host, the one table of the sessions made live, and
// it is the only public package of runtime/: the engine room (session,
// store, compaction, engine, pluginhost, host, transfer, search,
// provenance, retention, metrics and the servers) lives under
// runtime/internal.
//
// Each session operation is written once, in the engine room's host:
// create, resume if not live, append at an expected seq, append a group,
// flush on request, the report of a partial failure (the events appended
// and the first one's seq), release, the idle release, compact, fork, the
// derived views, delete and hold. This package gives them their public
// types for package logbook and the CLI, and adds the operator's
// commands. The servers it starts (the /v1 JSON API and the Connect
// service) sit beneath it in runtime/internal and serve the same host: a
// session one of their requests makes live is live in the service, and
// their idle release is what the service's Flush and Release report as
// released for idleness. Each door only translates its wire format into
// the host's calls and their results back.
package service
