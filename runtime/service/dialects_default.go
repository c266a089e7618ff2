//go:build !logbook_testdialect

package service

import "github.com/seed-e5e476df/logbook/runtime/internal/foreign"

// taggedDialects are the dialects only a test build adds (build tag
// logbook_testdialect); none here.
func taggedDialects() []foreign.Dialect { return nil }
