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

// FormatMessages renders the session's derived messages in format
// (provider.MessageFormats), as `logbook messages --format F` prints them.
// Another format is USAGE; a provider format with calls still waiting for
// their results is TOOL_CALLS_PENDING (docs/providers.md).
func (s *Session) FormatMessages(format string) ([]byte, error) {
	return providerview.Messages(format, s.s)
}

// Omitted lists what the provider formats leave out of the session's
// messages because no provider accepts it where it stands (a lenient or
// old log, or a replace that shadowed one side of a call and its result),
// one line each naming the seq, the call and the rule
// (docs/providers.md, Omissions); nil when every call pairs with its
// result.
func (s *Session) Omitted() ([]string, error) {
	om, err := providerview.Omitted(s.s)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(om))
	for i, o := range om {
		out[i] = o.String()
	}
	return out, nil
}
