package service

import "github.com/seed-e5e476df/logbook/runtime/internal/host"

// Request returns the request a model would be sent right after the
// session's last event, in format (provider.RequestFormats): logbook's
// {header, context, messages}, or the provider's body. A provider format
// with no request header in the log is REQUEST_HEADER_MISSING; another
// format is USAGE. It is what every door answers (the /v1 request route,
// Connect's Request, `logbook request`).
func (s *Session) Request(format string) ([]byte, error) { return host.Request(format, s.s) }
