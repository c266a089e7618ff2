//go:build race

package pluginrpc_test

// raceEnabled builds the test plugin with -race too, so it reuses the
// instrumented packages already in the build cache.
const raceEnabled = true
