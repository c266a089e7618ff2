//go:build logbook_testdialect

package service

import (
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/foreigntest"
)

// taggedDialects adds foreigntest's "test-lines" dialect to a binary built
// with the tag logbook_testdialect, so tests can run a real `logbook import`
// process before the real dialects are linked in.
func taggedDialects() []foreign.Dialect { return []foreign.Dialect{foreigntest.Lines()} }
