package service

import (
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/claudecode"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/codex"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/pi"
)

// builtinDialects returns the dialects ImportSourceRequest.From names, in
// the order --from auto prefers them on a tie. A new dialect joins here.
func builtinDialects() []foreign.Dialect {
	return append([]foreign.Dialect{claudecode.New(), codex.New(), pi.New()}, taggedDialects()...)
}
