package service

import "github.com/seed-e5e476df/logbook/runtime/internal/foreign"

// builtinDialects returns the dialects ImportSourceRequest.From names, in
// the order --from auto prefers them on a tie.
//
// INTEGRATION POINT: the three dialects join here, as
//
//	claudecode.New(), codex.New(), pi.New(),
//
// from runtime/internal/foreign/{claudecode,codex,pi}.
func builtinDialects() []foreign.Dialect {
	return append([]foreign.Dialect{
		// claudecode.New(), codex.New(), pi.New(),
	}, taggedDialects()...)
}
