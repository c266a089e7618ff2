package service

import "github.com/seed-e5e476df/logbook/runtime/internal/providerview"

// Request returns the request a model would be sent right after the last
// event, in format (provider.RequestFormats): {header, context, messages}
// for logbook, else the provider's body, which is what `logbook request
// --format F` prints for the session now. Another format is USAGE; a
// provider format without a request/header in the log is
// REQUEST_HEADER_MISSING; calls still waiting for their results (a step
// open) are TOOL_CALLS_PENDING, Meta "callIds" naming them and Seq the
// assistant message that announced them (docs/providers.md).
func (s *Session) Request(format string) ([]byte, error) {
	return providerview.Request(format, s.s)
}
