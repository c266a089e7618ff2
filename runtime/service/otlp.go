package service

import (
	"context"
	"fmt"

	"github.com/seed-e5e476df/logbook/runtime/internal/otlp"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/envelope"
)

// OTLPOptions say what ExportOTLP puts in the spans beyond their tree.
type OTLPOptions struct {
	// Content adds message content (docs/import.md, "Traces out:
	// OpenTelemetry"): the messages of every model call as a span event of
	// its chat span, the arguments and result of every tool call. Default
	// false: no message text leaves the log.
	Content bool
}

// ExportOTLP renders the stored session id as OpenTelemetry traces: one
// OTLP/JSON ExportTraceServiceRequest following the GenAI semantic
// conventions (semconv v1.41.0), whose trace and span ids derive from the
// session id and seqs, so two exports of the same log are identical. It
// reads the primary backend as OpenStored does (an invalid id is
// SESSION_ID_INVALID, a missing session SESSION_NOT_FOUND) and returns the
// stored log's torn tail, which it leaves out, for the caller to report.
func (s *Service) ExportOTLP(ctx context.Context, id string, o OTLPOptions) ([]byte, sdk.Torn, error) {
	l, err := s.OpenStored(ctx, id)
	if err != nil {
		return nil, sdk.Torn{}, err
	}
	defer l.Close()
	b := otlp.NewBuilder(id, otlp.Options{Content: o.Content})
	spans := otlp.ResourceSpans(nil)
	scope := spans.ScopeSpans[0]
	var seq int64
	if err := l.Read(ctx, 0, l.Len(), func(envs [][]byte) error {
		for _, env := range envs {
			p, err := envelope.Split("export", env)
			if err != nil {
				return fmt.Errorf("session %s seq %d: %w", id, seq, err)
			}
			scope.Spans = append(scope.Spans, b.Add(otlp.Event{Seq: p.Seq, Time: p.Time, Type: p.Type, Data: p.Data})...)
			seq++
		}
		return nil
	}); err != nil {
		return nil, sdk.Torn{}, err
	}
	scope.Spans = append(scope.Spans, b.Finish()...)
	out, err := otlp.JSON(otlp.Request(spans))
	if err != nil {
		return nil, sdk.Torn{}, fmt.Errorf("session %s: rendering OTLP/JSON: %w", id, err)
	}
	return out, l.Torn(), nil
}
