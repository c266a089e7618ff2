package service

import "github.com/seed-e5e476df/logbook/runtime/internal/foreign"

// WithDialects makes im know ds besides the built-in dialects (tests only).
func (im *SourceImporter) WithDialects(ds ...foreign.Dialect) *SourceImporter {
	im.dialects = append(im.dialects, ds...)
	return im
}
