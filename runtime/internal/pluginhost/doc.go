// Package pluginhost launches and supervises logbook plugins as go-plugin
// subprocesses (docs/architecture.md): bundled plugins re-exec the logbook binary as
// `logbook plugin <name>`, third-party plugins run a configured command,
// optionally checked against a SHA-256 (go-plugin SecureConfig). AutoMTLS is
// on unless a test turns it off.
//
// A Plugin hands out kind adapters that stay valid across restarts: when the
// process dies (exit or an Unavailable call) the host restarts it with
// exponential backoff, checks its identity, configures it again and swaps the
// new connection in; calls in between fail with PLUGIN_UNAVAILABLE, which the
// store treats as retryable and answers with its recovery (docs/plugins.md).
// On Linux every plugin gets a parent-death signal, so a kill -9 of the host
// leaves no plugin behind.
package pluginhost
