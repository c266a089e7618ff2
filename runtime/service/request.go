package service

import "github.com/seed-e5e476df/logbook/runtime/internal/providerview"

// Request returns the request a model would be sent right after the last
// event, in format (provider.RequestFormats): {header, context, messages}
// for logbook, else the provider's body, which is what `logbook request
// --format F` prints for the session now. omitted lists, one line each
// naming the seq, the call and the rule, what a provider format left out
// because no provider accepts it where it stands (a lenient or old log,
// or a replace that shadowed one side of a call and its result;
// docs/providers.md, Omissions); body and omitted describe the same
// state. Another format is USAGE; a provider format without a
// request/header in the log is REQUEST_HEADER_MISSING; calls still
// waiting for their results (a step open) are TOOL_CALLS_PENDING, Meta
// "callIds" naming them and Seq the assistant message that announced them.
func (s *Session) Request(format string) (body []byte, omitted []string, err error) {
	return rendered(providerview.Request(format, s.s))
}

// FormatMessages renders the session's derived messages in format
// (provider.MessageFormats), as `logbook messages --format F` prints them,
// with what a provider format left out, as Request does. Another format
// is USAGE; a provider format with calls still waiting for their results
// is TOOL_CALLS_PENDING (docs/providers.md).
func (s *Session) FormatMessages(format string) (body []byte, omitted []string, err error) {
	return rendered(providerview.Messages(format, s.s))
}

// rendered splits a rendering into its body and its omissions, said.
func rendered(r providerview.Rendering, err error) ([]byte, []string, error) {
	if err != nil {
		return nil, nil, err
	}
	var omitted []string
	for _, o := range r.Omitted {
		omitted = append(omitted, o.String())
	}
	return r.Body, omitted, nil
}
