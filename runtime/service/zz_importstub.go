package service

// TEMPORARY: core's pinned import API (h/core), so the mirror compiles
// before h/core merges. Deleted at the merge.

import (
	"context"
	"time"
)

type ImportSourceRequest struct {
	From              string
	Paths             []string
	As                string
	CompleteLinesOnly bool
}

type DamagedLine struct {
	File   string
	Line   int
	Reason string
}

type ImportSummary struct {
	Files        int
	Sessions     []string
	Events       int64
	DamagedLines []DamagedLine
}

type SourceImporter struct{ s *Service }

func (s *Service) NewSourceImporter() *SourceImporter { return &SourceImporter{s: s} }

func (im *SourceImporter) Import(ctx context.Context, r ImportSourceRequest) (ImportSummary, error) {
	return ImportSummary{}, nil
}

func (im *SourceImporter) ReleaseIdle(ctx context.Context, idle time.Duration) (int, error) {
	return 0, nil
}

func (im *SourceImporter) Close(ctx context.Context) error { return nil }
