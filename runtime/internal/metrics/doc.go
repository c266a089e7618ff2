// Package metrics is logbook's Prometheus instrumentation: a Metrics owns
// its own prometheus.Registry (never the global default one) and every
// metric definition, all named logbook_*, and serves them in the
// Prometheus text format (Handler).
//
// The runtime does not import Prometheus. It reports through narrow hooks
// that cost nothing when unset: the store calls an observer (Appended,
// Flushed, WriteFailed), the server counts its error replies (Error) and
// wraps its HTTP handler (InstrumentHTTP). What the runtime already knows — live
// sessions, write-behind queues, plugin processes and their restarts — is
// read at scrape time (Watch), so it costs nothing between scrapes.
//
// An embedder that runs an engine without `logbook serve` builds a
// Metrics, passes it as the engine's store observer, calls Watch with the
// engine, and mounts Handler (or gathers Registry) where it likes.
//
// The metrics, their labels and meaning are listed in docs/operations.md
// ("Health and metrics").
package metrics
