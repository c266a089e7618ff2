//go:build !race

package pluginrpc_test

const raceEnabled = false
